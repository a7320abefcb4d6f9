import type { Database, Queryable } from '../../db/database';
import { AppError, type ErrorCode } from '../kit/errors';
import { auditInsert, recordAudit } from '../audit/events';
import type { GatedWriteRequest } from './contract';
import type { JustDecided } from './decide';
import type { AppliedResource, GatedWrite } from './writes';

/** A held write whose review no person approved: it must never run, and retrying cannot change that. */
export class ReviewNotApprovedError extends Error {
  override name = 'ReviewNotApproved';
}

/**
 * Runs the write, its audit record and its bookkeeping in one transaction, at most once per workflow.
 * A write held for review runs only if its review record says a person approved it.
 */
export async function applyGatedWrite(
  db: Database,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  reviewId?: string,
): Promise<unknown> {
  return db.transaction((tx) => applyIn(tx, write, workflowId, request, { reviewId }));
}

/**
 * applyGatedWrite inside a transaction of the caller's, so that a write can be decided and applied in one.
 * `justAllowed`: the write was allowed by a decision this very transaction recorded. No other attempt can have
 * applied it (a concurrent run of the workflow waits on the decision's key, then finds decision and write both),
 * so it runs at once: no reading the decision back, no claim before the write.
 */
export async function applyIn(
  tx: Queryable,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  { reviewId, justAllowed }: { reviewId?: string; justAllowed?: JustDecided } = {},
): Promise<unknown> {
  const by = { apiKeyId: request.apiKey.id, abilities: request.apiKey.abilities };
  if (justAllowed) {
    const applied = await write.apply(tx, request.orgId, justAllowed.input, { before: justAllowed.before, workflowId }, by);
    const undo = undoColumns(write, justAllowed.before, applied.result);
    await recordApplied(tx, write, workflowId, request, applied, {
      sql: `INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result, record_table, write_kind, before)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      values: [workflowId, request.orgId, request.operation, applied.resourceType ?? write.resourceType, applied.resourceId, JSON.stringify(applied.result), ...undo],
    });
    return applied.result;
  }
  let input = write.input.parse(request.input);
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
  let before = decided.context?.before;
  if (decided.decision === 'review') {
    const { rows } = await tx.query(
      `SELECT r.status, e.input AS edited_input, e.context AS edited_context
       FROM reviews r LEFT JOIN review_edits e ON e.id = r.edit_id WHERE r.id = $1 AND r.workflow_id = $2 FOR UPDATE OF r`,
      [reviewId ?? '', workflowId],
    );
    if (rows[0]?.status !== 'approved') {
      throw new ReviewNotApprovedError(`review ${reviewId ?? '(none)'} is ${rows[0]?.status ?? 'missing'}, not approved`);
    }
    // A reviewer edited the write before approving: the edit runs, against the record as its own decision saw it.
    if (rows[0].edited_input) {
      input = write.input.parse(rows[0].edited_input);
      before = rows[0].edited_context?.before;
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

  const applied = await write.apply(tx, request.orgId, input, { before, workflowId }, by);
  await recordApplied(
    tx,
    write,
    workflowId,
    request,
    applied,
    {
      sql: 'UPDATE applied_writes SET resource_id = $2, result = $3, resource_type = $4, record_table = $5, write_kind = $6, before = $7 WHERE workflow_id = $1',
      values: [workflowId, applied.resourceId, JSON.stringify(applied.result), applied.resourceType ?? write.resourceType, ...undoColumns(write, before, applied.result)],
    },
    reviewId,
  );
  return applied.result;
}

/**
 * What an undo will need, kept with the applied write: the record's table, the kind of write, and the record before
 * it (the very row the policy saw and the write landed on: updates and deletes run only at that version).
 */
function undoColumns(write: GatedWrite, before: Record<string, unknown> | undefined, result: unknown): [string | null, string | null, string | null] {
  if (!write.record) return [null, null, null];
  if (write.record.kind !== 'create' && !before) return [null, null, null];
  // An update that changed nothing wrote no version (its result is the record as it is, perhaps changed by others
  // since the decision): undoing it restores that record, never the older one the decision saw.
  const version = (result as { version?: unknown } | null)?.version;
  const wrote = write.record.kind !== 'update' || typeof before?.version !== 'number' || version === before.version + 1;
  return [write.record.table, write.record.kind, write.record.kind === 'create' ? null : JSON.stringify(wrote ? before : result)];
}

/**
 * An applied write's bookkeeping in one statement: where the write is kept (`kept`, a data-modifying statement
 * whose parameters start at $1), the result on its review when a person approved it, and its audit record.
 */
async function recordApplied(
  tx: Queryable,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  applied: AppliedResource,
  kept: { sql: string; values: unknown[] },
  reviewId?: string,
): Promise<void> {
  const values = [...kept.values];
  let reviewed = '';
  if (reviewId) {
    values.push(reviewId, JSON.stringify(applied.result));
    reviewed = `, reviewed AS (UPDATE reviews SET applied_at = now(), result = $${values.length}::jsonb WHERE id = $${values.length - 1}::text)`;
  }
  const audit = auditInsert(
    request.orgId,
    {
      type: 'write.applied',
      actor: { type: 'api_key', id: request.apiKey.id },
      workflowId,
      reviewId,
      resourceType: applied.resourceType ?? write.resourceType,
      resourceId: applied.resourceId,
      data: { operation: request.operation },
    },
    { first: values.length + 1 },
  );
  await tx.query(`WITH kept AS (${kept.sql})${reviewed} ${audit.sql}`, [...values, ...audit.values]);
}

/** An approved write that could not be applied: said on the review and in the audit trail. */
export async function recordApplyFailure(
  db: Database,
  workflowId: string,
  reviewId: string,
  failure: { code: ErrorCode; message: string },
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
