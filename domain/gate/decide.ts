import type { Database, Queryable } from '../../db/database';
import type { Ability, Access } from '../identity/abilities';
import { recordAudit } from './audit';
import { AppError } from '../kit/errors';
import { gatedWrite } from './writes';
import { newId } from '../kit/ids';
import { lockReviewQueue } from '../usage/limits';

export type Interface = 'rest' | 'mcp';

/** A gated write as the api hands it to the workflow. */
export interface GatedWriteRequest {
  orgId: string;
  orgSlug: string;
  operation: string;
  input: unknown;
  interface: Interface;
  apiKey: { id: string; label: string; access: Access; abilities: Ability[] };
}

export interface RecordedDecision {
  decisionId: string;
  /** The policy's decision; `refused` when it was Review but the organization's review queue was full. */
  decision: 'allow' | 'review' | 'deny' | 'refused';
  reason: string;
  policyIds: string[];
  policyVersion: number;
  review?: { id: string; expiresAt: string };
}

/** Settings of the worker that the workflow needs: how often a held write re-reads its review. */
export interface DecisionWithSettings extends RecordedDecision {
  reviewRecheckMs: number;
}

/** The first answer a gated write gets: what the caller of the REST route or MCP tool is told. */
export type GateAnswer =
  | { outcome: 'applied'; decisionId: string; reason: string; policyIds: string[]; result: unknown }
  | {
      outcome: 'pending_review';
      decisionId: string;
      reason: string;
      policyIds: string[];
      review: { id: string; expiresAt: string };
    }
  | { outcome: 'denied'; decisionId: string; reason: string; policyIds: string[] }
  | { outcome: 'failed'; code: string; message: string; details?: Record<string, unknown> };

export type ReviewResolution =
  | { status: 'approved'; result: unknown }
  | { status: 'approved'; failure: { code: string; message: string } }
  | { status: 'denied' }
  | { status: 'expired' };

/** What the workflow returns: its first answer and, for a held write, how the review ended. */
export interface GatedWriteOutcome {
  answer: GateAnswer;
  resolution?: ReviewResolution;
}

export interface DecisionToRecord {
  workflowId: string;
  request: GatedWriteRequest;
  decision: 'allow' | 'review' | 'deny';
  reason: string;
  policyIds: string[];
  policyErrors: string[];
  policyVersion: number;
  resource: Record<string, unknown>;
  context: Record<string, unknown>;
  reviewExpiresAt: Date;
}

/**
 * Records a policy decision (and the review it opens) once per workflow: a retried activity finds the
 * first record and returns it, so a write is never decided twice. A write to be held while the organization's
 * review queue is at its plan's cap is refused instead, and recorded so.
 */
