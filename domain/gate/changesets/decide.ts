import type { Database, Queryable } from '../../../db/database';
import { recordAudit } from '../../audit/events';
import { z } from 'zod';
import { AppError, asRefusal, type FieldProblem } from '../../kit/errors';
import { newId } from '../../kit/ids';
import type { ChangesetItemOutcome, DecidedChangeset, GatedWriteRequest } from '../contract';
import { ReviewNotApprovedError } from '../apply';
import { askPolicy, keyRevoked, recordDecisionIn, recordedDecisionOf } from '../decide';
import type { GatedWrite } from '../writes';

/** The gated writes by name (the resources' registry, which the gate does not import). */
export type WriteOf = (name: string) => GatedWrite | undefined;
import { changesetOperation, changesetShape, resolveRefs, type ChangesetInput } from './schema';

// Deciding a changeset: each item is decided by the policy as if alone (the same key, its own operation, its record),
// an item that names a record made by an earlier item seeing that record as the changeset would make it. All of it in
// one transaction: the items are applied in order inside a savepoint (so that each proposal sees the ones before it),
// and the savepoint is rolled back unless every item is allowed. The changeset is decided by its strictest item.

const strictness = { allow: 0, review: 1, deny: 2 } as const;
type ItemDecision = keyof typeof strictness;

/** What one item was decided on and, inside the savepoint, what it wrote. */
export interface ProposedItem {
  index: number;
  ref: string | null;
  write: GatedWrite;
  /** As the agent sent it ($ref:… kept). */
  sentInput: Record<string, unknown>;
  decision: ItemDecision;
  reason: string;
  policyIds: string[];
  policyErrors: string[];
  approvalsRequired: number;
  policyVersion: number;
  proposedId: string;
  resource: Record<string, unknown>;
  before: Record<string, unknown> | null;
  context: Record<string, unknown>;
  /** The write's result inside the savepoint (kept only when every item is allowed). */
  applied: { resourceId: string; result: unknown };
}

/** A refusal of one item (an unknown id, a stale If-Match, a reference to another organization's record) refuses the changeset, naming the item. */
export function itemRefusal(error: unknown, index: number, operation: string): unknown {
  const refusal = error instanceof z.ZodError ? asRefusal(error)! : error;
  if (!(refusal instanceof AppError)) return error;
  // The fields of a validation error, as they stand in the changeset: items.<index>.input.<field>.
  const fields = (refusal.details?.fields as FieldProblem[] | undefined)?.map((f) => ({ ...f, field: `items.${index}.input.${f.field}` }));
  const details = { ...refusal.details, item: index, operation, ...(fields ? { fields } : {}) };
  const message = fields?.length ? `The request is not valid: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}` : refusal.message;
  return new AppError(refusal.code, `item ${index} (${operation}): ${message}`, details);
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value ?? null));

/**
 * Decides a changeset and, when every item is allowed, applies it, in one transaction keyed on the workflow id: a
 * retried activity finds the changeset decided (and applied) and answers that. Any Deny refuses the whole; else any
 * Review holds the whole as one review; else every item is applied.
 */
