import type { Database } from '../../db/database';
import { agentInWords, labelVerifiedSql, unverifiedNameExplained } from '../kit/agent-names';
import { approvalAfterResetAlert, approvalAfterResetWindowHours } from '../gate/reviews/approval-after-reset';
import { reviewWebUrl } from '../gate/links';
import { sendAll } from './notifications';
import type { NotifySettings } from './notifications';

// What the organization's owners are told of, whatever they chose to be emailed about: signs that someone may be
// acting as another person. Each alert is an outbox row written in the transaction of what it tells (see
// domain/gate/reviews/approval-after-reset.ts), relayed to the worker (runtime/outbox-relay.ts), which runs the
// alertOwners workflow, whose activity sends it here.

/** The outbox event types that are owners' alerts: the relay starts an alertOwners workflow for each. */
export const ownerAlertTypes: readonly string[] = [approvalAfterResetAlert];

/** What an alert's sending came to: how many owners were emailed, or what could not be sent (with `tolerateFailures`). */
export interface AlertOutcome {
  told: number;
  unsent?: string;
}

interface ApprovalAfterReset {
  person_email: string;
  resetter_email: string | null;
  reset_at: Date;
  review_id: string;
  operation: string;
  agent: string;
  agent_verified: boolean;
  org_id: string;
  org_name: string;
}

/**
 * Emails the organization's active owners an alert from the outbox. Nothing when the event is gone (pruned) or not
 * an alert. A send that fails throws, for the activity's retry, unless `tolerateFailures`: then the answer says so.
 */
export async function alertOwners(db: Database, eventId: string, settings: NotifySettings, { tolerateFailures = false } = {}): Promise<AlertOutcome> {
  const { rows } = await db.query<ApprovalAfterReset>(
    `SELECT p.email AS person_email, r.email AS resetter_email, (ev.data->>'reset_at')::timestamptz AS reset_at, rv.id AS review_id,
            d.operation, k.label AS agent, ${labelVerifiedSql('k')} AS agent_verified, o.id AS org_id, o.name AS org_name
     FROM webhook_events ev JOIN organizations o ON o.id = ev.org_id
     JOIN users p ON p.id = ev.data->>'person_id' AND p.org_id = ev.org_id
     LEFT JOIN users r ON r.id = ev.data->>'reset_by' AND r.org_id = ev.org_id
     JOIN reviews rv ON rv.id = ev.data->>'review_id' AND rv.org_id = ev.org_id
     JOIN gate_decisions d ON d.id = rv.decision_id JOIN api_keys k ON k.id = d.api_key_id
     WHERE ev.id = $1 AND ev.type = $2`,
    [eventId, approvalAfterResetAlert],
  );
  const alert = rows[0];
  if (!alert) return { told: 0 };
  const { rows: owners } = await db.query<{ email: string }>(
    "SELECT email FROM users WHERE org_id = $1 AND role = 'owner' AND deactivated_at IS NULL ORDER BY email",
    [alert.org_id],
  );
  const resetter = alert.resetter_email ?? 'someone no longer in the organization';
  const subject = `${alert.person_email} approved a write within a day of a password reset`;
  const text = [
    `${alert.person_email} approved the ${alert.operation} of ${agentInWords(alert.agent, alert.agent_verified)} (review ${alert.review_id}) less than ${approvalAfterResetWindowHours} hours after ${resetter} reset their password (${alert.reset_at.toISOString()}).`,
    ...(alert.agent_verified ? [] : [unverifiedNameExplained(alert.agent)]),
    '',
    `If the link to set the new password reached ${resetter} rather than ${alert.person_email}, the approval may not be theirs. Ask them, and look at the review and the audit trail (events person.password_reset and person.approved_after_reset):`,
    reviewWebUrl(settings.publicUrl, alert.review_id),
    `${settings.publicUrl}/audit`,
    '',
    `Further approvals by ${alert.person_email} within the day are recorded in the audit trail, not emailed again.`,
    '',
    `— Gatehouse, for ${alert.org_name}`,
  ].join('\n');
  try {
    await sendAll(settings.mailer, owners.map((owner) => ({ to: owner.email, subject, text })));
  } catch (error) {
    if (!tolerateFailures) throw error;
    return { told: 0, unsent: (error as Error).message };
  }
  return { told: settings.mailer ? owners.length : 0 };
}
