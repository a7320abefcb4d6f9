import type { Database, Queryable } from '../../db/database';

/**
 * The agents' calls (REST and MCP) of an organization that ended in [from, to), as rows of `outcome`, `status` and
 * `calls` to be summed: the whole hours of UTC in the range from call_log_hours (kept exact by triggers on call_log,
 * migration 033), the parts of an hour at either end from call_log itself. In a zone whose hours and days begin on
 * UTC's hours those parts are empty ranges, and a range of a day or a week sums a few rows an hour whatever the
 * number of calls; in a zone off by half an hour, each end reads at most an hour of calls.
 *
 * The arguments are SQL expressions: the organization's id, the key's id (or null for every agent's calls, keys
 * and people's tokens), and the range's instants (`to` may be 'infinity').
 */
export function agentCallsIn(range: { orgId: string; apiKeyId: string | null; from: string; to: string }): string {
  const { orgId, apiKeyId, from, to } = range;
  const firstWholeHour = `(date_trunc('hour', (${from}) - interval '1 microsecond', 'UTC') + interval '1 hour')`;
  const lastHourEnd = `date_trunc('hour', ${to}, 'UTC')`;
  const agent = apiKeyId === null ? `'*'` : apiKeyId;
  const raw = (start: string, end: string) =>
    `SELECT c.outcome, c.status, 1 AS calls FROM call_log c
     WHERE c.org_id = ${orgId} AND c.interface IN ('rest', 'mcp')${apiKeyId === null ? '' : ` AND c.api_key_id = ${apiKeyId}`}
       AND c.created_at >= ${start} AND c.created_at < ${end}`;
  return `SELECT c.outcome, c.status, c.calls FROM call_log_hours c
          WHERE c.org_id = ${orgId} AND c.agent = ${agent} AND c.hour >= ${firstWholeHour} AND c.hour <= (${to}) - interval '1 hour'
          UNION ALL ${raw(from, `LEAST(${firstWholeHour}, ${to})`)}
          UNION ALL ${raw(`GREATEST(${lastHourEnd}, ${firstWholeHour})`, to)}`;
}

/**
 * Runs a read of agentCallsIn's ranges with PostgreSQL's JIT compilation off. The planner cannot know that the
 * ends of the ranges are empty or short (their bounds are computed in the query), so it plans for thousands of
 * call log rows a range, and a query of 24 ranges then passes the cost at which PostgreSQL compiles it: measured
 * at 2M rows, a quarter of a second of compiling for 3 ms of work.
 */
export function withoutJit<T>(db: Database, read: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query('SET LOCAL jit = off');
    return read(tx);
  });
}
