import type { Queryable } from '../../../db/database';
import { stillPendingSql } from './state';

/** How full an organization's review queue is, as seen by the transaction that holds the queue's lock. */
export interface ReviewQueue {
  pending: number;
  cap: number;
  plan: string;
}

/**
 * Takes the organization's review-queue lock for the rest of the transaction, then counts its pending reviews:
 * two writes held at once cannot both take the last place. Call it inside the transaction that opens the review.
 */
export async function lockReviewQueue(tx: Queryable, orgId: string): Promise<ReviewQueue> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('gatehouse.review_queue:' || $1::text, 0))`, [orgId]);
  // A statement of its own, after the lock: its snapshot sees every review committed before the lock was ours.
  const { rows } = await tx.query(
    `SELECT p.name AS plan, p.pending_review_cap AS cap,
            (SELECT count(*)::int FROM reviews r WHERE r.org_id = o.id AND ${stillPendingSql('r')}) AS pending
     FROM organizations o JOIN plans p ON p.name = o.plan WHERE o.id = $1`,
    [orgId],
  );
  return { pending: rows[0].pending, cap: rows[0].cap, plan: rows[0].plan };
}
