import type { QueryResultRow } from 'pg';
import type { Database, Queryable } from '../../db/database';
import { evaluatePolicy, type PolicyDecision } from '../../policy/engine';
import { labelVerifiedSql } from '../kit/agent-names';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { auditInsert } from '../audit/events';
import type { GatedWriteRequest, RecordedDecision } from './contract';
import { loadCompiledPolicySet } from '../policy-sets/versions';
import { lockReviewQueue } from './reviews/queue';
import type { GatedWrite } from './writes';
import { useTrustWindow } from './trust-windows';

/**
 * Asks the organization's policy about a write (askPolicy) and records the decision (and the review it opens),
 * once per workflow.
 */
export async function decideGatedWrite(
  db: Database,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  reviewExpiresAt: Date,
): Promise<RecordedDecision> {
  return db.transaction(async (tx) => (await decideIn(tx, write, workflowId, request, reviewExpiresAt)).recorded);
}

/** What the write needs to run at once, in the transaction that has just recorded its decision. */
export interface JustDecided {
  /** The input as the write's schema parsed it. */
  input: Parameters<GatedWrite['apply']>[2];
  /** For an update or a delete, the record as the policy saw it before the write. */
  before?: Record<string, unknown>;
}

/** The trust window that let a write through in place of the policy's Review, and the decision's reason. */
export interface TrustedInstead {
  id: string;
  reason: string;
}

/**
 * decideGatedWrite inside a transaction of the caller's, so that a write can be decided and applied in one.
 * `justDecided` is there when this call recorded the decision (not when an earlier run of the workflow had);
 * `trusted`, when a trust window let it through. `spentNothing`: the window an earlier attempt found, for a write
 * the data refused, recorded as letting it through without a use (a use counts only writes that applied).
 */
export async function decideIn(
  tx: Queryable,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  reviewExpiresAt: Date,
  { spentNothing }: { spentNothing?: TrustedInstead } = {},
): Promise<{ recorded: RecordedDecision; justDecided?: JustDecided; trusted?: TrustedInstead }> {
  // The key first, before anything of its own (a trust window) is locked, in the order a revocation takes them.
  const revoked = await keyRevoked(tx, request.apiKey.id);
  const input = write.input.parse(request.input);
  const { proposal, version, decided, context, shadow } = await askPolicy(tx, write, request, input);
  const trusted =
    revoked || decided.decision !== 'review' ? undefined : (spentNothing ?? (await trustedInstead(tx, workflowId, request, proposal.resource, decided)));
  const { recorded, inserted } = await recordDecisionIn(tx, {
    shadow,
    workflowId,
    request,
    decision: trusted ? 'allow' : decided.decision,
    reason: trusted?.reason ?? decided.reason,
    trustWindowId: trusted?.id,
    policyIds: decided.policyIds,
    policyErrors: decided.errors,
    policyVersion: version,
    approvalsRequired: decided.approvals ?? 1,
    resource: proposal.resource,
    context,
    reviewExpiresAt,
    keyRevoked: revoked,
  });
  // The record before as the decision stores it (JSON), exactly what a later apply would read back.
  if (!inserted) return { recorded };
  return { recorded, justDecided: { input, before: proposal.before && JSON.parse(JSON.stringify(proposal.before)) }, ...(trusted ? { trusted } : {}) };
}

/**
 * A write the policy would hold is let through by an open trust window of its key and operation that its record
 * matches, held by the rules that held the window's write and needing no more approvals (one use taken, in this
 * transaction). Not when this workflow's decision is recorded already: a retry
 * must find that decision, without taking another use.
 */
async function trustedInstead(
  tx: Queryable,
  workflowId: string,
  request: GatedWriteRequest,
  resource: Record<string, unknown>,
  decided: PolicyDecision,
): Promise<TrustedInstead | undefined> {
  if ((await tx.query('SELECT 1 FROM gate_decisions WHERE workflow_id = $1', [workflowId])).rowCount) return undefined;
  // A rule that could not be evaluated may have been one that would deny: no window waves such a write through.
  if (decided.errors.length > 0) return undefined;
  const window = await useTrustWindow(tx, {
    orgId: request.orgId,
    workflowId,
    apiKeyId: request.apiKey.id,
    operation: request.operation,
    resource,
    policyIds: decided.policyIds,
    approvals: decided.approvals ?? 1,
  });
  if (!window) return undefined;
  const policies = decided.policyIds.length ? `policy ${decided.policyIds.join(', ')}` : 'the policy';
  return { id: window.id, reason: `Allowed by trust window ${window.id} opened by ${window.openedBy} (${policies} would hold it: ${decided.reason})` };
}

