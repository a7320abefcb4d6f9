import { useEffect, useRef, useState } from 'react';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { FormError } from '../../lib/form-error';
import { day, roleNames, when } from '../../lib/format';
import { useSignedIn, type Role } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { peopleApi, type LinkHandOver as HandOver, type Person, type TeamMember } from './api';
import { InviteForm } from './invite-form';
import { LinkHandOver } from './link-hand-over';
import { TeamMemberLink } from './team-member-link';

const allRoles: Role[] = ['owner', 'admin', 'reviewer', 'member'];

/** Settings → People. Owners manage everyone; admins everyone but owners (the server holds the rule). */
export function PeoplePage() {
  useDocumentTitle('People');
  const me = useSignedIn();
  const [people, setPeople] = useState<Person[]>();
  const [link, setLink] = useState<{ person: Person; handOver: HandOver; why: 'invited' | 'reset' }>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const peopleHeading = useRef<HTMLHeadingElement>(null);
  /** Roles chosen but not saved yet, by person: a select changes with every arrow key, so saving waits for a button. */
  const [chosenRoles, setChosenRoles] = useState<Record<string, Role>>({});
  const grantable = me.person.role === 'owner' ? allRoles : allRoles.filter((role) => role !== 'owner');
  const manageable = (person: Person) => me.person.role === 'owner' || person.role !== 'owner';

  const [roster, setRoster] = useState<TeamMember[]>();
  useEffect(() => {
    peopleApi.list().then(setPeople, setError);
    peopleApi.teamMembers().then(setRoster, () => setRoster([]));
  }, []);

  const emailOf = (id: string) => people?.find((person) => person.id === id)?.email ?? 'someone no longer listed';
  const replace = (changed: Person) => setPeople((list) => list?.map((person) => (person.id === changed.id ? { ...person, ...changed } : person)));

  async function act(work: () => Promise<void>) {
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <>
      <p className="breadcrumbs">Settings</p>
      <h1>People</h1>
      <p className="lede">
        Owners and admins manage people and keys; reviewers also decide held writes; members see, and decide nothing. An organization always keeps an active
        owner. Linking a person to their team member lets review escalation skip them while that team member is inactive or out of office.
      </p>
      <section className="card">
        <InviteForm
          roles={grantable}
          onInvited={(person, handOver) => {
            setPeople((list) => [...(list ?? []), person]);
            setLink({ person, handOver, why: 'invited' });
          }}
        />
      </section>
      {link && <LinkHandOver {...link} onDismiss={() => setLink(undefined)} returnFocus={peopleHeading} />}
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <FormError error={error} />
      <section aria-labelledby="people-heading">
        <h2 id="people-heading" ref={peopleHeading} tabIndex={-1}>
          Everyone in {me.organization.name}
        </h2>
        {people === undefined ? (
          <p role="status">Loading…</p>
        ) : (
          <DataTable columns={['Person', 'Role', 'State', 'Team member', 'Last sign-in', actionsColumn]}>
            {people.map((person) => {
              const mine = person.id === me.person.id;
              const allowed = manageable(person);
              return (
                <tr key={person.id} className={person.active ? undefined : 'inactive'}>
                  <th scope="row">
                    {person.name ?? person.email}
                    {person.name && <span className="hint block">{person.email}</span>}
                    {mine && <span className="hint block">You</span>}
                  </th>
                  <td>
                    <label className="visually-hidden" htmlFor={`role-${person.id}`}>
                      Role of {person.email}
                    </label>
                    <div className="role-cell">
                      <select
                        id={`role-${person.id}`}
                        value={chosenRoles[person.id] ?? person.role}
                        disabled={!allowed || !person.active}
                        onChange={(event) => setChosenRoles((chosen) => ({ ...chosen, [person.id]: event.target.value as Role }))}
                      >
                        {(allowed ? grantable : allRoles).map((role) => (
                          <option key={role} value={role}>
                            {roleNames[role]}
                          </option>
                        ))}
                      </select>
                      {chosenRoles[person.id] && chosenRoles[person.id] !== person.role && (
                        <button
                          type="button"
                          className="button small"
                          aria-label={`Save role of ${person.email}`}
                          onClick={() =>
                            void act(async () => {
                              const role = chosenRoles[person.id]!;
                              replace(await peopleApi.update(person.id, { role }));
                              setChosenRoles(({ [person.id]: _saved, ...rest }) => rest);
                              setNotice(`${person.email} is now ${roleNames[role].toLowerCase()}.`);
                              if (mine) await me.refresh();
                            })
                          }
                        >
                          Save role
                        </button>
                      )}
                    </div>
                  </td>
                  <td>
                    {!person.active ? 'Deactivated' : person.has_password ? 'Active' : 'Invited'}
                    <span className="hint block">since {day(person.created_at)}</span>
                    {person.set_up_by && <span className="hint block">Set up by {emailOf(person.set_up_by)}</span>}
                  </td>
                  <td>
                    <TeamMemberLink
                      person={person}
                      roster={roster}
                      editable={allowed}
                      onChanged={(changed, said) => {
                        setError(undefined);
                        replace(changed);
                        setNotice(said);
                      }}
                    />
                  </td>
                  <td>
                    {when(person.last_sign_in_at, 'Never')}
                    {person.open_sessions ? <span className="hint block">{person.open_sessions} open session(s)</span> : null}
                  </td>
                  <td>
                    <div className="action-buttons">
                    {allowed && person.active && (
                      <>
                        <button
                          type="button"
                          className="button secondary small"
                          aria-label={`Reset password of ${person.email}`}
                          onClick={() =>
                            void act(async () => {
                              const reset = await peopleApi.resetPassword(person.id);
                              replace(reset.person);
                              setLink({ person: reset.person, handOver: reset, why: 'reset' });
                            })
                          }
                        >
                          Reset password
                        </button>
                        <button
                          type="button"
                          className="button secondary small"
                          aria-label={`End sessions of ${person.email}`}
                          onClick={() =>
                            void act(async () => {
                              const { sessions_ended } = await peopleApi.endSessions(person.id);
                              replace({ ...person, open_sessions: 0 });
                              setNotice(`Ended ${sessions_ended} session(s) of ${person.email}.`);
                            })
                          }
                        >
                          End sessions
                        </button>
                      </>
                    )}
                    {allowed && !mine && (
                      <button
                        type="button"
                        className={`button small ${person.active ? 'danger' : 'secondary'}`}
                        aria-label={`${person.active ? 'Deactivate' : 'Reactivate'} ${person.email}`}
                        onClick={() =>
                          void act(async () => {
                            replace(await peopleApi.update(person.id, { active: !person.active }));
                            setNotice(`${person.email} is ${person.active ? 'deactivated' : 'active again'}.`);
                          })
                        }
                      >
                        {person.active ? 'Deactivate' : 'Reactivate'}
                      </button>
                    )}
                    </div>
                  </td>
                </tr>
              );
            })}
          </DataTable>
        )}
      </section>
    </>
  );
}
