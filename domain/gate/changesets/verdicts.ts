import type { Queryable } from '../../../db/database';
import { recordAudit } from '../../audit/events';
import { AppError, invalidFields, type FieldProblem } from '../../kit/errors';
import { refNames, refPrefix } from './schema';

/** A reviewer's verdict on one item of a divisible changeset, given with their approval of the whole. */
export interface ItemVerdict {
  index: number;
  verdict: 'approved' | 'rejected';
  reason?: string;
}

/** The held changeset of a review being decided (see recordVerdict). */
export interface HeldChangeset {
  reviewId: string;
  orgId: string;
  workflowId: string;
  changesetId: string | null;
  mode: string | null;
}

/**
 * Records a reviewer's per-item verdicts on a divisible changeset, in the verdict's transaction: a rejected item
 * needs a reason, and stays rejected (another approver's "approved" does not bring it back); the items left must
 * not refer to a record a rejected item would make, and at least one must be left (else deny the whole).
 */
export async function recordItemVerdicts(tx: Queryable, held: HeldChangeset, person: { userId: string }, verdicts: ItemVerdict[]): Promise<void> {
  if (!held.changesetId) {
    throw invalidFields([{ field: 'items', message: `review ${held.reviewId} holds a single write, not a changeset: approve or deny it whole` }]);
  }
  if (held.mode !== 'divisible') {
    throw invalidFields([{ field: 'items', message: 'this changeset is all_or_nothing: approve or deny it whole (the agent marks a changeset divisible to let a reviewer decide its items)' }]);
  }
  const { rows } = await tx.query('SELECT idx, ref, operation, input, verdict FROM changeset_items WHERE changeset_id = $1 ORDER BY idx', [held.changesetId]);
  const problems: FieldProblem[] = [];
  const seen = new Set<number>();
  verdicts.forEach((given, k) => {
    if (!rows[given.index]) problems.push({ field: `items.${k}.index`, message: `the changeset has items 0 to ${rows.length - 1}` });
    else if (seen.has(given.index)) problems.push({ field: `items.${k}.index`, message: `item ${given.index} is given twice` });
    seen.add(given.index);
    if (given.verdict === 'rejected' && !given.reason?.trim()) problems.push({ field: `items.${k}.reason`, message: 'a rejected item needs a reason' });
  });
  if (problems.length) throw invalidFields(problems);

  const rejected = new Set<number>(rows.filter((row) => row.verdict === 'rejected').map((row) => row.idx));
  for (const given of verdicts) if (given.verdict === 'rejected') rejected.add(given.index);
  if (rejected.size === rows.length) {
    throw invalidFields([{ field: 'items', message: 'every item would be rejected: deny the review instead' }]);
  }
  // An item kept must not refer to the record of a rejected one: that record will never exist.
  const rejectedRefs = new Map(rows.filter((row) => rejected.has(row.idx) && row.ref).map((row) => [row.ref as string, row.idx as number]));
  for (const row of rows) {
    if (rejected.has(row.idx)) continue;
    const missing = refNames(row.input).find((name) => rejectedRefs.has(name));
    if (missing !== undefined) {
      throw new AppError(
        'validation_failed',
        `item ${row.idx} (${row.operation}) refers to ${refPrefix}${missing}, made by item ${rejectedRefs.get(missing)}, which is rejected: reject item ${row.idx} too, or approve item ${rejectedRefs.get(missing)}`,
        { fields: [{ field: 'items', message: `item ${row.idx} depends on rejected item ${rejectedRefs.get(missing)}` }], item: row.idx, depends_on: rejectedRefs.get(missing) },
      );
    }
  }
  for (const given of verdicts) {
    const row = rows[given.index]!;
    if (row.verdict === 'rejected') continue;
    await tx.query('UPDATE changeset_items SET verdict = $3, verdict_reason = $4, verdict_by = $5 WHERE changeset_id = $1 AND idx = $2', [
      held.changesetId,
      given.index,
      given.verdict,
      given.reason?.trim() || null,
      person.userId,
    ]);
    if (given.verdict === 'rejected') {
      await recordAudit(tx, held.orgId, {
        type: 'changeset.item_rejected',
        actor: { type: 'user', id: person.userId },
        workflowId: held.workflowId,
        reviewId: held.reviewId,
        data: { changeset_id: held.changesetId, item: given.index, operation: row.operation, reason: given.reason!.trim() },
      });
    }
  }
}
