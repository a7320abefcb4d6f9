import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import { changesetItemLines, changesetModeInWords, heldItemsReason, heldWriteInWords } from '../gate/changesets/in-words';
import { changesetOperation } from '../gate/changesets/schema';
import { reviewWebUrl } from '../gate/links';
import { getReview } from '../gate/reviews/reads';
import { reviewStatusSql, stillPendingSql } from '../gate/reviews/state';
import { placeOf, type SealedColumn } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';
import { agentInWords, labelVerifiedSql, unverifiedNameExplained } from '../kit/agent-names';
import { decisionLinkUrl, issueDecisionLinks, type DecisionLinkPair } from './decision-links';
import type { Email, Mailer } from './mailer';
import { postOutbound, type OutboundRules } from './outbound';
import { slackReviewMessage } from './slack';

/** What a person may be told by email; each person picks theirs (all by default). */
export const personalNotifications = {
  'review.held': 'A write was held for review and waits for a reviewer',
  'review.escalated': 'A review waited too long and was escalated to you',
  'webhook.disabled': 'A webhook endpoint kept failing and was switched off (owners)',
} as const;
export type PersonalNotification = keyof typeof personalNotifications;

/** Where the organization's Slack webhook URL is kept, sealed: whoever holds it can post to the channel. */
export const slackWebhookUrlColumn: SealedColumn = { table: 'organizations', column: 'slack_webhook_url', rowKey: 'id' };

/** Who is told of a held write, in turn: reviewers at once, then admins, then owners, each after the organization's wait. */
export const reviewTiers = [
  { name: 'reviewers', role: 'reviewer' },
  { name: 'admins', role: 'admin' },
  { name: 'owners', role: 'owner' },
] as const;

export interface NotifySettings {
  /** Where email goes out; none: no email is sent (the Slack message and the review page still are). */
  mailer?: Mailer;
  publicUrl: string;
  policy: OutboundRules;
}

interface Recipient {
  id: string;
  email: string;
  notifications: string[];
}

/**
 * The people of a role who can act now: active, not linked to an inactive team member, and not out of office
 * (a calendar event of kind out_of_office of their team member covering `now`).
 */
export async function availablePeople(db: Queryable, orgId: string, role: string, now: Date): Promise<Recipient[]> {
  const { rows } = await db.query<Recipient>(
    `SELECT u.id, u.email, u.notifications FROM users u
     LEFT JOIN team_members m ON m.id = u.team_member_id
     WHERE u.org_id = $1 AND u.role = $2 AND u.deactivated_at IS NULL AND (m.id IS NULL OR m.active)
       AND NOT EXISTS (
         SELECT 1 FROM events e
         WHERE e.org_id = u.org_id AND e.kind = 'out_of_office' AND u.team_member_id = ANY (e.attendee_ids)
           AND e.starts_at <= $3 AND e.ends_at > $3)
     ORDER BY u.email`,
    [orgId, role, now],
  );
  return rows;
}

/** The organization's active owners, available or not: whom a held write falls to when nobody else can take it. */
async function activeOwners(db: Queryable, orgId: string): Promise<Recipient[]> {
  const { rows } = await db.query<Recipient>(
    "SELECT id, email, notifications FROM users WHERE org_id = $1 AND role = 'owner' AND deactivated_at IS NULL ORDER BY email",
    [orgId],
  );
  return rows;
}

/** Where a review's supervision stands after a step: whom it told, and when to go on. */
export interface SupervisionStep {
  status: string;
  /** The tier told in this step (null when nobody was: the review was decided, or nobody is available). */
  told: string | null;
  recipients: number;
  /** The tier to tell next, if the review still waits then. */
  nextTier: number | null;
  /** How long to wait before telling it (null: the organization does not escalate). */
  escalateAfterMs: number | null;
  /** What could not be sent (with `tolerateFailures`): the email or Slack error. */
  unsent?: string;
}