export async function decideAndApplyChangeset(
  db: Database,
  writeOf: WriteOf,
  workflowId: string,
  request: GatedWriteRequest,
  reviewExpiresAt: Date,
): Promise<DecidedChangeset> {
  return db.transaction(async (tx) => {
    // Attempts of one workflow take turns: the second finds what the first recorded.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('gatehouse.changeset:' || $1::text, 0))`, [workflowId]);
    const earlier = await decidedChangeset(tx, workflowId, request);
    if (earlier) return earlier;

    // A key revoked before the changeset is decided: its items are proposed to be recorded, never applied.
    const revoked = await keyRevoked(tx, request.apiKey.id);
    const input = changesetShape.parse(request.input);
    await tx.query('SAVEPOINT changeset_proposal');
    const items = await proposeItems(tx, writeOf, request, input);
    const whole = decidedWhole(items);
    const applies = whole.decision === 'allow' && !revoked;
    await tx.query(applies ? 'RELEASE SAVEPOINT changeset_proposal' : 'ROLLBACK TO SAVEPOINT changeset_proposal');

    const changesetId = newId('chs');
    const { recorded } = await recordDecisionIn(tx, {
      workflowId,
      request,
      ...whole,
      resource: changesetResource(changesetId, input.mode, items),
      context: { interface: request.interface, operation: changesetOperation, item_count: items.length, mode: input.mode },
      reviewExpiresAt,
      keyRevoked: revoked,
    });

    await tx.query(
      `INSERT INTO changesets (id, org_id, workflow_id, mode, item_count, api_key_id, decision, applied_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $7 = 'allow' THEN now() END)`,
      [changesetId, request.orgId, workflowId, input.mode, items.length, request.apiKey.id, recorded.decision],
    );
    if (recorded.review) await tx.query('UPDATE reviews SET changeset_id = $2 WHERE id = $1', [recorded.review.id, changesetId]);
    const allowed = recorded.decision === 'allow';
    for (const item of items) {
      await tx.query(
        `INSERT INTO changeset_items (changeset_id, idx, org_id, ref, operation, input, decision, reason, policy_ids, policy_errors, approvals_required,
           resource_type, proposed_id, resource, before, context, applied_id, result, applied_before, applied_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $15, CASE WHEN $17::text IS NOT NULL THEN now() END)`,
        [
          changesetId,
          item.index,
          request.orgId,
          item.ref,
          item.write.name,
          JSON.stringify(item.sentInput),
          item.decision,
          item.reason,
          item.policyIds,
          item.policyErrors,
          item.approvalsRequired,
          item.write.resourceType,
          item.proposedId,
          JSON.stringify(json(item.resource)),
          item.before ? JSON.stringify(json(item.before)) : null,
          JSON.stringify(json(item.context)),
          allowed ? item.applied.resourceId : null,
          allowed ? JSON.stringify(json(item.applied.result)) : null,
        ],
      );
      await recordAudit(tx, request.orgId, {
        type: 'changeset.item_decided',
        actor: { type: 'api_key', id: request.apiKey.id },
        workflowId,
        reviewId: recorded.review?.id,
        data: { changeset_id: changesetId, item: item.index, operation: item.write.name, decision: item.decision, reason: item.reason, policyIds: item.policyIds },
      });
    }
    const outcomes = await itemOutcomes(tx, changesetId);
    if (!allowed) return { ...recorded, changesetId, items: outcomes };
    const result = { changeset_id: changesetId, mode: input.mode, items: outcomes };
    await recordChangesetApplied(tx, { workflowId, request, changesetId, items: outcomes, result, claimed: false });
    return { ...recorded, changesetId, items: outcomes, applied: { result } };
  });
}

/** How a changeset's items are proposed again when a reviewer edits some (see ./edits.ts). */
export interface ProposeOptions {
  /** Items left out (rejected ones): nothing refers to them. */
  skip?: ReadonlySet<number>;
  /** What an item's policy context gets besides the changeset's (an edited item: its editor). */
  contextOf?: (index: number) => Record<string, unknown>;
}

/**
 * A changeset's decision from its items': the strictest, with the reasons and rules of the items that decided it,
 * and the quorum of its most demanding held item (the changeset needs what that item would alone).
 */
export function decidedWhole(items: ProposedItem[]) {
  const decision = items.reduce<ItemDecision>((worst, item) => (strictness[item.decision] > strictness[worst] ? item.decision : worst), 'allow');
  const deciding = items.filter((item) => item.decision === decision);
  return {
    decision,
    reason: deciding.map((item) => `item ${item.index} (${item.write.name}): ${item.reason}`).join('; '),
    policyIds: [...new Set(deciding.flatMap((item) => item.policyIds))],
    policyErrors: [...new Set(items.flatMap((item) => item.policyErrors))],
    policyVersion: items[0]!.policyVersion,
    approvalsRequired: Math.max(1, ...items.filter((item) => item.decision === 'review').map((item) => item.approvalsRequired)),
  };
}

