import type { Queryable } from '../../../db/database';
import { recordAudit } from '../../audit/events';
import { AppError, asRefusal, invalidFields, type FieldProblem } from '../../kit/errors';
import type { GatedWriteRequest } from '../contract';
import { recordReviewEdit } from '../reviews/edits';
import { changesetResource, decidedWhole, proposeItems, type ProposedItem, type WriteOf } from './decide';
import { changesetOperation, changesetShape, refPrefix, refsIn, type ChangesetInput } from './schema';
import type { CheckedItemVerdicts, ItemVerdict } from './verdicts';

// Edit-then-approve for a held changeset: a reviewer changes fields of some items as they approve it. The changeset
// as edited is a new version of the held write (a review_edits row, as a single write's edit), decided by the policy
// again in the verdict's transaction, each item as if alone as at submission (./decide.ts proposeItems, inside a
// savepoint that is always rolled back: nothing is written until the review is approved and the workflow applies
// the version the review points at).

/** Fields of a write that name its record or guard it; a reviewer's edit never changes them. */
const fixedFields = ['id', 'if_match'];

/** Only a create or an update item can be edited, as a single held write. */
const editable = (operation: string) => /\.(create|update)$/.test(operation);

/** The held changeset an edit changes, as the locked review tells it. */
export interface HeldChangesetReview {
  id: string;
  orgId: string;
  workflowId: string;
  changesetId: string;
  /** The agent's changeset, as its decision recorded it. */
  input: Record<string, unknown>;
  /** The version the review holds now (an earlier reviewer's edit), if any. */
  edit: { id: string; input: Record<string, unknown> } | null;
  apiKey: GatedWriteRequest['apiKey'];
  interface: GatedWriteRequest['interface'];
}

/** An edit of a changeset's items that the policy denied: the approval is refused, naming the items and why. */
export class ItemEditDeniedError extends AppError {
  constructor(editId: string, items: ProposedItem[], reason: string, policyIds: string[]) {
    super('policy_denied', `Denied by policy: ${reason}. The edit was not applied, nor the approval counted; the review still waits with the changeset it held.`, {
      reason,
      decision_id: editId,
      edit_id: editId,
      policy_ids: policyIds,
      denied_items: items.map((item) => item.index),
      items: items.map((item) => ({ index: item.index, operation: item.write.name, decision: item.decision, reason: item.reason, policy_ids: item.policyIds })),
    });
  }
}

/** The edits an approval carries: each with where it stands in the approval's `items` (k) and the item it names. */
function editsOf(verdicts: ItemVerdict[]): { k: number; index: number; edit: Record<string, unknown> }[] {
  return verdicts.flatMap((given, k) => (given.edit !== undefined && given.verdict === 'approved' ? [{ k, index: given.index, edit: given.edit }] : []));
}

/** Whether an approval edits any item. */
export const editsItems = (verdicts: ItemVerdict[] | undefined): boolean => editsOf(verdicts ?? []).length > 0;

/**
 * Only a create or update item can be edited (checked before who may approve it, as for a single write: what cannot
 * be edited at all is told first, whoever asks).
 */
export function assertItemsEditable(checked: CheckedItemVerdicts, writeOf: WriteOf, verdicts: ItemVerdict[]): void {
  const problems: FieldProblem[] = [];
  for (const { k, index } of editsOf(verdicts)) {
    const operation = checked.items[index]!.operation;
    if (!editable(operation) || !writeOf(operation)) {
      problems.push({ field: `items.${k}.edit`, message: `only a create or update item can be edited; item ${index} is ${operation}` });
    }
  }
  if (problems.length) throw invalidFields(problems);
}

/** The fields whose values differ between two versions of an input, as its write's schema reads them. */
function fieldsChanged(from: Record<string, unknown>, to: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(from), ...Object.keys(to)])].filter((field) => JSON.stringify(from[field]) !== JSON.stringify(to[field])).sort();
}

/**
 * The changeset as edited: each edited item's fields changed over the item as the review holds it now (the agent's,
 * or an earlier reviewer's edit), valid for its write, its `$ref:`s naming earlier items that are kept. A problem
 * names the approval's field (`items.0.edit.due_on`); an edit that changes nothing of its item is refused.
 */