interface ReviewFacts {
  id: string;
  org_id: string;
  workflow_id: string;
  status: string;
  created_at: Date;
  expires_at: Date;
  operation: string;
  reason: string;
  agent: string;
  agent_verified: boolean;
  org_name: string;
  review_escalation_ms: number | null;
  slack_webhook_url: string | null;
}

/**
 * Tells the first tier from `fromTier` that has anyone available of a held write (tier 0: it was just held; a
 * later tier: the review escalated, which the review records and the audit trail keeps), by email to those who
 * want it and by the organization's Slack webhook. Nothing when the review no longer waits.
 */
export async function superviseReviewStep(
  db: Database,
  secrets: SecretBox,
  reviewId: string,
  fromTier: number,
  settings: NotifySettings,
  { now = new Date(), tolerateFailures = false }: { now?: Date; tolerateFailures?: boolean } = {},
): Promise<SupervisionStep> {
  const { rows } = await db.query<ReviewFacts>(
    `SELECT r.id, r.org_id, r.workflow_id, ${reviewStatusSql('r')} AS status, r.created_at, r.expires_at, d.operation, d.reason, k.label AS agent,
            ${labelVerifiedSql('k')} AS agent_verified, o.name AS org_name,
            o.review_escalation_ms::float8 AS review_escalation_ms, o.slack_webhook_url
     FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id JOIN api_keys k ON k.id = d.api_key_id
     JOIN organizations o ON o.id = r.org_id
     WHERE r.id = $1`,
    [reviewId],
  );
  const review = rows[0];
  const over = { told: null, recipients: 0, nextTier: null, escalateAfterMs: null };
  if (!review || review.status !== 'pending') return { status: review?.status ?? 'gone', ...over };

  let tier = Math.min(fromTier, reviewTiers.length - 1);
  let people = await availablePeople(db, review.org_id, reviewTiers[tier]!.role, now);
  while (!people.length && tier < reviewTiers.length - 1) {
    tier += 1;
    people = await availablePeople(db, review.org_id, reviewTiers[tier]!.role, now);
  }
  // Nobody available anywhere (every one away, or marked so): the active owners are told all the same, so that a
  // held write never waits unseen.
  if (!people.length) people = await activeOwners(db, review.org_id);
  const tierName = reviewTiers[tier]!.name;
  const escalation = fromTier > 0;
  if (escalation && people.length) {
    // The review and the audit trail together: a retry after a crash finds both written or neither.
    await db.transaction(async (tx) => {
      const { rows: marked } = await tx.query(
        `UPDATE reviews r SET escalated_to = $2, escalated_at = $3 WHERE r.id = $1 AND ${stillPendingSql('r')} AND r.escalated_to IS DISTINCT FROM $2 RETURNING r.id`,
        [reviewId, tierName, now],
      );
      if (!marked[0]) return;
      await recordAudit(tx, review.org_id, {
        type: 'review.escalated',
        actor: { type: 'system', id: 'escalation' },
        workflowId: review.workflow_id,
        reviewId,
        data: { tier: tierName, notified: people.map((person) => person.id) },
      });
    });
  }

  const link = reviewWebUrl(settings.publicUrl, reviewId);
  const waitedMinutes = Math.max(1, Math.round((now.getTime() - review.created_at.getTime()) / 60_000));
  // A changeset is told as what it holds (how many writes, which, each item's decision), not as changesets.submit.
  const changeset = review.operation === changesetOperation ? (await getReview(db, review.org_id, reviewId)).changeset : null;
  const held = { operation: review.operation, changeset };
  // A connected app's name is its own word: said so wherever it is named (domain/kit/agent-names.ts).
  const agent = agentInWords(review.agent, review.agent_verified);
  const headline = escalation
    ? `Escalated to ${tierName}: ${agent}'s ${heldWriteInWords(held, { parenthesized: true })} has waited ${waitedMinutes} min for a review`
    : `Review needed: ${agent} wants to run ${heldWriteInWords(held, { article: true })}`;
  const reason = changeset ? heldItemsReason(changeset) : review.reason;
  const whole = changeset ? ` all ${changeset.items.length}` : ' it';
  // Each person's email carries links of their own: decided from it, the verdict is theirs. A retry of this step
  // sends new links, and those of the email before stay valid until used, decided or expired.
  const textFor = (decide: DecisionLinkPair | undefined) =>
    [
      headline,
      ...(review.agent_verified ? [] : ['', unverifiedNameExplained(review.agent)]),
      '',
      `Why it was held: ${reason}`,
      ...(changeset ? ['', `The ${changeset.items.length} writes, in order:`, ...changesetItemLines(changeset), changesetModeInWords(changeset), ''] : []),
      ...(decide
        ? [
            `Approve${whole}: ${decisionLinkUrl(settings.publicUrl, decide.approve)}`,
            `Deny${whole}: ${decisionLinkUrl(settings.publicUrl, decide.deny)}`,
            `Each link opens a page with the ${changeset ? 'writes' : 'write'}; nothing is decided until you confirm there. The links are yours alone: do not forward this email.`,
            `Or open the review in the console: ${link}`,
          ]
        : [`Approve or deny it: ${link}`]),
      `It expires ${review.expires_at.toISOString()} if nobody decides.`,
      '',
      `— Gatehouse, for ${review.org_name}`,
    ].join('\n');
  const wanted: PersonalNotification = escalation ? 'review.escalated' : 'review.held';
  const emailed = settings.mailer ? people.filter((person) => person.notifications.includes(wanted)) : [];
  const decisionLinks = await issueDecisionLinks(db, review.org_id, reviewId, emailed.map((person) => person.id));
  let unsent: string | undefined;
  try {
    await sendAll(
      settings.mailer,
      emailed.map((person) => ({ to: person.email, subject: headline, text: textFor(decisionLinks.get(person.id)) })),
    );
    if (review.slack_webhook_url) {
      const message = JSON.stringify(await slackReviewMessage(db, { id: reviewId, orgId: review.org_id, headline, reason, link }));
      const slackWebhookUrl = secrets.open(review.slack_webhook_url, placeOf(slackWebhookUrlColumn, review.org_id));
      const answer = await postOutbound(slackWebhookUrl, message, {}, { policy: settings.policy });
      if (answer.status < 200 || answer.status > 299) throw new Error(`the Slack webhook answered HTTP ${answer.status}`);
    }
  } catch (error) {
    if (!tolerateFailures) throw error;
    unsent = (error as Error).message;
  }
  const nextTier = tier < reviewTiers.length - 1 ? tier + 1 : null;
  return {
    status: 'pending',
    told: people.length ? tierName : null,
    recipients: people.length,
    nextTier,
    escalateAfterMs: review.review_escalation_ms,
    ...(unsent ? { unsent } : {}),
  };
}

