import { z } from 'zod';
import type { Database, Queryable } from '../../db/database';
import type { QueryResultRow } from 'pg';
import { recordAudit } from './audit';
import { AppError } from '../kit/errors';
import { instantField, recordId, text } from '../kit/fields';
import { decodeCursor, pageInput, toPage, type Page } from '../kit/pagination';

export const reviewStatuses = ['pending', 'approved', 'denied', 'expired'] as const;
export type ReviewStatus = (typeof reviewStatuses)[number];

/** Why a write a person approved could not be applied. */
const applyFailure = z.object({
  code: z.string().describe('An error code as in error answers, e.g. conflict, not_found, validation_failed'),
  message: z.string().describe('What went wrong, for a person to read'),
});

export const reviewSchema = z
  .object({
    id: recordId('review', 'rev', 'use it as {id} in /v1/reviews/{id}; a person approves or denies it at /v1/reviews/{id}/approve or /deny'),
    status: z
      .enum(reviewStatuses)
      .describe('pending (waiting for a person), approved (the write ran or is running), denied (nothing was written), expired (nobody decided in time; nothing was written)'),
    operation: z.string().describe('The held write, e.g. tasks.create'),
    proposed: z.record(z.string(), z.unknown()).describe('The write as it was submitted'),
    resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the write'),
    before: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('For updates and deletes: the record as it was when the policy decided (compare with resource); null for creates'),
    policy: z
      .object({
        decision_id: z.string().describe('The id of the policy decision that held the write (dec_…)'),
        reason: z.string().describe('Why the policy held the write'),
        policy_ids: z.array(z.string()).describe('The policies that held it'),
        policy_version: z.number().int().describe("The version of the organization's policy set that decided; it increases with every policy change"),
        errors: z.array(z.string()).describe('Policies that could not be evaluated for this write, with the reason'),
      })
      .describe("The policy's decision"),
    submitted_by: z
      .object({
        api_key_id: z.string().describe('The API key that submitted the write (key_…)'),
        api_key_label: z.string().describe("The key's label, as given when it was created"),
        interface: z.enum(['rest', 'mcp']).describe('rest or mcp'),
      })
      .describe('Which key submitted the write, and through which interface'),
    created_at: instantField('When the write was held for review'),
    expires_at: instantField('The deadline', 'after it the review expires and the write never runs'),
    escalation: z
      .object({
        to: z.string().describe('The tier told because the review waited too long: admins, then owners'),
        at: instantField('When it escalated'),
      })
      .nullable()
      .describe("Whether the review waited past the organization's escalation wait, and whom it was escalated to; null: not escalated"),
    edit: z
      .object({
        id: z.string().describe('The edit (edt_…); send it as seen_edit to approve this version'),
        fields: z.array(z.string()).describe("The fields whose values the reviewer changed from the agent's version"),
        by: z
          .object({ user_id: z.string().describe('The reviewer who edited (usr_…)'), email: z.string().describe("The reviewer's sign-in email") })
          .describe('The reviewer who edited the write'),
        at: instantField('When the reviewer edited the write'),
        input: z.record(z.string(), z.unknown()).describe('The write as the reviewer edited it: what runs on approval (proposed keeps the agent\'s version)'),
        resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the edited write'),
        decision: z
          .object({
            decision: z.enum(['allow', 'review']).describe("The policy's decision on the edited write"),
            reason: z.string().describe('Why'),
            policy_ids: z.array(z.string()).describe('The policies that decided'),
            policy_version: z.number().int().describe('The version of the policy set that decided'),
          })
          .describe("The policy's decision on the edited write, with the agent's key as the principal and the editor in the context"),
      })
      .nullable()
      .describe('A reviewer\'s edit of the held write, which is what runs once approved; null when nobody edited it'),
    approvals: z
      .object({
        required: z.number().int().describe('How many distinct people must approve before the write runs (the policy\'s @approvals; 1 by default)'),
        given: z
          .array(
            z.object({
              user_id: z.string().describe('The person who approved (usr_…)'),
              email: z.string().describe("The person's sign-in email"),
              at: instantField('When they approved'),
              comment: z.string().nullable().describe('Their comment; null when none'),
            }),
          )
          .describe('Who has approved so far, oldest first; one deny ends the review whatever the count'),
      })
      .describe('The approvals the write needs and has'),
    decided_at: instantField('When a person decided, or when the expiry was recorded', 'null while pending').nullable(),
    decided_by: z
      .object({
        user_id: z.string().describe('The id of the person who decided (usr_…)'),
        email: z.string().describe("The person's sign-in email"),
      })
      .nullable()
      .describe('The person who decided; null while pending and for expired reviews'),
    comment: z.string().nullable().describe("The person's comment; null when none"),
    applied_at: instantField('When the approved write ran', 'null until it has run').nullable(),
    result: z.unknown().describe('What the approved write produced (the created record, say); null until it ran'),
    failure: applyFailure.nullable().describe('Why an approved write could not be applied (it conflicts with the data now, say); null otherwise'),
    workflow_id: z.string().describe('The Temporal workflow that holds the write'),
  })
  .describe('A gated write held for a person to approve or deny');

