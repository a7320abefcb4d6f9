import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { placeOf } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';
import { checkOutboundUrl, type OutboundRules } from './outbound';
import { personalNotifications, slackWebhookUrlColumn, type PersonalNotification } from './notifications';

/** How an organization's people are told of held writes: when a review escalates, and its Slack channel. */
export interface ReviewNotificationSettings {
  /** How long a review waits before the next tier is told; null: it never escalates. */
  reviewEscalationMs: number | null;
  /** A Slack-compatible incoming webhook told of each held write and escalation; null: none. */
  slackWebhookUrl: string | null;
}

export async function findReviewNotificationSettings(db: Queryable, secrets: SecretBox, orgId: string): Promise<ReviewNotificationSettings> {
  const { rows } = await db.query<{ review_escalation_ms: number | null; slack_webhook_url: string | null }>(
    'SELECT review_escalation_ms::float8 AS review_escalation_ms, slack_webhook_url FROM organizations WHERE id = $1',
    [orgId],
  );
  if (!rows[0]) throw new AppError('not_found', `no organization ${orgId}`);
  const stored = rows[0].slack_webhook_url;
  return { reviewEscalationMs: rows[0].review_escalation_ms, slackWebhookUrl: stored === null ? null : secrets.open(stored, placeOf(slackWebhookUrlColumn, orgId)) };
}

export { parseWait, shownWait } from '../kit/durations';

/** The longest escalation wait: a review may wait 30 days at most. */
const longestEscalationMs = 30 * 24 * 60 * 60 * 1000;

export async function updateReviewNotificationSettings(
  db: Database,
  secrets: SecretBox,
  orgId: string,
  change: Partial<ReviewNotificationSettings>,
  policy: OutboundRules,
  by: ActorRef,
): Promise<ReviewNotificationSettings> {
  const escalation = change.reviewEscalationMs;
  if (escalation !== undefined && escalation !== null && !(escalation >= 1000 && escalation <= longestEscalationMs)) {
    const message = 'must be between 1 second and 30 days, or null to never escalate';
    throw new AppError('validation_failed', `review_escalation ${message}`, { fields: [{ field: 'review_escalation', message }] });
  }
  const slack = change.slackWebhookUrl ? await checkOutboundUrl(change.slackWebhookUrl, policy, 'slack_webhook_url') : change.slackWebhookUrl;
  return db.transaction(async (tx) => {
    await tx.query(
      `UPDATE organizations SET
         review_escalation_ms = CASE WHEN $2 THEN $3::bigint ELSE review_escalation_ms END,
         slack_webhook_url = CASE WHEN $4 THEN $5 ELSE slack_webhook_url END,
         updated_at = now()
       WHERE id = $1`,
      [orgId, escalation !== undefined, escalation ?? null, slack !== undefined, slack ? secrets.seal(slack, placeOf(slackWebhookUrlColumn, orgId)) : null],
    );
    const data: Record<string, unknown> = {};
    if (escalation !== undefined) data.review_escalation_ms = escalation;
    if (slack !== undefined) data.slack_webhook = slack === null ? null : 'set';
    await recordAudit(tx, orgId, { type: 'organization.updated', actor: by, data });
    return findReviewNotificationSettings(tx, secrets, orgId);
  });
}

/** The email notifications a person gets. */
export async function findPersonalNotifications(db: Queryable, userId: string): Promise<PersonalNotification[]> {
  const { rows } = await db.query<{ notifications: PersonalNotification[] }>('SELECT notifications FROM users WHERE id = $1', [userId]);
  if (!rows[0]) throw new AppError('not_found', `no person ${userId}`);
  return rows[0].notifications;
}

export async function updatePersonalNotifications(db: Queryable, userId: string, wanted: string[]): Promise<PersonalNotification[]> {
  const unknown = wanted.filter((kind) => !(kind in personalNotifications));
  if (unknown.length) {
    const message = `unknown notifications: ${unknown.join(', ')}`;
    throw new AppError('validation_failed', message, { fields: [{ field: 'email', message }] });
  }
  const { rows } = await db.query<{ notifications: PersonalNotification[] }>(
    'UPDATE users SET notifications = $2, updated_at = now() WHERE id = $1 RETURNING notifications',
    [userId, [...new Set(wanted)]],
  );
  if (!rows[0]) throw new AppError('not_found', `no person ${userId}`);
  return rows[0].notifications;
}