/** Tells the organization's owners that an endpoint was switched off after its deliveries kept failing. */
export async function tellOwnersEndpointDisabled(db: Queryable, orgId: string, endpoint: { id: string; url: string }, settings: NotifySettings): Promise<number> {
  const owners = (await availablePeople(db, orgId, 'owner', new Date())).filter((person) => person.notifications.includes('webhook.disabled'));
  const subject = `Webhook switched off: ${endpoint.url}`;
  const text = [
    `Gatehouse switched off the webhook endpoint ${endpoint.url} (${endpoint.id}): its deliveries kept failing every attempt.`,
    '',
    `See its delivery log and switch it back on when the receiver is fixed: ${settings.publicUrl}/settings/advanced/webhooks`,
  ].join('\n');
  await sendAll(settings.mailer, owners.map((person) => ({ to: person.email, subject, text })));
  return owners.length;
}

/** Sends each; a failure fails the whole (the caller's retry sends again, so a person may get one twice). */
export async function sendAll(mailer: Mailer | undefined, emails: Email[]): Promise<void> {
  if (!mailer) return;
  const failures = (await Promise.allSettled(emails.map((email) => mailer.send(email)))).filter((result) => result.status === 'rejected');
  if (failures.length) throw new Error(`${failures.length} of ${emails.length} emails not sent: ${(failures[0] as PromiseRejectedResult).reason}`);
}