function editedChangeset(
  held: HeldChangesetReview,
  checked: CheckedItemVerdicts,
  writeOf: WriteOf,
  verdicts: ItemVerdict[],
): { changeset: ChangesetInput; agents: ChangesetInput; editedNow: Map<number, string[]> } {
  const agents = changesetShape.parse(held.input);
  const current = held.edit ? changesetShape.parse(held.edit.input) : agents;
  const items = current.items.map((item) => ({ ...item }));
  const problems: FieldProblem[] = [];
  const editedNow = new Map<number, string[]>();
  for (const { k, index, edit } of editsOf(verdicts)) {
    const item = items[index]!;
    const write = writeOf(item.operation)!;
    const fixed = Object.keys(edit).filter((field) => fixedFields.includes(field));
    for (const field of fixed) problems.push({ field: `items.${k}.edit.${field}`, message: 'names the record; it cannot be edited' });
    for (const { path, name } of refsIn(edit)) {
      const by = items.findIndex((earlier, at) => at < index && earlier.ref === name);
      if (by < 0 || checked.rejected.has(by)) {
        problems.push({
          field: `items.${k}.edit.${path.join('.')}`,
          message:
            by < 0
              ? `refers to ${refPrefix}${name}, which no earlier item defines (an item may refer only to the ref of an item before it)`
              : `refers to ${refPrefix}${name}, made by item ${by}, which is rejected`,
        });
      }
    }
    if (fixed.length) continue;
    const parsed = write.input.safeParse({ ...item.input, ...edit });
    if (!parsed.success) {
      const fields = (asRefusal(parsed.error)!.details?.fields ?? []) as FieldProblem[];
      problems.push(...fields.map((problem) => ({ ...problem, field: `items.${k}.edit.${problem.field}` })));
      continue;
    }
    const edited = parsed.data as Record<string, unknown>;
    if (fieldsChanged(write.input.parse(item.input) as Record<string, unknown>, edited).length === 0) {
      problems.push({ field: `items.${k}.edit`, message: `changes nothing of item ${index} as the review holds it; approve it as it is, or change a field` });
      continue;
    }
    items[index] = { ...item, input: edited };
    editedNow.set(index, fieldsChanged(write.input.parse(agents.items[index]!.input) as Record<string, unknown>, edited));
  }
  if (problems.length) throw invalidFields(problems);
  return { changeset: { mode: current.mode, items }, agents, editedNow };
}

/**
 * Each item of the edited changeset decided by the policy again, as at submission (the items before it applied
 * inside a savepoint, rejected ones left out), an edited item with its editor in the context (`context.editor`), as a
 * single write's edit. The savepoint is rolled back whatever the answer. A refusal of an edited item (a reference to
 * another organization's record, say) names the approval's field when the edit brought it.
 */
async function decideAgain(
  tx: Queryable,
  held: HeldChangesetReview,
  writeOf: WriteOf,
  changeset: ChangesetInput,
  skip: ReadonlySet<number>,
  editor: { userId: string; role: string },
  editedNow: Map<number, string[]>,
  verdicts: ItemVerdict[],
): Promise<ProposedItem[]> {
  await tx.query('SAVEPOINT changeset_edit');
  let proposed: ProposedItem[];
  try {
    proposed = await proposeItems(tx, writeOf, held, changeset, {
      skip,
      contextOf: (index) => (editedNow.has(index) ? { editor: { id: editor.userId, role: editor.role } } : {}),
    });
  } catch (error) {
    throw asEditRefusal(error, verdicts);
  }
  await tx.query('ROLLBACK TO SAVEPOINT changeset_edit');
  await tx.query('RELEASE SAVEPOINT changeset_edit');
  return proposed;
}

/** An item's refusal (`items.<index>.input.<field>`) as the approval's edit field that brought it (`items.<k>.edit.<field>`). */
function asEditRefusal(error: unknown, verdicts: ItemVerdict[]): unknown {
  if (!(error instanceof AppError) || typeof error.details?.item !== 'number') return error;
  const index = error.details.item;
  const k = verdicts.findIndex((given) => given.index === index && given.edit !== undefined);
  const fields = error.details.fields as FieldProblem[] | undefined;
  if (k < 0 || !fields) return error;
  const prefix = `items.${index}.input.`;
  const renamed = fields.map((problem) => {
    const field = problem.field.startsWith(prefix) ? problem.field.slice(prefix.length) : undefined;
    return field !== undefined && Object.hasOwn(verdicts[k]!.edit!, field.split('.')[0]!) ? { ...problem, field: `items.${k}.edit.${field}` } : problem;
  });
  const message = `item ${index} (${String(error.details.operation)}): The request is not valid: ${renamed.map((f) => `${f.field}: ${f.message}`).join('; ')}`;
  return new AppError(error.code, message, { ...error.details, fields: renamed });
}

