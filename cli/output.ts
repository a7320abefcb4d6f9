import { formatEncryptionKeys, keyIdShape, newEncryptionKey } from '../runtime/encryption-keys';
import { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../runtime/config';
import { openDatabase } from '../runtime/database';
import type { Database } from '../db/database';
import { AppError } from '../domain/kit/errors';

export function wantsJson(command: Command): boolean {
  return Boolean(command.optsWithGlobals().json);
}

/** Prints a result: the JSON for scripts with --json, else the lines for people. */
export function emit(command: Command, json: unknown, lines: string | string[]): void {
  if (wantsJson(command)) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else process.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
}

export function fail(command: Command, error: unknown): never {
  const code = error instanceof AppError ? error.code : error instanceof ConfigError ? 'invalid_config' : 'error';
  const message = error instanceof Error ? error.message : String(error);
  if (wantsJson(command)) process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`);
  else process.stderr.write(`gatehouse: ${message}\n`);
  process.exit(1);
}

/** Runs a command that needs the database, and closes it however the command ends. */
export function withDatabase<Options>(work: (db: Database, options: Options, command: Command, config: Config) => Promise<void>) {
  return async (options: Options, command: Command) => {
    let db: Database | undefined;
    try {
      const config = loadConfig();
      db = (await openDatabase(config)).db;
      await work(db, options, command, config);
    } catch (error) {
      await db?.close().catch(() => {});
      fail(command, error);
    }
    await db.close();
  };
}

export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
}

/**
 * `<name> [--id <id>]`: prints a new key (id:base64) for a key list (PAYLOAD_ENCRYPTION_KEYS,
 * SECRETS_ENCRYPTION_KEYS), its id defaulting to today's date; `idMeans` says what the id is written into.
 */
export function keyCommand(name: string, description: string, idMeans: string): Command {
  return new Command(name)
    .description(description)
    .option('--id <id>', `the key's id, ${idMeans}`, `key-${new Date().toISOString().slice(0, 10)}`)
    .action((options: { id: string }, command: Command) => {
      try {
        if (!keyIdShape.test(options.id)) throw new Error('--id takes letters, digits, -, _ and . (at most 64)');
        const key = formatEncryptionKeys([newEncryptionKey(options.id)]);
        emit(command, { id: options.id, key }, key);
      } catch (error) {
        fail(command, error);
      }
    });
}