export async function recordDecision(db: Database, d: DecisionToRecord): Promise<RecordedDecision> {
  return db.transaction(async (tx) => {
    let decision: RecordedDecision['decision'] = d.decision;
    let reason = d.reason;
    if (d.decision === 'review') {
      const queue = await lockReviewQueue(tx, d.request.orgId);
      if (queue.pending >= queue.cap) {
        decision = 'refused';
        reason =
          `The review queue is full: ${queue.pending} writes already wait for a person, the ${queue.plan} plan's cap is ${queue.cap}. ` +
          `This write would have been held for review (${d.reason}); it was refused, not queued. Submit it again (with a new Idempotency-Key, if you send one) once reviewers have worked the queue.`;
      }
    }
    const decisionId = newId('dec');
    const inserted = await tx.query(
      `INSERT INTO gate_decisions
         (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_version, input, resource, context, policy_errors)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (workflow_id) DO NOTHING RETURNING id`,
      [
        decisionId,
        d.request.orgId,
        d.workflowId,
        d.request.operation,
        d.request.interface,
        d.request.apiKey.id,
        decision,
        reason,
        d.policyIds,
        d.policyVersion,
        JSON.stringify(d.request.input),
        JSON.stringify(d.resource),
        JSON.stringify(d.context),
        d.policyErrors,
      ],
    );
    if (!inserted.rowCount) return existingDecision(tx, d.workflowId, d.request);

    let review: RecordedDecision['review'];
    if (decision === 'review') {
      const reviewId = newId('rev');
      await tx.query(`INSERT INTO reviews (id, org_id, decision_id, workflow_id, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
        reviewId,
        d.request.orgId,
        decisionId,
        d.workflowId,
        d.reviewExpiresAt,
      ]);
      review = { id: reviewId, expiresAt: d.reviewExpiresAt.toISOString() };
    }
    await recordAudit(tx, d.request.orgId, {
      type: 'gate.decided',
      actor: { type: 'api_key', id: d.request.apiKey.id },
      workflowId: d.workflowId,
      reviewId: review?.id,
      data: {
        operation: d.request.operation,
        decision,
        reason,
        policyIds: d.policyIds,
        interface: d.request.interface,
      },
    });
    return { decisionId, decision, reason, policyIds: d.policyIds, policyVersion: d.policyVersion, review };
  });
}

/**
 * A workflow decides one write. Another request under the same workflow id would borrow a decision made
 * for something else, so it is refused outright.
 */
async function existingDecision(tx: Queryable, workflowId: string, request: GatedWriteRequest): Promise<RecordedDecision> {
  const { rows } = await tx.query(
    `SELECT d.id, d.decision, d.reason, d.policy_ids, d.policy_version, r.id AS review_id, r.expires_at,
            d.operation = $2 AND d.org_id = $3 AND d.input = $4::jsonb AS same_request
     FROM gate_decisions d LEFT JOIN reviews r ON r.decision_id = d.id WHERE d.workflow_id = $1`,
    [workflowId, request.operation, request.orgId, JSON.stringify(request.input)],
  );
  const row = rows[0];
  if (!row.same_request) throw new AppError('conflict', `workflow ${workflowId} already decided a different write`);
  return {
    decisionId: row.id,
    decision: row.decision,
    reason: row.reason,
    policyIds: row.policy_ids,
    policyVersion: row.policy_version,
    review: row.review_id ? { id: row.review_id, expiresAt: (row.expires_at as Date).toISOString() } : undefined,
  };
}

export class ReviewNotApprovedError extends Error {
  override name = 'ReviewNotApproved';
}

/**
 * Runs the write, its audit record and its bookkeeping in one transaction, at most once per workflow.
 * A write held for review runs only if its review record says a person approved it.
 */
export async function applyGatedWrite(
  db: Database,
  workflowId: string,
  request: GatedWriteRequest,
  reviewId?: string,
): Promise<unknown> {
  const write = gatedWrite(request.operation);
  if (!write) throw new AppError('not_found', `no gated write is named ${request.operation}`);
  const input = write.input.parse(request.input);
  return db.transaction(async (tx) => {
    // Only what the policy decided runs: an Allow, or a Review a person approved, for this very input.
    const { rows: decisions } = await tx.query(
      `SELECT decision, context, operation = $2 AND org_id = $3 AND input = $4::jsonb AS same_request FROM gate_decisions WHERE workflow_id = $1`,
      [workflowId, request.operation, request.orgId, JSON.stringify(request.input)],
    );
    const decided = decisions[0];
    if (!decided?.same_request) throw new AppError('conflict', `workflow ${workflowId} has no decision for this write`);
    if (decided.decision !== 'allow' && decided.decision !== 'review') {
      throw new AppError('conflict', `workflow ${workflowId} was ${decided.decision === 'deny' ? 'denied' : 'refused'}; its write never runs`);
    }
    if (decided.decision === 'review') {
      const { rows } = await tx.query('SELECT status FROM reviews WHERE id = $1 AND workflow_id = $2 FOR UPDATE', [reviewId ?? '', workflowId]);
      if (rows[0]?.status !== 'approved') {
        throw new ReviewNotApprovedError(`review ${reviewId ?? '(none)'} is ${rows[0]?.status ?? 'missing'}, not approved`);
      }
    }
    // The claim comes first: a concurrent attempt waits on it, then finds the finished write.
    const claim = await tx.query(
      `INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result)
       VALUES ($1, $2, $3, $4, '', 'null') ON CONFLICT (workflow_id) DO NOTHING`,
      [workflowId, request.orgId, request.operation, write.resourceType],
    );
    if (!claim.rowCount) {
      const done = await tx.query('SELECT result FROM applied_writes WHERE workflow_id = $1', [workflowId]);
      return done.rows[0].result;
    }

    const applied = await write.apply(tx, request.orgId, input, { before: decided.context?.before }, { apiKeyId: request.apiKey.id });
    await tx.query('UPDATE applied_writes SET resource_id = $2, result = $3 WHERE workflow_id = $1', [
      workflowId,
      applied.resourceId,
      JSON.stringify(applied.result),
    ]);
    await recordAudit(tx, request.orgId, {
      type: 'write.applied',
      actor: { type: 'api_key', id: request.apiKey.id },
      workflowId,
      reviewId,
      resourceType: write.resourceType,
      resourceId: applied.resourceId,
      data: { operation: request.operation },
    });
    if (reviewId) {
      await tx.query('UPDATE reviews SET applied_at = now(), result = $2 WHERE id = $1', [reviewId, JSON.stringify(applied.result)]);
    }
    return applied.result;
  });
}

/** An approved write that could not be applied: said on the review and in the audit trail. */
export async function recordApplyFailure(
  db: Database,
  workflowId: string,
  reviewId: string,
  failure: { code: string; message: string },
): Promise<void> {
  await db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE reviews SET failure = $3 WHERE id = $1 AND workflow_id = $2 AND applied_at IS NULL RETURNING org_id`,
      [reviewId, workflowId, JSON.stringify(failure)],
    );
    if (!rows[0]) return;
    await recordAudit(tx, rows[0].org_id, {
      type: 'write.failed',
      actor: { type: 'system', id: null },
      workflowId,
      reviewId,
      data: failure,
    });
  });
}