export type Review = z.infer<typeof reviewSchema>;

export const listReviewsInput = z.strictObject({
  status: z.enum(reviewStatuses).optional().describe('Only reviews with this status'),
  api_key_id: text({ max: 100 }).optional().describe('Only writes submitted by this API key (key_…)'),
  operation: text({ max: 100 }).optional().describe('Only this operation, e.g. tasks.update'),
  ...pageInput,
});

export const decideReviewInput = z.strictObject({
  id: text({ max: 100 }).describe('The review id'),
  comment: text({ max: 2000 }).optional().describe('Why, for the record'),
});

/** An approval names the version it approves when a reviewer edited the write (the review's edit.id). */
export const approveReviewInput = decideReviewInput.extend({
  seen_edit: text({ max: 100 })
    .optional()
    .describe("The edit you saw (the review's edit.id) when a reviewer edited the write; leave it out to approve the agent's version. 409 when the review holds another version now"),
});

/**
 * A pending review past its deadline counts as expired, even before its workflow has recorded it. The rule in
 * SQL for the review table under `alias`, in its two forms: the filter of the reviews still waiting (which an
 * index on the status can serve), and the status a review reads as.
 */
export const stillPendingSql = (alias: string) => `(${alias}.status = 'pending' AND ${alias}.expires_at > now())`;
export const reviewStatusSql = (alias: string) => `CASE WHEN ${stillPendingSql(alias)} THEN 'pending' WHEN ${alias}.status = 'pending' THEN 'expired' ELSE ${alias}.status END`;

/** Reviews by the status they read as, across organizations (the metrics' gauge). */
export async function countReviewsByStatus(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query(`SELECT ${reviewStatusSql('r')} AS status, count(*)::int AS n FROM reviews r GROUP BY 1`);
  return Object.fromEntries(rows.map((row) => [row.status as string, row.n as number]));
}

const selectReview = `
  SELECT r.*, ${reviewStatusSql('r')} AS effective_status, d.id AS decision_id, d.operation, d.input, d.resource, d.context -> 'before' AS before, d.reason,
         d.policy_ids, d.policy_version, d.policy_errors, d.interface, d.api_key_id, k.label AS api_key_label,
         u.email AS decided_by_email,
         (SELECT coalesce(json_agg(json_build_object('user_id', a.user_id, 'email', au.email, 'at', a.approved_at, 'comment', a.comment) ORDER BY a.approved_at, a.user_id), '[]')
          FROM review_approvals a JOIN users au ON au.id = a.user_id WHERE a.review_id = r.id) AS approvals_given,
         e.id AS edit_id, e.fields AS edit_fields, e.edited_by AS edit_by, eu.email AS edit_by_email, e.created_at AS edit_at, e.input AS edit_input, e.resource AS edit_resource,
         e.decision AS edit_decision, e.reason AS edit_reason, e.policy_ids AS edit_policy_ids, e.policy_version AS edit_policy_version
  FROM reviews r
  LEFT JOIN review_edits e ON e.id = r.edit_id
  LEFT JOIN users eu ON eu.id = e.edited_by
  JOIN gate_decisions d ON d.id = r.decision_id
  JOIN api_keys k ON k.id = d.api_key_id
  LEFT JOIN users u ON u.id = r.decided_by`;