/** What the policy saw of a changeset as a whole: each item's record and decision. */
export function changesetResource(changesetId: string, mode: string, items: ProposedItem[]): Record<string, unknown> {
  return {
    changeset_id: changesetId,
    mode,
    items: items.map((item) => ({
      index: item.index,
      ref: item.ref,
      operation: item.write.name,
      resource_type: item.write.resourceType,
      resource_id: item.proposedId,
      decision: item.decision,
      resource: item.resource,
    })),
  };
}

/** Each item in order: its refs resolved, decided by the policy, then written (inside the caller's savepoint). */
export async function proposeItems(
  tx: Queryable,
  writeOf: WriteOf,
  request: Pick<GatedWriteRequest, 'orgId' | 'interface' | 'apiKey'>,
  changeset: ChangesetInput,
  options: ProposeOptions = {},
): Promise<ProposedItem[]> {
  const ids = new Map<string, string>();
  const proposed: ProposedItem[] = [];
  const by = { apiKeyId: request.apiKey.id, abilities: request.apiKey.abilities };
  for (const [index, item] of changeset.items.entries()) {
    if (options.skip?.has(index)) continue;
    const write = writeOf(item.operation);
    if (!write) throw new AppError('validation_failed', `item ${index}: no gated write is named ${item.operation}`, { item: index });
    try {
      const input = write.input.parse(resolveRefs(item.input, ids));
      const { proposal, version, decided, context } = await askPolicy(tx, write, { ...request, operation: write.name }, input, {
        changeset: { item: index, items: changeset.items.length, mode: changeset.mode },
        ...options.contextOf?.(index),
      });
      const before = proposal.before ? json(proposal.before) : null;
      const applied = await write.apply(tx, request.orgId, input, { before: before ?? undefined }, by);
      if (item.ref) ids.set(item.ref, applied.resourceId);
      proposed.push({
        index,
        ref: item.ref ?? null,
        write,
        sentInput: item.input,
        decision: decided.decision,
        reason: decided.reason,
        policyIds: decided.policyIds,
        policyErrors: decided.errors,
        approvalsRequired: decided.approvals ?? 1,
        policyVersion: version,
        proposedId: applied.resourceId,
        resource: proposal.resource,
        before,
        context,
        applied,
      });
    } catch (error) {
      throw itemRefusal(error, index, write.name);
    }
  }
  return proposed;
}

/** Every item of a changeset as its answers show it, in order. */
export async function itemOutcomes(tx: Queryable, changesetId: string): Promise<ChangesetItemOutcome[]> {
  const { rows } = await tx.query(
    `SELECT idx, ref, operation, decision, reason, policy_ids, resource_type, proposed_id, applied_id, result, verdict
     FROM changeset_items WHERE changeset_id = $1 ORDER BY idx`,
    [changesetId],
  );
  return rows.map((row) => ({
    index: row.idx,
    ref: row.ref,
    operation: row.operation,
    decision: row.decision,
    reason: row.reason,
    policy_ids: row.policy_ids,
    resource_type: row.resource_type,
    resource_id: row.applied_id ?? row.proposed_id,
    result: row.result ?? null,
    verdict: row.verdict ?? null,
  }));
}

/**
 * The changeset a workflow decided already (a retried activity), as it was answered; refused when the workflow
 * decided a different request.
 */
