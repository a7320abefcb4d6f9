import { Command, InvalidArgumentError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { AppError } from '../../domain/kit/errors';
import { importData, type ImportCounts } from '../../data-import/import';
import type { ImportProblem } from '../../data-import/import-checks';
import { importKinds } from '../../data-import/import-schema';
import { findOrganization, type Organization } from '../../domain/identity/organizations';
import { seedOrganization, seedSizeNames, type SeedSize } from '../../data-import/seed';
import { emit, table, wantsJson, withDatabase } from '../output';

const seedNumber = (value: string) => {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('takes a whole number, e.g. 42');
  return Number(value);
};

async function readDataFile(path: string): Promise<unknown> {
  let source: string;
  try {
    source = await readFile(path, 'utf8');
  } catch (error) {
    throw new AppError('not_found', `cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new AppError('invalid_json', `${path} is not valid JSON: ${(error as Error).message}`);
  }
}

function countLines(org: Organization, counts: ImportCounts, seconds: number): string[] {
  const rows = table([['KIND', 'RECORDS'], ...importKinds.map((kind) => [kind.replace('_', ' '), String(counts[kind])])]);
  return [...rows.map((row) => `  ${row}`), '', `Written to ${org.slug} (${org.name}) in one transaction, ${seconds.toFixed(1)} s.`];
}

/** A refused file: every problem, on stderr for people and as details under --json. */
function refuse(command: Command, error: AppError): void {
  if (wantsJson(command)) {
    process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } }, null, 2)}\n`);
  } else {
    process.stderr.write(`gatehouse: ${error.message}\n`);
  }
  process.exitCode = 1;
}

const isFileProblem = (error: unknown): error is AppError & { details: { fields: ImportProblem[] } } =>
  error instanceof AppError && error.code === 'validation_failed' && Array.isArray(error.details?.fields);

export function dataCommands(): Command[] {
  const importCommand = new Command('import')
    .description('Import a JSON data file into an organization: the whole file is checked, then written in one transaction, or nothing is')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--file <path>', 'the data file (see db/examples/import-example.json)')
    .action(
      withDatabase(async (db, options: { org: string; file: string }, command) => {
        const org = await findOrganization(db, options.org);
        const file = await readDataFile(options.file);
        const started = performance.now();
        let counts: ImportCounts;
        try {
          counts = await importData(db, org.id, file);
        } catch (error) {
          if (!isFileProblem(error)) throw error;
          return refuse(command, error);
        }
        const seconds = Math.round(performance.now() - started) / 1000;
        emit(command, { organization: org.slug, counts, seconds }, ['Imported:', ...countLines(org, counts, seconds)]);
      }),
    );

  const seed = new Command('seed')
    .description('Fill an organization with realistic demo data (the same for the same --seed), written through the import')
    .requiredOption('--org <slug>', 'the organization')
    .addOption(new Option('--size <size>', 'small (hundreds of records) or large (10,000 customers, 50,000 tasks, …)').choices(seedSizeNames).default('small'))
    .option('--seed <n>', 'the seed; the same seed gives the same data', seedNumber, 1)
    .action(
      withDatabase(async (db, options: { org: string; size: SeedSize; seed: number }, command) => {
        const org = await findOrganization(db, options.org);
        const started = performance.now();
        const counts = await seedOrganization(db, org, { size: options.size, seed: options.seed });
        const seconds = Math.round(performance.now() - started) / 1000;
        emit(command, { organization: org.slug, size: options.size, seed: options.seed, counts, seconds }, [
          `Seeded ${options.size} demo data (seed ${options.seed}):`,
          ...countLines(org, counts, seconds),
        ]);
      }),
    );
  return [importCommand, seed];
}
