import type { Database } from '../../db/database';
import { AppError } from '../kit/errors';
import { agentCallsIn, withoutJit } from './call-counts';
import { callOutcomes, outcomeCategorySql, type CallOutcomeCategory } from './call-log';

/** How far back the activity looks: the last 24 hours by the hour, or the last 7 days by the day. */
export const activityRanges = ['24h', '7d'] as const;
export type ActivityRange = (typeof activityRanges)[number];

/** One hour or one day of the agents' calls, by how they ended. */
export type ActivityBucket = { start: string; calls: number } & Record<CallOutcomeCategory, number>;

export interface CallActivity {
  range: ActivityRange;
  bucket: 'hour' | 'day';
  /** The organization's time zone, in which days (and hours, in zones off by half an hour) begin. */
  timezone: string;
  buckets: ActivityBucket[];
}

/**
 * The buckets, oldest first, each the instant it begins and the next one's. Hours step by an hour of real time (a
 * day of 23 or 25 hours still has 24 buckets of an hour); days are the zone's calendar days, whatever their length.
 */
// Integer series, whose length the planner knows (a series of timestamps it guesses at a thousand rows, and plans
// the whole query as if it were that costly).
const bucketsSql: Record<ActivityRange, string> = {
  '24h': `SELECT date_trunc('hour', now(), $2) - back * interval '1 hour' AS start, date_trunc('hour', now(), $2) - (back - 1) * interval '1 hour' AS next
          FROM generate_series(0, 23) AS back`,
  '7d': `SELECT ((now() AT TIME ZONE $2)::date - back)::timestamp AT TIME ZONE $2 AS start, ((now() AT TIME ZONE $2)::date - back + 1)::timestamp AT TIME ZONE $2 AS next
         FROM generate_series(0, 6) AS back`,
};

/**
 * The agents' calls (REST and MCP) of the organization over the range, counted by bucket and by how they ended,
 * every bucket present (zero when quiet); one key's when `api_key_id` is given (404 when the organization has no such key). Each bucket
 * sums the call log's hours (agentCallsIn): a few rows an hour, however many calls the range holds.
 */
export async function callActivity(
  db: Database,
  organization: { id: string; timezone: string },
  input: { range: ActivityRange; api_key_id?: string },
): Promise<CallActivity> {
  if (input.api_key_id !== undefined) {
    // Another organization's key is not one: the same answer as for a key never issued.
    const { rowCount } = await db.query('SELECT 1 FROM api_keys WHERE id = $1 AND org_id = $2', [input.api_key_id, organization.id]);
    if (!rowCount) throw new AppError('not_found', `The organization has no key ${input.api_key_id}`);
  }
  const counted = agentCallsIn({ orgId: '$1', apiKeyId: input.api_key_id === undefined ? null : '$3', from: 'b.start', to: 'b.next' });
  const byBucket = `SELECT b.start,
            (SELECT COALESCE(jsonb_object_agg(counted.category, counted.n), '{}')
             FROM (SELECT ${outcomeCategorySql} AS category, sum(c.calls)::int AS n FROM (${counted}) AS c GROUP BY 1) AS counted) AS counts
     FROM (${bucketsSql[input.range]}) AS b
     ORDER BY b.start`;
  const { rows } = await withoutJit(db, (tx) => tx.query(byBucket, [organization.id, organization.timezone, ...(input.api_key_id === undefined ? [] : [input.api_key_id])]));
  return {
    range: input.range,
    bucket: input.range === '24h' ? 'hour' : 'day',
    timezone: organization.timezone,
    buckets: rows.map((row) => {
      const counts = row.counts as Partial<Record<CallOutcomeCategory, number>>;
      const byOutcome = Object.fromEntries(callOutcomes.map((outcome) => [outcome, counts[outcome] ?? 0])) as Record<CallOutcomeCategory, number>;
      return { start: (row.start as Date).toISOString(), calls: callOutcomes.reduce((sum, outcome) => sum + byOutcome[outcome], 0), ...byOutcome };
    }),
  };
}
