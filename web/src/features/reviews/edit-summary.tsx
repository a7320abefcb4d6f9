import { when } from '../../lib/format';
import type { Review, ReviewEdit } from './api';

/** A value as a person reads it in a table cell (as the record's table shows it). */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

const decisionNames = { allow: 'Allow', review: 'Review' } as const;

/** A reviewer's edit on the card: who and when, each field the agent's way and the edited way, and the policy's word on it. */
export function EditSummary({ review, edit }: { review: Review; edit: ReviewEdit }) {
  const changed = edit.fields;
  return (
    <section className="edit-summary" aria-labelledby={`edit-${edit.id}`}>
      <p id={`edit-${edit.id}`}>
        <strong>Edited by {edit.by.email}</strong> {when(edit.at)}
        <span className="hint">
          {' '}
          · {review.status === 'pending' ? 'the edited write is what runs once approved' : review.status === 'approved' ? 'the edited write is what ran' : 'not applied'}
        </span>
      </p>
      <table className="record diff">
        <caption className="visually-hidden">The fields the reviewer changed: the agent's value and the edited value</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Agent's value</th>
            <th scope="col">Edited value</th>
          </tr>
        </thead>
        <tbody>
          {changed.map((field) => (
            <tr key={field} className="changed" data-edited="true">
              <th scope="row">{field}</th>
              <td>{shown(review.proposed[field])}</td>
              <td>{shown(edit.input[field])}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        <strong>The policy on the edit:</strong> {decisionNames[edit.decision.decision]} — {edit.decision.reason}{' '}
        <span className="hint">(rule {edit.decision.policy_ids.join(', ') || '—'})</span>
      </p>
    </section>
  );
}