/** What the policy said of a write, and what it saw: the proposal, the policy version, the request's context. */
export interface PolicyAnswer {
  proposal: Awaited<ReturnType<GatedWrite['propose']>>;
  version: number;
  decided: PolicyDecision;
  context: Record<string, unknown>;
  /** What the shadow draft would have decided, when one runs. */
  shadow?: ShadowDecision;
}

/** A shadow draft's decision of a write, as gate_decisions.shadow keeps it. */
export interface ShadowDecision {
  decision: PolicyDecision['decision'];
  reason: string;
  policy_ids: string[];
  started_at: string;
}

/**
 * Asks the organization's current policy about a write: the key as the principal, the write's name as the
 * action, the record as it would be after the write as the resource, and in its context the interface and, for
 * updates and deletes, the record before and the fields that change (plus `extraContext`: a reviewer's edit
 * names its editor).
 */
export async function askPolicy(
  tx: Queryable,
  write: GatedWrite,
  request: Pick<GatedWriteRequest, 'orgId' | 'operation' | 'interface' | 'apiKey'>,
  input: Parameters<GatedWrite['apply']>[2],
  extraContext?: Record<string, unknown>,
): Promise<PolicyAnswer> {
  const proposal = await write.propose(tx, request.orgId, input, { apiKeyId: request.apiKey.id, abilities: request.apiKey.abilities });
  const { version, policySet, shadow } = await loadCompiledPolicySet(tx, request.orgId);
  const context: Record<string, unknown> = { interface: request.interface, operation: request.operation };
  if (proposal.before) context.before = proposal.before;
  if (proposal.changes) {
    context.changes = proposal.changes;
    context.changed_fields = Object.keys(proposal.changes).sort();
  }
  Object.assign(context, proposal.context, extraContext);
  const labelVerified = request.apiKey.labelVerified ?? (await keyLabelVerified(tx, request.apiKey.id));
  const policyRequest = {
    principal: {
      type: 'ApiKey',
      id: request.apiKey.id,
      attrs: { label: request.apiKey.label, label_verified: labelVerified, access: request.apiKey.access, abilities: request.apiKey.abilities },
    },
    action: request.operation,
    resource: { type: proposal.resourceType ?? write.resourceType, id: proposal.resourceId, attrs: proposal.resource },
    context,
  };
  const decided = evaluatePolicy(policySet, policyRequest);
  if (!shadow) return { proposal, version, decided, context };
  const shadowed = evaluatePolicy(shadow.policySet, policyRequest);
  return {
    proposal,
    version,
    decided,
    context,
    shadow: { decision: shadowed.decision, reason: shadowed.reason, policy_ids: shadowed.policyIds, started_at: shadow.startedAt },
  };
}

/** Whether a key's label is a person's word (a request made before requests said so, or a reviewer's edit of one). */
async function keyLabelVerified(tx: Queryable, keyId: string): Promise<boolean> {
  const { rows } = await tx.query(`SELECT ${labelVerifiedSql('k')} AS verified FROM api_keys k WHERE k.id = $1`, [keyId]);
  return rows[0]?.verified === true;
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
  /** For a Review: how many distinct people must approve (1 when not given). */
  approvalsRequired?: number;
  /** What a shadow draft would have decided, when one runs. */
  shadow?: ShadowDecision;
  /** The trust window that turned the policy's Review into this Allow (trw_…). */
  trustWindowId?: string;
  /** Whether the key was revoked, when the caller has read it (keyRevoked) in this transaction already. */
  keyRevoked?: boolean;
}

/**
 * Records a policy decision (and the review it opens) once per workflow: a retried activity finds the
 * first record and returns it, so a write is never decided twice. A write to be held while the organization's
 * review queue is at its plan's cap is refused instead, and recorded so.
 */
export async function recordDecision(db: Database, d: DecisionToRecord): Promise<RecordedDecision> {
  return db.transaction(async (tx) => (await recordDecisionIn(tx, d)).recorded);
}

/**
 * Whether a write's key has been revoked, its row locked until the caller's transaction ends (FOR SHARE, which the
 * revocation's UPDATE waits for, and which waits for it). A revocation withdraws the reviews it finds in its own
 * transaction; a write sent just before it, whose run decides later (its worker was down, or busy), finds the key
 * revoked here and is refused. So no write of a revoked key is held for a person or applied, whichever comes first.
 */
export async function keyRevoked(tx: Queryable, keyId: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = $1 FOR SHARE', [keyId]);
  return rows[0]?.revoked === true;
}

