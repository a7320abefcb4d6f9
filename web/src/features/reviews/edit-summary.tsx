import { when } from '../../lib/format';
import { EditedFieldsTable } from '../../lib/record-diff';
import type { Review, ReviewEdit } from './api';

const decisionNames = { allow: 'Allow', review: 'Review' } as const;

/** A reviewer's edit on the card: who and when, each field the agent's way and the edited way, and the policy's word on it. */
export function EditSummary({ review, edit }: { review: Review; edit: ReviewEdit }) {
  const changed = edit.fields;
  const what = review.changeset ? 'changeset' : 'write';
  return (
    <section className="edit-summary" aria-labelledby={`edit-${edit.id}`}>
      <p id={`edit-${edit.id}`}>
        <strong>Edited by {edit.by.email}</strong> {when(edit.at)}
        <span className="hint">
          {' '}
          · {review.status === 'pending' ? `the edited ${what} is what runs once approved` : review.status === 'approved' ? `the edited ${what} is what ran` : 'not applied'}
        </span>
      </p>
      {/* A changeset's edit is shown item by item, with the items. */}
      {!review.changeset && <EditedFieldsTable fields={changed.map((field) => ({ field, agent: review.proposed[field], edited: edit.input[field] }))} />}
      <p>
        <strong>The policy on the edit:</strong> {decisionNames[edit.decision.decision]} — {edit.decision.reason}{' '}
        <span className="hint">(rule {edit.decision.policy_ids.join(', ') || '—'})</span>
      </p>
    </section>
  );
}
