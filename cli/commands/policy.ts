import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { findOrganization } from '../../domain/identity/organizations';
import { currentPolicySet, listPolicyVersions, setPolicySet } from '../../domain/policy-sets/versions';
import { compileDraft, parseSince, shadowReport, simulatePolicy, startShadow, stopShadow, suggestRules, type ChangedDecision } from '../../domain/policy-sets/lab';
import { cliActor } from '../../domain/audit/events';
import { AppError } from '../../domain/kit/errors';
import { findGatedWrite } from '../../domain/resources';
import { emit, table, withDatabase } from '../output';

const resourceTypeOf = (operation: string) => findGatedWrite(operation)?.resourceType;

/** Changed decisions as a table: when, what, which key, from what to what, and why. */
function changeLines(changes: ChangedDecision[]): string[] {
  if (changes.length === 0) return [];
  return table([
    ['DECISION', 'AT', 'OPERATION', 'KEY', 'WAS', 'WOULD BE', 'RULES'],
    ...changes.map((change) => [change.decision_id, change.at.slice(0, 19), change.operation, change.api_key_label, change.was, change.would_be, change.policy_ids.join(',') || '—']),
  ]);
}

const countLine = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([change, n]) => `${change} ${n}`)
    .join(', ') || 'none';

export function policyCommands(): Command {
  const policy = new Command('policy').description("An organization's Cedar policies, which decide every gated write");

  policy
    .command('set')
    .description('Replace the policy set with a Cedar file; a set that does not parse is refused and the old one stays')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--file <path>', 'a .cedar file')
    .action(
      withDatabase(async (db, options: { org: string; file: string }, command) => {
        const org = await findOrganization(db, options.org);
        const source = await readFile(options.file, 'utf8');
        const saved = await setPolicySet(db, org.id, source, `cli:${options.file}`);
        emit(command, saved, `Policy set version ${saved.version} of ${org.slug} is in force`);
      }),
    );

  policy
    .command('show')
    .description('Print the policy set in force')
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const current = await currentPolicySet(db, org.id);
        emit(command, current, [`// ${org.slug}: policy set version ${current.version} (${current.createdAt})`, current.source.trimEnd()]);
      }),
    );
  policy
    .command('versions')
    .description('List the saved versions of the policy set, newest first')
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const versions = await listPolicyVersions(db, org.id, 50);
        emit(command, versions, table([['VERSION', 'SAVED', 'BY'], ...versions.map((v) => [String(v.version), v.createdAt.slice(0, 19), v.createdBy])]));
      }),
    );

  policy
    .command('simulate')
    .description('Replay the decisions recorded since --since under a draft and list every decision that would change; changes nothing')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--file <path>', 'the draft, a .cedar file')
    .option('--since <window>', 'how far back: 7d, 12h, or an RFC 3339 instant', '7d')
    .option('--limit <n>', 'how many changed decisions to list', '100')
    .action(
      withDatabase(async (db, options: { org: string; file: string; since: string; limit: string }, command) => {
        const org = await findOrganization(db, options.org);
        const since = parseSince(options.since);
        if (!since) throw new AppError('validation_failed', `--since: "${options.since}" is not a window such as 7d or 12h, or an RFC 3339 instant`);
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new AppError('validation_failed', '--limit takes a whole number of at least 1');
        const draft = compileDraft(await readFile(options.file, 'utf8'), '--file');
        const result = await simulatePolicy(db, org.id, draft, { since, limit, resourceTypeOf });
        emit(command, result, [
          `${result.evaluated} decisions of ${org.slug} since ${since.toISOString()} replayed under ${options.file}${result.truncated ? ' (the newest only)' : ''}`,
          `would change: ${countLine(result.changed)}`,
          ...changeLines(result.changes),
        ]);
      }),
    );

  const shadow = policy.command('shadow').description('A draft that decides every write beside the live policy, without effect');
  shadow
    .command('start')
    .description('Run a draft in shadow from now on (replacing one that runs)')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--file <path>', 'the draft, a .cedar file')
    .action(
      withDatabase(async (db, options: { org: string; file: string }, command) => {
        const org = await findOrganization(db, options.org);
        await startShadow(db, org.id, await readFile(options.file, 'utf8'), cliActor);
        emit(command, await shadowReport(db, org.id, 100), `${options.file} runs in shadow beside the live policy of ${org.slug}`);
      }),
    );
  shadow
    .command('show')
    .description('The draft in shadow, and where it disagreed with the live policy')
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const report = await shadowReport(db, org.id, 100);
        emit(
          command,
          report,
          report
            ? [`shadow since ${report.started_at}: ${report.decided} writes decided, disagreed: ${countLine(report.disagreed)}`, ...changeLines(report.disagreements)]
            : `no draft runs in shadow for ${org.slug}`,
        );
      }),
    );
  shadow
    .command('stop')
    .description('Stop the draft in shadow (what it recorded stays)')
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const stopped = await stopShadow(db, org.id, cliActor);
        emit(command, { stopped }, stopped ? `the shadow of ${org.slug} stopped` : `no draft ran in shadow for ${org.slug}`);
      }),
    );

  policy
    .command('suggest')
    .description('Allow rules suggested by the review history: writes people approved every time')
    .requiredOption('--org <slug>', 'the organization')
    .option('--min-approved <n>', 'how many approvals, none denied, make a suggestion', '10')
    .option('--days <n>', 'how far back the history is read', '90')
    .action(
      withDatabase(async (db, options: { org: string; minApproved: string; days: string }, command) => {
        const org = await findOrganization(db, options.org);
        const minApproved = Number(options.minApproved);
        const days = Number(options.days);
        if (!Number.isInteger(minApproved) || minApproved < 2) throw new AppError('validation_failed', '--min-approved takes a whole number of at least 2');
        if (!Number.isInteger(days) || days < 1 || days > 365) throw new AppError('validation_failed', '--days takes a whole number from 1 to 365');
        const suggestions = await suggestRules(db, org.id, { minApproved, days });
        emit(
          command,
          suggestions,
          suggestions.length
            ? suggestions.flatMap((s) => [`// ${s.evidence.approved} approved, 0 denied (held by ${s.held_by.join(', ')})`, s.rule, ''])
            : `no suggestions for ${org.slug}: no kind of held write was approved ${minApproved} times without a deny in ${days} days`,
        );
      }),
    );
  return policy;
}