async function decidedChangeset(tx: Queryable, workflowId: string, request: GatedWriteRequest): Promise<DecidedChangeset | undefined> {
  const { rows } = await tx.query(
    `SELECT d.id, d.decision, d.reason, d.policy_ids, d.policy_version, d.refusal, r.id AS review_id, r.expires_at, c.id AS changeset_id, c.mode, a.result AS applied_result,
            d.org_id = $2 AND d.input = $3::jsonb AS same_request
     FROM gate_decisions d JOIN changesets c ON c.workflow_id = d.workflow_id LEFT JOIN reviews r ON r.decision_id = d.id
     LEFT JOIN applied_writes a ON a.workflow_id = d.workflow_id
     WHERE d.workflow_id = $1`,
    [workflowId, request.orgId, JSON.stringify(request.input)],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (!row.same_request) throw new AppError('conflict', `workflow ${workflowId} already decided a different changeset`);
  const recorded = recordedDecisionOf(row);
  const items = await itemOutcomes(tx, row.changeset_id);
  return { ...recorded, changesetId: row.changeset_id, items, ...(row.decision === 'allow' ? { applied: { result: row.applied_result } } : {}) };
}

/**
 * A changeset's applied write, once: the claim in applied_writes (keyed on the workflow id), its audit record as one
 * write (resource Changeset, so that webhooks announce it once) and each item's. `claimed`: the claim row was
 * inserted already (a held changeset claims before it writes).
 */
async function recordChangesetApplied(
  tx: Queryable,
  applied: { workflowId: string; request: GatedWriteRequest; changesetId: string; items: ChangesetItemOutcome[]; result: unknown; claimed: boolean; reviewId?: string },
): Promise<void> {
  const { workflowId, request, changesetId, items, result, reviewId } = applied;
  const actor = { type: 'api_key' as const, id: request.apiKey.id };
  if (applied.claimed) {
    await tx.query('UPDATE applied_writes SET resource_id = $2, result = $3 WHERE workflow_id = $1', [workflowId, changesetId, JSON.stringify(result)]);
  } else {
    await tx.query(`INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result) VALUES ($1, $2, $3, 'Changeset', $4, $5)`, [
      workflowId,
      request.orgId,
      changesetOperation,
      changesetId,
      JSON.stringify(result),
    ]);
  }
  for (const item of items) {
    if (item.result === null) continue;
    await recordAudit(tx, request.orgId, {
      type: 'changeset.item_applied',
      actor,
      workflowId,
      reviewId,
      resourceType: item.resource_type,
      resourceId: item.resource_id,
      data: { changeset_id: changesetId, item: item.index, operation: item.operation },
    });
  }
  await recordAudit(tx, request.orgId, {
    type: 'write.applied',
    actor,
    workflowId,
    reviewId,
    resourceType: 'Changeset',
    resourceId: changesetId,
    data: { operation: changesetOperation },
  });
}

/**
 * Applies a held changeset a person approved: every item (of a divisible one, every item not rejected) in order, in
 * one transaction, at most once per workflow (the claim in applied_writes comes first: a concurrent attempt waits on
 * it, then finds the changeset applied). An item's refs name the records this very transaction makes; an update or
 * a delete lands only on the version the policy saw (409 otherwise, and nothing is applied).
 */
/** A kept item of a changeset some of whose items were rejected, asked of the policy again as it is about to apply. */
async function assertNoStricterNow(
  tx: Queryable,
  write: GatedWrite,
  request: GatedWriteRequest,
  input: Parameters<GatedWrite['apply']>[2],
  item: { idx: number; operation: string; decision: ItemDecision },
  count: number,
  mode: string,
): Promise<void> {
  const { decided } = await askPolicy(tx, write, { ...request, operation: write.name }, input, { changeset: { item: item.idx, items: count, mode } });
  if (strictness[decided.decision] <= strictness[item.decision]) return;
  throw new AppError(
    'conflict',
    `item ${item.idx} (${item.operation}) was ${item.decision === 'allow' ? 'allowed' : 'held'} with the items before it applied; without the rejected ones the policy would now ${decided.decision === 'deny' ? 'deny' : 'hold'} it (${decided.reason}), so nothing was applied`,
    { item: item.idx, decision: decided.decision, policy_ids: decided.policyIds },
  );
}

/**
 * The record before an item's write, as an undo will restore it: an update that changed nothing wrote no version
 * (its result is the record as it is), so undoing it restores that, never the older record its decision saw.
 */
function keptBefore(write: GatedWrite, before: Record<string, unknown> | null, result: unknown): string | null {
  if (!before) return null;
  const version = (result as { version?: unknown } | null)?.version;
  const wrote = write.record?.kind !== 'update' || typeof before.version !== 'number' || version === before.version + 1;
  return JSON.stringify(wrote ? before : json(result));
}

export async function applyHeldChangeset(db: Database, writeOf: WriteOf, workflowId: string, request: GatedWriteRequest, reviewId: string): Promise<unknown> {
  return db.transaction(async (tx) => {
    const { rows: reviews } = await tx.query(
      `SELECT r.status, r.changeset_id, c.mode FROM reviews r JOIN changesets c ON c.id = r.changeset_id
       WHERE r.id = $1 AND r.workflow_id = $2 AND r.org_id = $3 FOR UPDATE OF r`,
      [reviewId, workflowId, request.orgId],
    );
    const review = reviews[0];
    if (review?.status !== 'approved') throw new ReviewNotApprovedError(`review ${reviewId} is ${review?.status ?? 'missing'}, not approved`);
    const claim = await tx.query(
      `INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result)
       VALUES ($1, $2, $3, 'Changeset', '', 'null') ON CONFLICT (workflow_id) DO NOTHING`,
      [workflowId, request.orgId, changesetOperation],
    );
    if (!claim.rowCount) return (await tx.query('SELECT result FROM applied_writes WHERE workflow_id = $1', [workflowId])).rows[0].result;

    const changesetId: string = review.changeset_id;
    // A reviewer's edit: each item as the version the review points at holds it (input, the record its decision saw,
    // and that decision), else as the agent sent it.
    const { rows: items } = await tx.query(
      `SELECT i.idx, i.ref, i.operation, coalesce(v.input, i.input) AS input, CASE WHEN v.idx IS NULL THEN i.before ELSE v.before END AS before,
              i.verdict, coalesce(v.decision, i.decision) AS decision
       FROM changeset_items i JOIN reviews r ON r.changeset_id = i.changeset_id
       LEFT JOIN changeset_item_edits v ON v.edit_id = r.edit_id AND v.idx = i.idx
       WHERE i.changeset_id = $1 AND r.id = $2 ORDER BY i.idx`,
      [changesetId, reviewId],
    );
    const ids = new Map<string, string>();
    const by = { apiKeyId: request.apiKey.id, abilities: request.apiKey.abilities };
    const rejected = items.some((item) => item.verdict === 'rejected');
    for (const item of items) {
      if (item.verdict === 'rejected') continue;
      const write = writeOf(item.operation);
      if (!write) throw new AppError('conflict', `item ${item.idx} holds ${item.operation}, which this version of Gatehouse does not know`);
      try {
        const input = write.input.parse(resolveRefs(item.input, ids));
        // Each item was decided with every item before it applied. Without the rejected ones, what the kept ones see
        // differs (a rejected item may have been what made a later one allowed), so each is asked again, and one the
        // policy would now decide more strictly refuses the whole: nothing is applied.
        if (rejected) await assertNoStricterNow(tx, write, request, input, item, items.length, review.mode);
        const applied = await write.apply(tx, request.orgId, input, { before: item.before ?? undefined }, by);
        if (item.ref) ids.set(item.ref, applied.resourceId);
        await tx.query(
          'UPDATE changeset_items SET applied_id = $3, result = $4, applied_before = $5, applied_at = now() WHERE changeset_id = $1 AND idx = $2',
          [changesetId, item.idx, applied.resourceId, JSON.stringify(json(applied.result)), keptBefore(write, item.before, applied.result)],
        );
      } catch (error) {
        throw itemRefusal(error, item.idx, item.operation);
      }
    }
    const outcomes = await itemOutcomes(tx, changesetId);
    const result = { changeset_id: changesetId, mode: review.mode, items: outcomes };
    await recordChangesetApplied(tx, { workflowId, request, changesetId, items: outcomes, result, claimed: true, reviewId });
    await tx.query('UPDATE changesets SET applied_at = now() WHERE id = $1', [changesetId]);
    await tx.query('UPDATE reviews SET applied_at = now(), result = $2 WHERE id = $1', [reviewId, JSON.stringify(result)]);
    return result;
  });
}
