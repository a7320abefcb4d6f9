import { useRef, useState, type FormEvent } from 'react';
import { problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { peopleApi, type Person, type TeamMember } from './api';

const formFields = ['team_member_id'] as const;

/** How a team member reads in the People table: name, title, and whether they are still on the roster. */
const memberName = (member: TeamMember) => `${member.name}${member.title ? `, ${member.title}` : ''}${member.active ? '' : ' (inactive)'}`;

/** The team member a person is, for escalation to skip them when inactive or out of office; picked from the roster. */
export function TeamMemberLink({
  person,
  roster,
  editable,
  onChanged,
}: {
  person: Person;
  /** The team roster (undefined while it loads). */
  roster: TeamMember[] | undefined;
  editable: boolean;
  onChanged: (changed: Person, notice: string) => void;
}) {
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
  const nameOf = (id: string) => {
    const member = roster?.find((candidate) => candidate.id === id);
    return member ? memberName(member) : id;
  };

  async function save(teamMemberId: string | null) {
    setBusy(true);
    setError(undefined);
    try {
      const changed = await peopleApi.update(person.id, { team_member_id: teamMemberId });
      returnFocus.current = true;
      setEditing(false);
      onChanged(
        changed,
        changed.team_member_id ? `${person.email} is linked to team member ${nameOf(changed.team_member_id)}.` : `${person.email} is no longer linked to a team member.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void save(draft);
  }

  if (editing) {
    return (
      <form className="stack tight" onSubmit={submit} noValidate>
        <FormField
          id={inputId}
          label={`Team member of ${person.email}`}
          labelHidden
          problem={problems.team_member_id}
          hint={roster?.length === 0 ? 'The team roster is empty: import it first (gatehouse import).' : 'From the team roster.'}
        >
          {(control) => (
            <select {...control} autoFocus value={draft} onChange={(event) => setDraft(event.target.value)}>
              <option value="">Choose a team member</option>
              {(roster ?? []).map((member) => (
                <option key={member.id} value={member.id}>
                  {memberName(member)}
                </option>
              ))}
            </select>
          )}
        </FormField>
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
      {linked ? <span className="team-member-id">{nameOf(linked)}</span> : <span className="hint">Not linked</span>}
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