/**
 * A reviewer changes fields of items of a held changeset as they approve it, in the transaction that holds the
 * review's lock. The edited changeset is decided by the policy again, every item kept, as at submission:
 * - Deny (any item): the edit is refused, recorded with its decision (as a single write's refused edit), and the
 *   review waits with the version it held; the approval is not counted;
 * - Allow (every item): the editor's approval applies the edited changeset (one approval needed);
 * - Review: the editor's approval counts as the first of those the new decision asks for (its most demanding item's).
 * Approvals given to the earlier version do not carry over. The audit keeps the version (review.edited) and each item
 * edited (changeset.item_edited); what the workflow applies is the version the review points at.
 */
export async function editHeldChangeset(
  tx: Queryable,
  held: HeldChangesetReview,
  writeOf: WriteOf,
  editor: { userId: string; role: string },
  verdicts: ItemVerdict[],
  checked: CheckedItemVerdicts,
): Promise<{ editId: string; approvalsRequired: number } | { refusal: ItemEditDeniedError }> {
  const { changeset, agents, editedNow } = editedChangeset(held, checked, writeOf, verdicts);
  const proposed = await decideAgain(tx, held, writeOf, changeset, checked.rejected, editor, editedNow, verdicts);
  const whole = decidedWhole(proposed);

  // Who changed each item's fields: this editor for the items edited now, an earlier editor for the ones they did.
  const earlier = new Map<number, { edited_by: string; edited_at: Date }>();
  if (held.edit) {
    const { rows } = await tx.query('SELECT idx, edited_by, edited_at FROM changeset_item_edits WHERE edit_id = $1 AND edited_by IS NOT NULL', [held.edit.id]);
    for (const row of rows) earlier.set(row.idx, row);
  }
  const fieldsOf = (item: ProposedItem) =>
    editedNow.get(item.index) ??
    fieldsChanged(item.write.input.parse(agents.items[item.index]!.input) as Record<string, unknown>, item.write.input.parse(changeset.items[item.index]!.input) as Record<string, unknown>);
  const itemFields = new Map(proposed.map((item) => [item.index, fieldsOf(item)]));

  const fields = proposed.flatMap((item) => itemFields.get(item.index)!.map((field) => `items.${item.index}.${field}`));
  const editId = await recordReviewEdit(tx, held, editor, {
    fields,
    input: changeset,
    resource: changesetResource(held.changesetId, changeset.mode, proposed),
    context: { interface: held.interface, operation: changesetOperation, item_count: changeset.items.length, mode: changeset.mode, editor: { id: editor.userId, role: editor.role } },
    decided: whole,
  });
  for (const item of proposed) {
    const changed = itemFields.get(item.index)!;
    const by = editedNow.has(item.index) ? { edited_by: editor.userId, edited_at: null } : changed.length ? earlier.get(item.index) : undefined;
    await tx.query(
      `INSERT INTO changeset_item_edits (edit_id, changeset_id, idx, org_id, input, fields, edited_by, edited_at, decision, reason, policy_ids, approvals_required, resource, before, context)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $7::text IS NULL THEN NULL ELSE coalesce($8::timestamptz, now()) END, $9, $10, $11, $12, $13, $14, $15)`,
      [
        editId,
        held.changesetId,
        item.index,
        held.orgId,
        JSON.stringify(changeset.items[item.index]!.input),
        changed,
        by?.edited_by ?? null,
        by?.edited_at ?? null,
        item.decision,
        item.reason,
        item.policyIds,
        item.approvalsRequired,
        JSON.stringify(item.resource),
        item.before ? JSON.stringify(item.before) : null,
        JSON.stringify(item.context),
      ],
    );
  }
  const actor = { type: 'user' as const, id: editor.userId };
  for (const item of proposed.filter((proposal) => editedNow.has(proposal.index))) {
    await recordAudit(tx, held.orgId, {
      type: 'changeset.item_edited',
      actor,
      workflowId: held.workflowId,
      reviewId: held.id,
      data: {
        changeset_id: held.changesetId,
        item: item.index,
        operation: item.write.name,
        edit_id: editId,
        fields: editedNow.get(item.index)!,
        decision: item.decision,
        reason: item.reason,
        policyIds: item.policyIds,
      },
    });
  }
  if (whole.decision === 'deny') {
    return { refusal: new ItemEditDeniedError(editId, proposed.filter((item) => item.decision === 'deny'), whole.reason, whole.policyIds) };
  }
  const approvalsRequired = whole.decision === 'review' ? whole.approvalsRequired : 1;
  await tx.query('DELETE FROM review_approvals WHERE review_id = $1', [held.id]);
  await tx.query('UPDATE reviews SET edit_id = $2, approvals_required = $3 WHERE id = $1', [held.id, editId, approvalsRequired]);
  return { editId, approvalsRequired };
}
