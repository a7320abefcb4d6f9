import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../db/database';
import { seconds, type Checks, type Figures } from './scenario';
import type { LoadCounts, WriteRecord } from './writers';

/** What the database holds of the writes sent: each title should be there exactly once. */
export interface Ledger {
  /** Titles sent that have no row. */
  lost: string[];
  /** Titles with more than one row. */
  duplicated: string[];
  /** Each title's row id (of those with exactly one row). */
  ids: Map<string, string>;
}

async function rowsByTitle(db: Queryable, orgId: string, titles: string[]): Promise<Map<string, { n: number; id: string }>> {
  const { rows } = await db.query<{ title: string; n: number; id: string }>(
    'SELECT title, count(*)::int AS n, min(id) AS id FROM tasks WHERE org_id = $1 AND title = ANY($2) GROUP BY title',
    [orgId, titles],
  );
  return new Map(rows.map((row) => [row.title, { n: row.n, id: row.id }]));
}

/**
 * Counts each title's rows once every title has one, or after `waitMs`: a write whose writer gave up may
 * still be applied by its workflow, and is lost only if it never is.
 */
export async function settleAndCount(db: Queryable, orgId: string, titles: string[], waitMs = 30_000): Promise<Ledger> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const rows = await rowsByTitle(db, orgId, titles);
    const lost = titles.filter((title) => !rows.has(title));
    if (lost.length === 0 || Date.now() > deadline) {
      return {
        lost,
        duplicated: titles.filter((title) => (rows.get(title)?.n ?? 0) > 1),
        ids: new Map([...rows].filter(([, row]) => row.n === 1).map(([title, row]) => [title, row.id])),
      };
    }
    await sleep(500);
  }
}

/** The writers' figures and the ledger's, in the order the report shows them. */
export function loadFigures(counts: LoadCounts, ledger: Ledger, records: WriteRecord[]): Figures {
  return [
    ['attempted', counts.attempted],
    ['applied', counts.applied],
    ['lost', ledger.lost.length],
    ['duplicated', ledger.duplicated.length],
    ['unresolved', counts.unresolved],
    ['retries', counts.retries],
    ['503s', counts.answers503],
    ['other 5xx', counts.answersOther5xx],
    ['connection errors', counts.connectionErrors],
    ...(counts.proxyErrors ? ([['proxy 5xx', counts.proxyErrors]] as Figures) : []),
    ['timeouts', counts.timeouts],
    ['replayed', counts.replayed],
    ['retried then applied', records.filter((record) => record.end === 'applied' && record.attempts > 1).length],
    ['slowest write', seconds(Math.max(0, ...records.map((record) => record.ms)))],
  ];
}

/** What every load must end with: each write answered, each applied exactly once, no 500 on the way. */
export function checkLoad(checks: Checks, counts: LoadCounts, ledger: Ledger, records: WriteRecord[]): void {
  checks.atLeast('writes attempted', counts.attempted, 1);
  checks.equal('lost writes', ledger.lost.length, 0);
  checks.equal('duplicated writes', ledger.duplicated.length, 0);
  checks.equal('writes without a definitive answer', counts.unresolved, 0);
  checks.equal('writes refused (not 201)', counts.refused + counts.denied + counts.held, 0);
  // A retry with the first attempt's Idempotency-Key gets the first attempt's record, whichever api answers it.
  const otherRecord = records.filter((record) => record.recordId && ledger.ids.has(record.title) && ledger.ids.get(record.title) !== record.recordId);
  checks.equal('answers naming another record than the one written', otherRecord.length, 0);
  // A fault is answered 503 (retry with the same key) or ridden over; a 500 means the api gave up on what it should retry.
  checks.equal('5xx answers other than 503', counts.answersOther5xx, 0);
  const examples = (titles: string[]) =>
    titles
      .slice(0, 3)
      .map((title) => `${title} (last answer ${records.find((record) => record.title === title)?.lastAnswer ?? '?'})`)
      .join(', ');
  if (ledger.lost.length) checks.failures.push(`lost, e.g. ${examples(ledger.lost)}`);
  if (ledger.duplicated.length) checks.failures.push(`duplicated, e.g. ${examples(ledger.duplicated)}`);
  const unanswered = records.filter((record) => record.end !== 'applied').map((record) => record.title);
  if (unanswered.length) checks.failures.push(`not answered 201, e.g. ${examples(unanswered)}`);
}
