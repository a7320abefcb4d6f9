import { stringify } from 'csv-stringify';
import { Command, Option } from 'commander';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { sealAuditChain, verifyAuditChain } from '../../domain/audit/ledger';
import { allAuditEvents, ledgerHead, type AuditEventView, type AuditFilter } from '../../domain/audit/trail';
import { signedPayload } from '../../domain/gate/reviews/reads';
import { findOrganization } from '../../domain/identity/organizations';
import { AppError } from '../../domain/kit/errors';
import { utcInstant } from '../../domain/kit/fields';
import { emit, withDatabase } from '../output';

/** The CSV's columns: the event's fields, its actor split in two, its data as JSON. */
const csvColumns = ['id', 'created_at', 'type', 'actor_type', 'actor_id', 'actor_name', 'operation', 'decision', 'workflow_id', 'review_id', 'resource_type', 'resource_id', 'data'];

const csvRow = (event: AuditEventView) => ({
  ...event,
  actor_type: event.actor.type,
  actor_id: event.actor.id,
  actor_name: event.actor.name,
  data: JSON.stringify(event.data),
});

interface ExportOptions {
  org: string;
  format: 'jsonl' | 'csv';
  since?: string;
  until?: string;
  type?: string;
}

function instant(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const parsed = utcInstant.safeParse(value);
  if (!parsed.success) {
    throw new AppError('validation_failed', `--${name} "${value}" is not an instant such as 2026-11-01T00:00:00Z`, { fields: [{ field: name, message: 'not RFC 3339' }] });
  }
  return parsed.data;
}

/** Writes a line, waiting when the reader is slower (a pipe to gzip, a slow disk). */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/**
 * A verdict signed with a passkey carries, beside the event (not in its chained content), the payload the person
 * signed, and for a batch signed at once the list of reviews and digests the signature covered: the verifier
 * recomputes their digests and checks the signature over them.
 */
async function withSignedPayload<Event extends AuditEventView>(
  db: Queryable,
  orgId: string,
  event: Event,
): Promise<Event & { signed_payload?: unknown; signed_batch?: unknown }> {
  if (!event.data.passkey || typeof event.data.payload_digest !== 'string') return event;
  const payload = await signedPayload(db, orgId, event.data.payload_digest);
  const batch = typeof event.data.batch_digest === 'string' ? await signedPayload(db, orgId, event.data.batch_digest) : null;
  return { ...event, ...(payload ? { signed_payload: payload } : {}), ...(batch ? { signed_batch: batch } : {}) };
}

/**
 * The jsonl export: the events the filter keeps, oldest first, one JSON object a line, then the ledger's head. Each
 * line goes to `write`, which may wait (for a slow reader): memory stays bounded whatever the trail's size.
 */
export async function writeJsonlExport(db: Queryable, orgId: string, filter: AuditFilter, write: (line: string) => Promise<void>): Promise<void> {
  // The head first, so the copy ends at a head that covers every event it holds (later ones are not in it).
  const head = await ledgerHead(db, orgId);
  for await (const event of allAuditEvents(db, orgId, filter)) {
    // Events sealed after the head was read would run past it: the copy stops at the head.
    const line = event.seq !== null && event.seq > head.seq ? { ...event, seq: null, chain: null } : event;
    await write(`${JSON.stringify(await withSignedPayload(db, orgId, line))}\n`);
  }
  // The last line: the ledger's head, for docs/verify-audit-export.mjs (and to keep elsewhere).
  await write(`${JSON.stringify({ ledger_head: head })}\n`);
}

export function auditCommands(): Command {
  const audit = new Command('audit').description("The organization's audit trail");

  audit
    .command('export')
    .description('Write the audit trail to stdout, oldest first: one JSON object per line (jsonl, ending with the ledger\'s head), or CSV')
    .requiredOption('--org <slug>', 'the organization')
    .addOption(new Option('--format <format>', 'jsonl or csv').choices(['jsonl', 'csv']).default('jsonl'))
    .option('--since <instant>', 'events at or after this instant (RFC 3339)')
    .option('--until <instant>', 'events before this instant (RFC 3339)')
    .option('--type <type>', 'events of this type only (gate.decided, review.approved, …)')
    .action(
      withDatabase(async (db, options: ExportOptions) => {
        const filter = { since: instant('since', options.since), until: instant('until', options.until), type: z.string().max(100).optional().parse(options.type) };
        const org = await findOrganization(db, options.org);
        if (options.format === 'jsonl') {
          await writeJsonlExport(db, org.id, filter, write);
          return;
        }
        const events = allAuditEvents(db, org.id, filter);
        // Piped, so the writer waits for a slow reader; stdout itself stays open (Node never ends it by a pipe).
        const csv = stringify({ header: true, columns: csvColumns });
        csv.pipe(process.stdout);
        for await (const event of events) {
          if (!csv.write(csvRow(event))) await once(csv, 'drain');
        }
        csv.end();
        await finished(csv);
      }),
    );

  audit
    .command('verify')
    .description("Walk the organization's audit ledger and name every event changed, removed, or inserted behind the service; exit 1 if any")
    .requiredOption('--org <slug>', 'the organization')
    .option('--seal', 'chain the events waiting to be sealed first (the worker does so every minute)')
    .action(
      withDatabase(async (db, options: { org: string; seal?: boolean }, command) => {
        const org = await findOrganization(db, options.org);
        if (options.seal) await sealAuditChain(db, org.id);
        const report = await verifyAuditChain(db, org.id);
        const summary = `${report.sealed} events in the chain${report.head ? `, head ${report.head.seq} ${report.head.chain}` : ''}; ${report.unsealed} waiting to be sealed`;
        emit(
          command,
          { ok: report.problems.length === 0, ...report },
          report.problems.length === 0
            ? [`The audit ledger of ${org.slug} verifies: ${summary}.`]
            : [`The audit ledger of ${org.slug} does NOT verify (${report.problems.length} problems; ${summary}):`, ...report.problems.map((problem) => `  ${problem.kind}: ${problem.message}`)],
        );
        if (report.problems.length > 0) process.exitCode = 1;
      }),
    );
  return audit;
}