/** `inserted`: recorded by this call; else the record an earlier run of the workflow made. */
export async function recordDecisionIn(tx: Queryable, d: DecisionToRecord): Promise<{ recorded: RecordedDecision; inserted: boolean }> {
  let decision: RecordedDecision['decision'] = d.decision;
  let reason = d.reason;
  let refusal: RecordedDecision['refusal'];
  if (d.keyRevoked ?? (await keyRevoked(tx, d.request.apiKey.id))) {
    decision = 'refused';
    refusal = 'unauthorized';
    reason =
      `The API key ${d.request.apiKey.id} was revoked before this write was decided (the policy said ${d.decision}: ${d.reason}). ` +
      'Nothing was held or written.';
  } else if (d.decision === 'review') {
    const queue = await lockReviewQueue(tx, d.request.orgId);
    if (queue.pending >= queue.cap) {
      decision = 'refused';
      refusal = 'review_queue_full';
      reason =
        `The review queue is full: ${queue.pending} writes already wait for a person, the ${queue.plan} plan's cap is ${queue.cap}. ` +
        `This write would have been held for review (${d.reason}); it was refused, not queued. Submit it again (with a new Idempotency-Key, if you send one) once reviewers have worked the queue.`;
    }
  }
  const decisionId = newId('dec');
  const review: RecordedDecision['review'] = decision === 'review' ? { id: newId('rev'), expiresAt: d.reviewExpiresAt.toISOString() } : undefined;
  // One statement: the decision, the review it opens and its audit record, each only if the decision is new.
  const values: unknown[] = [
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
    d.shadow ? JSON.stringify(d.shadow) : null,
    d.trustWindowId ?? null,
    refusal ?? null,
  ];
  let held = '';
  if (review) {
    held = `, held AS (
      INSERT INTO reviews (id, org_id, decision_id, workflow_id, expires_at, approvals_required)
      SELECT $18::text, $2, id, $3, $19::timestamptz, $20::smallint FROM decided)`;
    values.push(review.id, d.reviewExpiresAt, d.approvalsRequired ?? 1);
  }
  const audit = auditInsert(
    d.request.orgId,
    {
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
        ...(d.trustWindowId ? { trust_window: d.trustWindowId } : {}),
      },
    },
    { first: values.length + 1, after: 'decided' },
  );
  const inserted = await tx.query(
    `WITH decided AS (
       INSERT INTO gate_decisions
         (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_version, input, resource, context, policy_errors, shadow, trust_window_id, refusal)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb, $16::text, $17::text)
       ON CONFLICT (workflow_id) DO NOTHING RETURNING id
     )${held}, audited AS (${audit.sql})
     SELECT id FROM decided`,
    [...values, ...audit.values],
  );
  if (!inserted.rowCount) return { recorded: await existingDecision(tx, d.workflowId, d.request), inserted: false };
  return {
    recorded: { decisionId, decision, reason, policyIds: d.policyIds, policyVersion: d.policyVersion, review, ...(refusal ? { refusal } : {}) },
    inserted: true,
  };
}

/**
 * A workflow decides one write. Another request under the same workflow id would borrow a decision made
 * for something else, so it is refused outright.
 */
async function existingDecision(tx: Queryable, workflowId: string, request: GatedWriteRequest): Promise<RecordedDecision> {
  const { rows } = await tx.query(
    `SELECT d.id, d.decision, d.reason, d.policy_ids, d.policy_version, d.refusal, r.id AS review_id, r.expires_at,
            d.operation = $2 AND d.org_id = $3 AND d.input = $4::jsonb AS same_request
     FROM gate_decisions d LEFT JOIN reviews r ON r.decision_id = d.id WHERE d.workflow_id = $1`,
    [workflowId, request.operation, request.orgId, JSON.stringify(request.input)],
  );
  const row = rows[0];
  if (!row.same_request) throw new AppError('conflict', `workflow ${workflowId} already decided a different write`);
  return recordedDecisionOf(row);
}

/** A decision as gate_decisions keeps it (with its review's id and expiry, when it opened one). */
export function recordedDecisionOf(row: QueryResultRow): RecordedDecision {
  return {
    decisionId: row.id,
    decision: row.decision,
    reason: row.reason,
    policyIds: row.policy_ids,
    policyVersion: row.policy_version,
    review: row.review_id ? { id: row.review_id, expiresAt: (row.expires_at as Date).toISOString() } : undefined,
    // Refusals recorded before they named their cause were all of a full queue.
    ...(row.decision === 'refused' ? { refusal: row.refusal ?? 'review_queue_full' } : {}),
  };
}