export async function listReviews(db: Queryable, orgId: string, input: z.infer<typeof listReviewsInput>): Promise<Page<Review>> {
  const after = decodeCursor(input.cursor);
  const { rows } = await db.query(
    `${selectReview}
     WHERE r.org_id = $1 AND ($2::text IS NULL OR ${reviewStatusSql('r')} = $2) AND ($3::text IS NULL OR r.id < $3)
       AND ($5::text IS NULL OR d.api_key_id = $5) AND ($6::text IS NULL OR d.operation = $6)
     ORDER BY r.id DESC LIMIT $4`,
    [orgId, input.status ?? null, after ?? null, input.limit + 1, input.api_key_id ?? null, input.operation ?? null],
  );
  return toPage(rows.map(reviewFromRow), input.limit);
}

export async function getReview(db: Queryable, orgId: string, reviewId: string): Promise<Review> {
  const { rows } = await db.query(`${selectReview} WHERE r.org_id = $1 AND r.id = $2`, [orgId, reviewId]);
  if (!rows[0]) throw new AppError('not_found', `review ${reviewId} was not found`);
  return reviewFromRow(rows[0]);
}

/** A review being decided, locked in the caller's transaction. */
export interface LockedReview {
  id: string;
  orgId: string;
  workflowId: string;
  operation: string;
  /** The agent's input, as the decision recorded it. */
  input: Record<string, unknown>;
  apiKeyId: string;
  approvalsRequired: number;
  /** The person who created the key that made the write (null: the CLI). */
  keyCreatedBy: string | null;
  selfApproval: boolean;
  /** The reviewer's edit the review holds now (its id and input), if one was made. */
  edit: { id: string; input: Record<string, unknown> } | null;
}

/**
 * Locks a review that is still pending, for a decision in this transaction; 404 when there is none, 409 when it
 * was decided (or expired) already. Of decisions racing, the first to lock it goes first.
 */
export async function lockPendingReview(tx: Queryable, orgId: string, reviewId: string): Promise<LockedReview> {
  const { rows } = await tx.query(
    `SELECT r.workflow_id, r.approvals_required, ${reviewStatusSql('r')} AS status, d.operation, d.input, d.api_key_id,
            k.created_by AS key_created_by, o.self_approval, r.edit_id, e.input AS edit_input
     FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id JOIN api_keys k ON k.id = d.api_key_id JOIN organizations o ON o.id = r.org_id
     LEFT JOIN review_edits e ON e.id = r.edit_id
     WHERE r.org_id = $1 AND r.id = $2 FOR UPDATE OF r`,
    [orgId, reviewId],
  );
  const row = rows[0];
  if (!row) throw new AppError('not_found', `review ${reviewId} was not found`);
  if (row.status !== 'pending') {
    throw new AppError('conflict', `review ${reviewId} is ${row.status} already; it can be decided only once, while pending`, { status: row.status });
  }
  return {
    id: reviewId,
    orgId,
    workflowId: row.workflow_id,
    operation: row.operation,
    input: row.input,
    apiKeyId: row.api_key_id,
    approvalsRequired: row.approvals_required,
    keyCreatedBy: row.key_created_by,
    selfApproval: row.self_approval,
    edit: row.edit_id ? { id: row.edit_id, input: row.edit_input } : null,
  };
}

/**
 * An approval counts for the version of the write the person saw: the agent's (`seenEditId` absent) or a
 * reviewer's edit (its id). Approving after someone else edited it, without having seen the edit, is refused.
 */
export function assertSawCurrentVersion(review: LockedReview, seenEditId: string | undefined): void {
  if ((review.edit?.id ?? undefined) === seenEditId) return;
  throw new AppError(
    'conflict',
    review.edit
      ? `review ${review.id} was edited (${review.edit.id}) since you read it; read it again and approve the write it holds now (send seen_edit "${review.edit.id}")`
      : `review ${review.id} holds the agent's version, not the edit ${seenEditId}; read it again`,
    { status: 'pending', edit_id: review.edit?.id ?? null },
  );
}

/** Unless the organization allows it, nobody approves (or edits and approves) a write made with a key they created. */
export function assertNotSelfApproval(review: LockedReview, userId: string): void {
  if (review.keyCreatedBy === userId && !review.selfApproval) {
    throw new AppError(
      'self_approval',
      `you created the API key that made this write, so you cannot approve it; another reviewer must (an owner or admin can allow self-approval in the organization's settings)`,
    );
  }
}

/**
 * One person's approval of a locked review: counted once per person; the review is approved once it has as many
 * as it needs (`required`, the review's own unless an edit set anew), else it stays pending.
 */
