import { useRef, useState, type FormEvent } from 'react';
import { FieldProblem, problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { peopleApi, type Person } from './api';

const formFields = ['team_member_id'] as const;

/**
 * The team member a person is, for escalation to skip them when inactive or out of office. The console lists no
 * team roster (it is the agents' API's), so the id is typed as the roster gives it.
 */
export function TeamMemberLink({ person, editable, onChanged }: { person: Person; editable: boolean; onChanged: (changed: Person, notice: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  /** Set when the keyboard should come back to the Link/Change button as it (re)appears: after a save or a cancel. */
  const returnFocus = useRef(false);
  const opener = (button: HTMLButtonElement | null) => {
    if (button && returnFocus.current) {
      returnFocus.current = false;
      button.focus();
    }
  };
  const problems = problemsByField(error, formFields);
  const inputId = `team-member-${person.id}`;
  const linked = person.team_member_id;

  async function save(teamMemberId: string | null) {
    setBusy(true);
    setError(undefined);
    try {
      const changed = await peopleApi.update(person.id, { team_member_id: teamMemberId });
      returnFocus.current = true;
      setEditing(false);
      onChanged(
        changed,
        changed.team_member_id ? `${person.email} is linked to team member ${changed.team_member_id}.` : `${person.email} is no longer linked to a team member.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void save(draft.trim());
  }

  if (editing) {
    return (
      <form className="stack tight" onSubmit={submit} noValidate>
        <div className="field">
          <label className="visually-hidden" htmlFor={inputId}>
            Team member id of {person.email}
          </label>
          <input
            id={inputId}
            autoFocus
            maxLength={100}
            placeholder="mem_…"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            aria-invalid={problems.team_member_id ? true : undefined}
            aria-describedby={[problems.team_member_id !== undefined && `${inputId}-problem`, `${inputId}-hint`].filter(Boolean).join(' ')}
          />
          <FieldProblem id={`${inputId}-problem`} problem={problems.team_member_id} />
          <span id={`${inputId}-hint`} className="hint">
            Their id in the team roster (<code>GET /api/v1/team-members</code>), starting <code>mem_</code>.
          </span>
        </div>
        {!problems.team_member_id && <FormError error={error} />}
        <div className="action-buttons">
          <button type="submit" className="button small" disabled={busy} aria-label={`Save team member of ${person.email}`}>
            Save
          </button>
          <button
            type="button"
            className="button secondary small"
            onClick={() => {
              returnFocus.current = true;
              setEditing(false);
              setError(undefined);
            }}
          >
            Cancel
          </button>
        </div>
      </form>
    );
  }

  return (
    <>
      {linked ? <code className="team-member-id">{linked}</code> : <span className="hint">Not linked</span>}
      <FormError error={error} />
      {editable && (
        <div className="action-buttons spaced">
          <button
            type="button"
            ref={opener}
            className="button secondary small"
            aria-label={`${linked ? 'Change' : 'Link'} team member of ${person.email}`}
            onClick={() => {
              setDraft(linked ?? '');
              setError(undefined);
              setEditing(true);
            }}
          >
            {linked ? 'Change' : 'Link'}
          </button>
          {linked && (
            <button type="button" className="button secondary small" disabled={busy} aria-label={`Unlink team member of ${person.email}`} onClick={() => void save(null)}>
              Unlink
            </button>
          )}
        </div>
      )}
    </>
  );
}
