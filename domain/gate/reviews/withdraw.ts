import type { Queryable } from '../../../db/database';
import { recordAudit, type ActorRef } from '../../audit/events';
import { stillPendingSql } from './state';

// Withdrawing a held write: its review leaves the queue as `withdrawn`, which nobody can approve or deny, and its
// workflow ends without applying anything when it next reads the review (at once when told: see the callers).
// Revoking a key withdraws its held writes; later, an agent cancelling its own write and a withdrawn access
// request are withdrawals too, with reasons of their own.

/** Why a review was withdrawn: the key that made the write was revoked, or the connection of the app that made it ended. */
export const withdrawalReasons = ['key_revoked', 'connection_ended'] as const;
export type WithdrawalReason = (typeof withdrawalReasons)[number];

/** A review withdrawn in the caller's transaction: the workflow that holds its write is to be told once it commits. */
export interface WithdrawnReview {
  id: string;
  workflowId: string;
}

/**
 * Withdraws one review, if it still waits, in the caller's transaction: its status, who withdrew it and why, and
 * the `review.withdrawn` audit event (which webhooks relay). A review decided, expired or withdrawn already is left
 * as it is (undefined): of a verdict and a withdrawal racing, whichever locks the review first settles it.
 */
export async function withdrawReview(
  tx: Queryable,
  review: { orgId: string; id: string },
  by: ActorRef,
  reason: WithdrawalReason,
): Promise<WithdrawnReview | undefined> {
  const { rows } = await tx.query(
    `UPDATE reviews r SET status = 'withdrawn', decided_at = now(), withdrawn_reason = $3, withdrawn_by_type = $4, withdrawn_by_id = $5
     FROM gate_decisions d
     WHERE r.org_id = $1 AND r.id = $2 AND ${stillPendingSql('r')} AND d.id = r.decision_id
     RETURNING r.workflow_id, d.api_key_id`,
    [review.orgId, review.id, reason, by.type, by.id],
  );
  const withdrawn = rows[0];
  if (!withdrawn) return undefined;
  await recordAudit(tx, review.orgId, {
    type: 'review.withdrawn',
    actor: by,
    workflowId: withdrawn.workflow_id,
    reviewId: review.id,
    data: { reason, api_key_id: withdrawn.api_key_id },
  });
  return { id: review.id, workflowId: withdrawn.workflow_id };
}

/**
 * Withdraws every review still waiting on a write of this key, in the caller's transaction (the one that revokes
 * the key, so that no moment exists where the key is revoked and its writes still approvable). Reviews past their
 * deadline are left to expire, as they read already. Answers those withdrawn, oldest first.
 */
export async function withdrawReviewsOfKey(
  tx: Queryable,
  key: { orgId: string; id: string },
  by: ActorRef,
  reason: WithdrawalReason,
): Promise<WithdrawnReview[]> {
  // Locked in one order, as a verdict locks its one review: a revocation never deadlocks with verdicts.
  const { rows } = await tx.query(
    `SELECT r.id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id
     WHERE r.org_id = $1 AND ${stillPendingSql('r')} AND d.api_key_id = $2
     ORDER BY r.id FOR UPDATE OF r`,
    [key.orgId, key.id],
  );
  const withdrawn: WithdrawnReview[] = [];
  for (const row of rows) {
    const one = await withdrawReview(tx, { orgId: key.orgId, id: row.id }, by, reason);
    if (one) withdrawn.push(one);
  }
  return withdrawn;
}