export async function approveIn(
  tx: Queryable,
  review: LockedReview,
  input: { userId: string; comment?: string },
  auditData: { edit_id?: string } = {},
): Promise<void> {
  const comment = input.comment ?? null;
  const added = await tx.query(`INSERT INTO review_approvals (review_id, user_id, org_id, comment) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
    review.id,
    input.userId,
    review.orgId,
    comment,
  ]);
  const required = review.approvalsRequired;
  if (!added.rowCount) {
    throw new AppError('conflict', `you have approved review ${review.id} already; it needs ${required} approvals from different people`, { status: 'pending' });
  }
  const approvers = (await tx.query('SELECT user_id FROM review_approvals WHERE review_id = $1 ORDER BY approved_at, user_id', [review.id])).rows.map(
    (row) => row.user_id as string,
  );
  const event = { actor: { type: 'user' as const, id: input.userId }, workflowId: review.workflowId, reviewId: review.id };
  if (approvers.length < required) {
    await recordAudit(tx, review.orgId, { ...event, type: 'review.approval_added', data: { comment, approvals: approvers.length, required, ...auditData } });
    return;
  }
  await settle(tx, { orgId: review.orgId, reviewId: review.id, userId: input.userId, comment: input.comment }, 'approved');
  await recordAudit(tx, review.orgId, { ...event, type: 'review.approved', data: { comment, ...(required > 1 ? { approvals: approvers } : {}), ...auditData } });
}

/**
 * A person's decision, written first and atomically. A deny ends the review. An approval counts once per person;
 * the review is approved when it has as many as the policy asked for (one, unless a rule's @approvals says more),
 * and stays pending until then. Unless the organization allows it, nobody approves a write made with an API key
 * they created. The review row is locked, so of decisions racing one settles it and the others are told 409.
 */
export async function decideReview(
  db: Database,
  input: { orgId: string; reviewId: string; userId: string; verdict: 'approved' | 'denied'; comment?: string; seenEditId?: string },
): Promise<Review> {
  await db.transaction(async (tx) => {
    const review = await lockPendingReview(tx, input.orgId, input.reviewId);
    if (input.verdict === 'denied') {
      await settle(tx, input, 'denied');
      await recordAudit(tx, input.orgId, {
        type: 'review.denied',
        actor: { type: 'user', id: input.userId },
        workflowId: review.workflowId,
        reviewId: input.reviewId,
        data: { comment: input.comment ?? null },
      });
      return;
    }
    assertNotSelfApproval(review, input.userId);
    assertSawCurrentVersion(review, input.seenEditId);
    await approveIn(tx, review, input);
  });
  return getReview(db, input.orgId, input.reviewId);
}

/** Records the decision that ends a review: by whom, when, and their comment. */
async function settle(tx: Queryable, input: { orgId: string; reviewId: string; userId: string; comment?: string }, status: 'approved' | 'denied') {
  await tx.query(`UPDATE reviews SET status = $3, decided_by = $4, decided_at = now(), comment = $5 WHERE org_id = $1 AND id = $2`, [
    input.orgId,
    input.reviewId,
    status,
    input.userId,
    input.comment ?? null,
  ]);
}

export async function readReviewStatus(db: Queryable, reviewId: string): Promise<ReviewStatus> {
  const { rows } = await db.query('SELECT status FROM reviews WHERE id = $1', [reviewId]);
  if (!rows[0]) throw new AppError('not_found', `review ${reviewId} was not found`);
  return rows[0].status;
}

/** Expires a review nobody decided; if a person decided meanwhile, their decision stands. */
export async function expireReview(db: Database, reviewId: string): Promise<ReviewStatus> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE reviews SET status = 'expired', decided_at = now() WHERE id = $1 AND status = 'pending'
       RETURNING org_id, workflow_id`,
      [reviewId],
    );
    if (!rows[0]) return readReviewStatus(tx, reviewId);
    await recordAudit(tx, rows[0].org_id, {
      type: 'review.expired',
      actor: { type: 'system', id: null },
      workflowId: rows[0].workflow_id,
      reviewId,
      data: {},
    });
    return 'expired';
  });
}

function iso(value: unknown): string | null {
  return value ? (value as Date).toISOString() : null;
}

