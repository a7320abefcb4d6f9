import type { Queryable } from '../../../db/database';
import { recordAudit, type VerdictProvenance } from '../../audit/events';

// An approval soon after someone else reset the approver's password: the reset's link may have reached that someone
// (an owner or admin) rather than the person, who then approved as them. Each such approval is recorded in the audit
// trail; the first after a reset is handed to the worker (an outbox row in this transaction, relayed like the
// webhooks' events: runtime/outbox-relay.ts), which emails the organization's owners (domain/notify/owner-alerts.ts).

/** How long after a reset an approval is told to the owners. */
export const approvalAfterResetWindowHours = 24;

/** The outbox event that asks the worker to tell the owners (not a webhook event type: no endpoint may ask for it). */
export const approvalAfterResetAlert = 'owners.approval_after_reset';

export async function noteApprovalAfterReset(
  tx: Queryable,
  approval: { orgId: string; reviewId: string; workflowId: string; userId: string; via: VerdictProvenance['via'] },
): Promise<void> {
  const { rows } = await tx.query<{ reset_by: string; reset_at: Date }>(
    `SELECT password_reset_by AS reset_by, password_reset_at AS reset_at FROM users
     WHERE id = $1 AND password_reset_by IS NOT NULL AND password_reset_by <> id
       AND password_reset_at > now() - make_interval(hours => $2)`,
    [approval.userId, approvalAfterResetWindowHours],
  );
  const reset = rows[0];
  if (!reset) return;
  const data = { reset_by: reset.reset_by, reset_at: reset.reset_at.toISOString(), via: approval.via };
  await recordAudit(tx, approval.orgId, {
    type: 'person.approved_after_reset',
    actor: { type: 'user', id: approval.userId },
    workflowId: approval.workflowId,
    reviewId: approval.reviewId,
    resourceId: approval.userId,
    data,
  });
  // One alert a reset: its id is made of the person and the reset, so that later approvals within the day (recorded
  // above) do not email the owners again.
  await tx.query(
    `INSERT INTO webhook_events (id, org_id, type, data)
     VALUES ('evt_' || lower(substr(md5($1::text || $2::text), 1, 26)), $3, $4, $5)
     ON CONFLICT (id) DO NOTHING`,
    [approval.userId, data.reset_at, approval.orgId, approvalAfterResetAlert, { ...data, person_id: approval.userId, review_id: approval.reviewId }],
  );
}
