import type { Queryable } from '../../../db/database';
import { recordAudit } from '../../audit/events';
import { AppError } from '../../kit/errors';
import { newId } from '../../kit/ids';
import type { GatedWriteRequest } from '../contract';
import { askPolicy } from '../decide';
import type { GatedWrite } from '../writes';

/** Fields of a write that name its record or guard it; a reviewer's edit never changes them. */
const fixedFields = ['id', 'if_match'];

/** The held write an edit changes, as the locked review tells it. */
export interface HeldWrite {
  id: string;
  orgId: string;
  workflowId: string;
  operation: string;
  /** The agent's input, as the decision recorded it. */
  input: Record<string, unknown>;
  apiKey: GatedWriteRequest['apiKey'];
  interface: GatedWriteRequest['interface'];
  /** The reviewer's edit the review holds now, if one was made. */
  edit: { id: string; input: Record<string, unknown> } | null;
}

/** What an edit the policy denied was told: the answer is a 403 with the decision recorded. */
export class EditDeniedError extends AppError {
  constructor(
    readonly editId: string,
    readonly reason: string,
    readonly policyIds: string[],
  ) {
    super('policy_denied', `Denied by policy: ${reason}. The edit was not applied; the review still waits with the agent's version.`, {
      reason,
      // The edit's decision is recorded on the edit itself: its id is the decision's.
      decision_id: editId,
      edit_id: editId,
      policy_ids: policyIds,
    });
  }
}

/** An edit the policy denied: recorded, and the person told once the transaction has committed. */
export interface EditRefused {
  refusal: EditDeniedError;
}

/** Only a held create or update can be edited (checked before who may approve it, as the answer's order has it). */
export function assertEditable(held: HeldWrite, write: GatedWrite): void {
  if (!/\.(create|update)$/.test(held.operation) || held.operation !== write.name) {
    throw new AppError('validation_failed', `only a held create or update can be edited; this review holds ${held.operation}`, {
      fields: [{ field: 'edit', message: 'a held create or update only' }],
    });
  }
}

/**
 * A reviewer changes the fields of a held create or update as they approve it, in the transaction that holds the
 * review's lock. The edited write goes through the policy again, with the agent's key as the principal and the
 * editor in the context (`context.editor`), as a new decision bound to the edited input:
 * - Deny: the edit is refused (recorded, with its decision) and the review waits with the agent's version;
 * - Allow: the editor's approval applies the edited write (one approval needed);
 * - Review: the editor's approval counts as the first of those the new decision asks for (no loop).
 * Approvals given to the agent's version do not carry over to the edit. The audit keeps the agent's version (its
 * decision), the edit and its decision, and the approvals; the write that runs is the edited one.
 */
export async function editHeldWrite(
  tx: Queryable,
  held: HeldWrite,
  write: GatedWrite,
  editor: { userId: string; role: string },
  changes: Record<string, unknown>,
): Promise<{ editId: string; approvalsRequired: number } | EditRefused> {
  assertEditable(held, write);
  const fixed = Object.keys(changes).filter((field) => fixedFields.includes(field));
  if (fixed.length > 0) {
    throw new AppError('validation_failed', `an edit cannot change ${fixed.join(', ')}`, {
      fields: fixed.map((field) => ({ field: `edit.${field}`, message: 'names the record; it cannot be edited' })),
    });
  }
  const parsed = write.input.safeParse({ ...held.input, ...changes });
  if (!parsed.success) {
    throw new AppError('validation_failed', `the edited write is not valid: ${parsed.error.issues.map((issue) => `edit.${issue.path.join('.')}: ${issue.message}`).join('; ')}`, {
      fields: parsed.error.issues.map((issue) => ({ field: `edit.${issue.path.join('.')}`, message: issue.message })),
    });
  }
  // What changes is read through the write's schema on both sides, defaults filled in: the agent's version, and
  // the version the review holds now (an earlier edit's). An edit that changes nothing of it is refused.
  const agents = write.input.parse(held.input) as Record<string, unknown>;
  const edited = parsed.data as Record<string, unknown>;
  const differs = (from: Record<string, unknown>) =>
    [...new Set([...Object.keys(from), ...Object.keys(edited)])].filter((field) => JSON.stringify(from[field]) !== JSON.stringify(edited[field])).sort();
  const fields = differs(agents);
  if (differs(held.edit ? (write.input.parse(held.edit.input) as Record<string, unknown>) : agents).length === 0) {
    throw new AppError('validation_failed', 'the edit changes nothing of the write the review holds; approve it as it is, or change a field', {
      fields: [{ field: 'edit', message: 'changes nothing' }],
    });
  }
  const { proposal, version, decided, context } = await askPolicy(
    tx,
    write,
    { orgId: held.orgId, operation: held.operation, interface: held.interface, apiKey: held.apiKey },
    parsed.data,
    { editor: { id: editor.userId, role: editor.role } },
  );
  const editId = await recordReviewEdit(tx, held, editor, {
    fields,
    input: parsed.data,
    resource: proposal.resource,
    context,
    decided: { ...decided, policyVersion: version },
  });
  if (decided.decision === 'deny') return { refusal: new EditDeniedError(editId, decided.reason, decided.policyIds) };

  const approvalsRequired = decided.decision === 'review' ? (decided.approvals ?? 1) : 1;
  await tx.query('DELETE FROM review_approvals WHERE review_id = $1', [held.id]);
  await tx.query('UPDATE reviews SET edit_id = $2, approvals_required = $3 WHERE id = $1', [held.id, editId, approvalsRequired]);
  return { editId, approvalsRequired };
}

/**
 * Records a reviewer's edit of a held write (a single write's, or a changeset's as a whole): the version it makes,
 * the policy's decision on it, and its `review.edited` audit event. Answers the edit's id (edt_…).
 */
export async function recordReviewEdit(
  tx: Queryable,
  held: { id: string; orgId: string; workflowId: string },
  editor: { userId: string },
  edit: {
    fields: string[];
    input: unknown;
    resource: unknown;
    context: unknown;
    decided: { decision: string; reason: string; policyIds: string[]; policyVersion: unknown };
  },
): Promise<string> {
  const editId = newId('edt');
  const { decided } = edit;
  await tx.query(
    `INSERT INTO review_edits (id, review_id, org_id, edited_by, fields, input, resource, context, decision, reason, policy_ids, policy_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      editId,
      held.id,
      held.orgId,
      editor.userId,
      edit.fields,
      JSON.stringify(edit.input),
      JSON.stringify(edit.resource),
      JSON.stringify(edit.context),
      decided.decision,
      decided.reason,
      decided.policyIds,
      decided.policyVersion,
    ],
  );
  await recordAudit(tx, held.orgId, {
    type: 'review.edited',
    actor: { type: 'user', id: editor.userId },
    workflowId: held.workflowId,
    reviewId: held.id,
    data: { edit_id: editId, fields: edit.fields, decision: decided.decision, reason: decided.reason, policyIds: decided.policyIds },
  });
  return editId;
}
