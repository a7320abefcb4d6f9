import type { Queryable } from '../../db/database';
import { stillPendingSql } from '../gate/reviews';

/** What people watch change live: the review queue, the agents' calls, and what agents remember. */
export const liveTopics = ['reviews', 'calls', 'memories'] as const;
export type LiveTopic = (typeof liveTopics)[number];

/**
 * A short fingerprint of each topic of an organization: it changes whenever something a page shows changes, so
 * a watcher that polls it learns what to fetch again. Works the same with one api process or several, on a
 * server or the embedded database. People's own console calls do not count as the agents' calls.
 */
export async function changeStamps(db: Queryable, orgId: string): Promise<Record<LiveTopic, string>> {
  const { rows } = await db.query(
    `SELECT
       (SELECT concat_ws('|', max(r.id), max(greatest(r.decided_at, r.applied_at)), count(*) FILTER (WHERE ${stillPendingSql('r')}),
                         count(*) FILTER (WHERE r.failure IS NOT NULL))
        FROM reviews r WHERE r.org_id = $1) AS reviews,
       (SELECT max(id) FROM call_log WHERE org_id = $1 AND interface <> 'console') AS calls,
       (SELECT concat_ws('|', count(*), max(updated_at)) FROM agent_memories WHERE org_id = $1) AS memories`,
    [orgId],
  );
  const row = rows[0];
  return { reviews: row.reviews ?? '', calls: row.calls ?? '', memories: row.memories ?? '' };
}