function reviewFromRow(row: QueryResultRow): Review {
  return {
    id: row.id,
    status: row.effective_status,
    operation: row.operation,
    proposed: row.input,
    resource: row.resource,
    before: row.before ?? null,
    policy: {
      decision_id: row.decision_id,
      reason: row.reason,
      policy_ids: row.policy_ids,
      policy_version: row.policy_version,
      errors: row.policy_errors,
    },
    submitted_by: { api_key_id: row.api_key_id, api_key_label: row.api_key_label, interface: row.interface },
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at)!,
    escalation: row.escalated_to ? { to: row.escalated_to, at: iso(row.escalated_at)! } : null,
    edit: row.edit_id
      ? {
          id: row.edit_id,
          fields: row.edit_fields,
          by: { user_id: row.edit_by, email: row.edit_by_email },
          at: iso(row.edit_at)!,
          input: row.edit_input,
          resource: row.edit_resource,
          decision: { decision: row.edit_decision, reason: row.edit_reason, policy_ids: row.edit_policy_ids, policy_version: row.edit_policy_version },
        }
      : null,
    approvals: {
      required: row.approvals_required,
      given: (row.approvals_given as { user_id: string; email: string; at: string; comment: string | null }[]).map((given) => ({
        ...given,
        at: new Date(given.at).toISOString(),
      })),
    },
    decided_at: iso(row.decided_at),
    decided_by: row.decided_by ? { user_id: row.decided_by, email: row.decided_by_email } : null,
    comment: row.comment,
    applied_at: iso(row.applied_at),
    result: row.result ?? null,
    failure: row.failure ?? null,
    workflow_id: row.workflow_id,
  };
}

/**
 * Memories belong to the key that wrote them: another key reading the queue learns that one is held, not
 * what it says. People who review see everything.
 */
export function asSeenByKey(review: Review, apiKeyId: string): Review {
  if (!review.operation.startsWith('memories.') || review.submitted_by.api_key_id === apiKeyId) return review;
  return {
    ...review,
    proposed: { redacted: true },
    resource: { redacted: true },
    before: review.before && { redacted: true },
    edit: review.edit && { ...review.edit, input: { redacted: true }, resource: { redacted: true } },
    result: null,
  };
}

export const followReviewInput = z.strictObject({ review_id: text({ max: 100 }).describe('The review id from the held write') });

/** Where a held write stands, as the agent that submitted it follows it. */
export const reviewProgressSchema = z.object({
  id: z.string().describe('The review id'),
  status: z.enum(reviewStatuses).describe('Where the review stands'),
  operation: z.string().describe('The held write, e.g. tasks.create'),
  reason: z.string().describe('Why the policy held it'),
  expires_at: z.string().describe('When it expires if nobody decides (RFC 3339)'),
  edited: z
    .object({
      fields: z.array(z.string()).describe('The fields the reviewer changed'),
      input: z.record(z.string(), z.unknown()).describe('The write as the reviewer edited it; what runs (or ran) instead of yours'),
    })
    .nullable()
    .describe('Set when a reviewer changed your write before approving it: result is then the edited write\'s record'),
  approvals_required: z.number().int().describe('How many distinct people must approve before the write runs'),
  approvals_given: z.number().int().describe('How many have approved so far'),
  decided_at: z.string().nullable().describe('When a person decided, or null'),
  comment: z.string().nullable().describe("The person's comment, or null"),
  applied: z.boolean().describe('True once the approved write has run'),
  result: z.unknown().describe('The record the approved write produced, once applied'),
  failure: applyFailure.nullable().describe('Why an approved write could not be applied, or null'),
});

/**
 * A key follows its own held writes; another key's it reads only with `mayReadQueue` (the reviews.read
 * ability), and then as asSeenByKey shows them. Any other review is not found.
 */
export async function followReview(
  db: Queryable,
  orgId: string,
  follower: { apiKeyId: string; mayReadQueue: boolean },
  reviewId: string,
): Promise<z.infer<typeof reviewProgressSchema>> {
  const review = asSeenByKey(await getReview(db, orgId, reviewId), follower.apiKeyId);
  if (review.submitted_by.api_key_id !== follower.apiKeyId && !follower.mayReadQueue) {
    throw new AppError('not_found', `review ${reviewId} was not found`);
  }
  return {
    id: review.id,
    status: review.status,
    operation: review.operation,
    reason: review.policy.reason,
    expires_at: review.expires_at,
    edited: review.edit && { fields: review.edit.fields, input: review.edit.input },
    approvals_required: review.approvals.required,
    approvals_given: review.approvals.given.length,
    decided_at: review.decided_at,
    comment: review.comment,
    applied: review.applied_at !== null,
    result: review.result,
    failure: review.failure,
  };
}

