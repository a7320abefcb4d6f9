import { useState, type FormEvent } from 'react';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { roleNames } from '../../lib/format';
import type { Role } from '../../lib/session';
import { peopleApi, type LinkHandOver, type Person } from './api';

export function InviteForm({ roles, onInvited }: { roles: Role[]; onInvited: (person: Person, link: LinkHandOver) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('reviewer');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const invited = await peopleApi.invite({ email, role, ...(name.trim() ? { name: name.trim() } : {}) });
      onInvited(invited.person, invited);
      setEmail('');
      setName('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} className="stack" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite a person</h2>
      <div className="row">
        <FormField id="invite-email" label="Email">
          {(control) => <input {...control} type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />}
        </FormField>
        <FormField id="invite-name" label="Name (optional)">
          {(control) => <input {...control} value={name} onChange={(event) => setName(event.target.value)} />}
        </FormField>
        <FormField id="invite-role" label="Role">
          {(control) => (
            <select {...control} value={role} onChange={(event) => setRole(event.target.value as Role)}>
              {roles.map((option) => (
                <option key={option} value={option}>
                  {roleNames[option]}
                </option>
              ))}
            </select>
          )}
        </FormField>
      </div>
      <FormError error={error} />
      <button type="submit" className="button" disabled={busy}>
        {busy ? 'Inviting…' : 'Invite'}
      </button>
    </form>
  );
}
