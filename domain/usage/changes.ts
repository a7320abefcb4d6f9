import type { Queryable } from '../../db/database';
import { stillPendingSql } from '../gate/reviews/state';

/** What people watch change live: the review queue, the agents' calls, and what agents remember. */
export const liveTopics = ['reviews', 'calls', 'memories'] as const;
export type LiveTopic = (typeof liveTopics)[number];

/**
 * A short fingerprint of each topic of an organization: it changes whenever something a page shows changes, so
 * a watcher that polls it learns what to fetch again. Works the same with one api process or several, on a
 * server or the embedded database. People's own console calls do not count as the agents' calls.
 *
 * Counts, not latest timestamps: a transaction that started earlier but commits later would not move a maximum.
 * What changes on a review that stays pending moves no count: the approvals given so far (of a quorum) are
 * counted apart, and its edit and the tier it was escalated to are summed as hashes. Calls are read from the
 * newest end of their index only (the latest, and how many in the last minute).
 */
export async function changeStamps(db: Queryable, orgId: string): Promise<Record<LiveTopic, string>> {
  const { rows } = await db.query(
    `SELECT
       concat_ws('|',
         (SELECT concat_ws('|', count(*), count(r.decided_at), count(r.applied_at), count(r.failure), count(*) FILTER (WHERE ${stillPendingSql('r')}),
                 sum(hashtext(concat_ws('|', r.edit_id, r.escalated_to))))
          FROM reviews r WHERE r.org_id = $1),
         (SELECT count(*) FROM review_approvals a JOIN reviews p ON p.id = a.review_id WHERE p.org_id = $1 AND p.status = 'pending')) AS reviews,
       concat_ws('|',
         (SELECT id FROM call_log WHERE org_id = $1 AND interface <> 'console' ORDER BY created_at DESC, id DESC LIMIT 1),
         (SELECT count(*) FROM call_log WHERE org_id = $1 AND interface <> 'console' AND created_at > now() - interval '1 minute')) AS calls,
       (SELECT concat_ws('|', count(*), sum(version), max(id)) FROM agent_memories WHERE org_id = $1) AS memories`,
    [orgId],
  );
  const row = rows[0];
  return { reviews: row.reviews ?? '', calls: row.calls ?? '', memories: row.memories ?? '' };
}
