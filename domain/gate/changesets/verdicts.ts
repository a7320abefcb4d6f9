import type { Queryable } from '../../../db/database';
import { recordAudit } from '../../audit/events';
import { AppError, invalidFields, type FieldProblem } from '../../kit/errors';
import { refNames, refPrefix } from './schema';

/**
 * A reviewer's verdict on one item of a held changeset, given with their approval of the whole: rejected (a
 * divisible changeset only), or approved, perhaps with an edit (any changeset; see ./edits.ts).
 */
export interface ItemVerdict {
  index: number;
  verdict: 'approved' | 'rejected';
  reason?: string;
  /** Fields to change over the item's input as it is approved (a create or update item only). */
  edit?: Record<string, unknown>;
}

/** The held changeset of a review being decided (see recordVerdict). */
export interface HeldChangeset {
  reviewId: string;
  orgId: string;
  workflowId: string;
  changesetId: string | null;
  mode: string | null;
}

/** A held changeset's item as a verdict checks it. */
export interface HeldItem {
  idx: number;
  ref: string | null;
  operation: string;
  /** As the agent sent it ($ref:… kept). */
  input: Record<string, unknown>;
  verdict: 'approved' | 'rejected' | null;
}

/** The items a check of verdicts found, and the items left out once they are recorded (rejected before, or now). */
export interface CheckedItemVerdicts {
  items: HeldItem[];
  rejected: ReadonlySet<number>;
}

/**
 * Checks a reviewer's per-item verdicts on a changeset, in the verdict's transaction, writing nothing: each names an
 * item once; only a divisible changeset has items rejected, each with a reason, and a rejected item stays rejected
 * (another approver's "approved" of it is refused with 409); the items left must not refer to a record a rejected item
 * would make, and at least one must be left (else deny the whole).
 */
export async function checkItemVerdicts(tx: Queryable, held: HeldChangeset, verdicts: ItemVerdict[]): Promise<CheckedItemVerdicts> {
  if (!held.changesetId) {
    throw invalidFields([{ field: 'items', message: `review ${held.reviewId} holds a single write, not a changeset: approve or deny it whole` }]);
  }
  if (held.mode !== 'divisible' && verdicts.some((given) => given.verdict === 'rejected')) {
    throw invalidFields([
      {
        field: 'items',
        message:
          'this changeset is all_or_nothing: its items are not rejected one by one; approve it whole (editing items if need be) or deny it (the agent marks a changeset divisible to let a reviewer reject items)',
      },
    ]);
  }
  // Each item as the review holds it now: a reviewer's edit may have changed what it refers to.
  const { rows } = await tx.query<HeldItem>(
    `SELECT i.idx, i.ref, i.operation, coalesce(v.input, i.input) AS input, i.verdict
     FROM changeset_items i JOIN reviews r ON r.changeset_id = i.changeset_id LEFT JOIN changeset_item_edits v ON v.edit_id = r.edit_id AND v.idx = i.idx
     WHERE i.changeset_id = $1 AND r.id = $2 ORDER BY i.idx`,
    [held.changesetId, held.reviewId],
  );
  const problems: FieldProblem[] = [];
  const seen = new Set<number>();
  verdicts.forEach((given, k) => {
    if (!rows[given.index]) problems.push({ field: `items.${k}.index`, message: `the changeset has items 0 to ${rows.length - 1}` });
    else if (seen.has(given.index)) problems.push({ field: `items.${k}.index`, message: `item ${given.index} is given twice` });
    seen.add(given.index);
    if (given.verdict === 'rejected' && !given.reason?.trim()) problems.push({ field: `items.${k}.reason`, message: 'a rejected item needs a reason' });
    if (given.verdict === 'rejected' && given.edit !== undefined) problems.push({ field: `items.${k}.edit`, message: 'an item is edited only as it is approved' });
  });
  if (problems.length) throw invalidFields(problems);
  // What a person approves (and may sign) is what happens: an item another reviewer rejected is not approved again.
  const overruled = verdicts.find((given) => given.verdict === 'approved' && rows[given.index]!.verdict === 'rejected');
  if (overruled) {
    throw new AppError('conflict', `item ${overruled.index} was rejected by another reviewer and stays rejected; read the review again and approve without it`, {
      status: 'pending',
      item: overruled.index,
    });
  }

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
  return { items: rows, rejected };
}

/**
 * Records a reviewer's per-item verdicts on a changeset (checked first, see checkItemVerdicts), in the verdict's
 * transaction, with an audit event for each rejected item.
 */
export async function recordItemVerdicts(tx: Queryable, held: HeldChangeset, person: { userId: string }, verdicts: ItemVerdict[]): Promise<void> {
  const { items: rows } = await checkItemVerdicts(tx, held, verdicts);
  const changesetId = held.changesetId!;
  for (const given of verdicts) {
    const row = rows[given.index]!;
    if (row.verdict === 'rejected') continue;
    await tx.query('UPDATE changeset_items SET verdict = $3, verdict_reason = $4, verdict_by = $5 WHERE changeset_id = $1 AND idx = $2', [
      changesetId,
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
        data: { changeset_id: changesetId, item: given.index, operation: row.operation, reason: given.reason!.trim() },
      });
    }
  }
}
