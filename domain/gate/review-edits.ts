import type { Database } from '../../db/database';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { recordAudit } from './audit';
import { askPolicy } from './decide';
import { approveIn, assertNotSelfApproval, getReview, lockPendingReview, type Review } from './reviews';
import type { GatedWrite } from './writes';

/** Fields of a write that name its record or guard it; a reviewer's edit never changes them. */
const fixedFields = ['id', 'if_match'];

export interface ReviewEdit {
  orgId: string;
  reviewId: string;
  userId: string;
  /** The reviewer's role, for the policy's context (`context.editor.role`). */
  role: string;
  /** The fields to change, over the agent's input. */
  changes: Record<string, unknown>;
  comment?: string;
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

/**
 * A reviewer changes the fields of a held create or update, then approves it. The edited write goes through the
 * policy again, with the agent's key as the principal and the editor in the context (`context.editor`), as a new
 * decision bound to the edited input:
 * - Deny: the edit is refused (recorded, with its decision) and the review waits with the agent's version;
 * - Allow: the editor's approval applies the edited write;
 * - Review: the editor's approval counts as the first of those the new decision asks for (no loop).
 * Approvals given to the agent's version do not carry over to the edit. The audit keeps the agent's version (its
 * decision), the edit and its decision, and the approvals; the write that runs is the edited one.
 */
export async function editAndApprove(db: Database, write: GatedWrite, edit: ReviewEdit): Promise<Review> {
  const denied = await db.transaction(async (tx) => {
    const review = await lockPendingReview(tx, edit.orgId, edit.reviewId);
    if (!/\.(create|update)$/.test(review.operation) || review.operation !== write.name) {
      throw new AppError('validation_failed', `only a held create or update can be edited; this review holds ${review.operation}`, {
        fields: [{ field: 'edit', message: 'a held create or update only' }],
      });
    }
    assertNotSelfApproval(review, edit.userId);
    const fixed = Object.keys(edit.changes).filter((field) => fixedFields.includes(field));
    if (fixed.length > 0) {
      throw new AppError('validation_failed', `an edit cannot change ${fixed.join(', ')}`, {
        fields: fixed.map((field) => ({ field: `edit.${field}`, message: 'names the record; it cannot be edited' })),
      });
    }
    const parsed = write.input.safeParse({ ...review.input, ...edit.changes });
    if (!parsed.success) {
      throw new AppError('validation_failed', `the edited write is not valid: ${parsed.error.issues.map((issue) => `edit.${issue.path.join('.')}: ${issue.message}`).join('; ')}`, {
        fields: parsed.error.issues.map((issue) => ({ field: `edit.${issue.path.join('.')}`, message: issue.message })),
      });
    }
    // What changes is read through the write's schema on both sides, defaults filled in: the agent's version, and
    // the version the review holds now (an earlier edit's). An edit that changes nothing of it is refused.
    const agents = write.input.parse(review.input) as Record<string, unknown>;
    const edited = parsed.data as Record<string, unknown>;
    const differs = (from: Record<string, unknown>) =>
      [...new Set([...Object.keys(from), ...Object.keys(edited)])].filter((field) => JSON.stringify(from[field]) !== JSON.stringify(edited[field])).sort();
    const fields = differs(agents);
    if (differs(review.edit ? (write.input.parse(review.edit.input) as Record<string, unknown>) : agents).length === 0) {
      throw new AppError('validation_failed', 'the edit changes nothing of the write the review holds; approve it as it is, or change a field', {
        fields: [{ field: 'edit', message: 'changes nothing' }],
      });
    }
    const key = (await tx.query('SELECT label, access, abilities FROM api_keys WHERE id = $1', [review.apiKeyId])).rows[0];
    const { rows: decisions } = await tx.query('SELECT interface FROM gate_decisions WHERE workflow_id = $1', [review.workflowId]);
    const { proposal, version, decided, context } = await askPolicy(
      tx,
      write,
      {
        orgId: edit.orgId,
        operation: review.operation,
        interface: decisions[0].interface,
        apiKey: { id: review.apiKeyId, label: key.label, access: key.access, abilities: key.abilities },
      },
      parsed.data,
      { editor: { id: edit.userId, role: edit.role } },
    );
    const editId = newId('edt');
    await tx.query(
      `INSERT INTO review_edits (id, review_id, org_id, edited_by, fields, input, resource, context, decision, reason, policy_ids, policy_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        editId,
        edit.reviewId,
        edit.orgId,
        edit.userId,
        fields,
        JSON.stringify(parsed.data),
        JSON.stringify(proposal.resource),
        JSON.stringify(context),
        decided.decision,
        decided.reason,
        decided.policyIds,
        version,
      ],
    );
    await recordAudit(tx, edit.orgId, {
      type: 'review.edited',
      actor: { type: 'user', id: edit.userId },
      workflowId: review.workflowId,
      reviewId: edit.reviewId,
      data: { edit_id: editId, fields, decision: decided.decision, reason: decided.reason, policyIds: decided.policyIds },
    });
    if (decided.decision === 'deny') return new EditDeniedError(editId, decided.reason, decided.policyIds);

    const required = decided.decision === 'review' ? (decided.approvals ?? 1) : 1;
    await tx.query('DELETE FROM review_approvals WHERE review_id = $1', [edit.reviewId]);
    await tx.query('UPDATE reviews SET edit_id = $2, approvals_required = $3 WHERE id = $1', [edit.reviewId, editId, required]);
    await approveIn(tx, { ...review, approvalsRequired: required }, { userId: edit.userId, comment: edit.comment }, { edit_id: editId });
    return undefined;
  });
  // Thrown after the transaction committed: the refused edit and its decision stay on the record.
  if (denied) throw denied;
  return getReview(db, edit.orgId, edit.reviewId);
}
