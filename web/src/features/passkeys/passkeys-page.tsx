import { useEffect, useState, type FormEvent } from 'react';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { passkeysApi, type Passkey } from './api';

/** Settings → Passkeys: the person's own passkeys, to sign in with and to sign approvals. */
export function PasskeysPage() {
  useDocumentTitle('Passkeys');
  const { organization } = useSignedIn();
  const [passkeys, setPasskeys] = useState<Passkey[]>();
  const [loadError, setLoadError] = useState<unknown>();

  useEffect(() => {
    passkeysApi.list().then(setPasskeys, setLoadError);
  }, []);

  return (
    <>
      <p className="breadcrumbs">Settings</p>
      <h1>Passkeys</h1>
      <p className="lede">
        A passkey signs you in without a password, and signs your approvals: the signature names the review, the exact write you approved and the time,
        and the audit trail keeps it.
      </p>
      {organization.approvals_need_passkey && (
        <p className="notice" role="status">
          {organization.name} needs every approval signed with a passkey{passkeys?.length === 0 ? ': add one here before you approve anything.' : '.'}
        </p>
      )}
      <section className="card" aria-labelledby="passkeys-heading">
        <h2 id="passkeys-heading">Your passkeys</h2>
        {passkeys === undefined ? (
          loadError ? <FormError error={loadError} /> : <p role="status">Loading…</p>
        ) : passkeys.length === 0 ? (
          <p>You have no passkey yet.</p>
        ) : (
          <PasskeyTable passkeys={passkeys} onChanged={setPasskeys} />
        )}
      </section>
      <AddPasskey onAdded={(added) => setPasskeys((known) => [...(known ?? []), added])} />
    </>
  );
}

function PasskeyTable({ passkeys, onChanged }: { passkeys: Passkey[]; onChanged: (passkeys: Passkey[]) => void }) {
  const [removing, setRemoving] = useState<string>();
  const [renaming, setRenaming] = useState<string>();
  return (
    <>
      <DataTable columns={['Name', 'Added', 'Last used', 'Synced', actionsColumn]} label="Your passkeys">
        {passkeys.map((passkey) => (
          <tr key={passkey.id}>
            <th scope="row">
              {renaming === passkey.id ? (
                <RenameForm
                  passkey={passkey}
                  onDone={(renamed) => {
                    setRenaming(undefined);
                    if (renamed) onChanged(passkeys.map((known) => (known.id === renamed.id ? renamed : known)));
                  }}
                />
              ) : (
                passkey.name
              )}
            </th>
            <td>{when(passkey.created_at)}</td>
            <td>{when(passkey.last_used_at, 'Never')}</td>
            <td>{passkey.backed_up ? 'Yes' : 'No'}</td>
            <td className="action-buttons">
              {renaming !== passkey.id && removing !== passkey.id && (
                <button type="button" className="button secondary small" aria-label={`Rename ${passkey.name}`} onClick={() => setRenaming(passkey.id)}>
                  Rename
                </button>
              )}
              {removing === passkey.id ? (
                <RemoveForm
                  passkey={passkey}
                  onDone={(removed) => {
                    setRemoving(undefined);
                    if (removed) onChanged(passkeys.filter((kept) => kept.id !== passkey.id));
                  }}
                />
              ) : (
                <button type="button" className="button secondary small" aria-label={`Remove ${passkey.name}`} onClick={() => setRemoving(passkey.id)}>
                  Remove
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** Removing a passkey asks for the person's current password, as adding one does: a session alone may do neither. */
function RemoveForm({ passkey, onDone }: { passkey: Passkey; onDone: (removed: boolean) => void }) {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const problem = problemsByField(error, ['password']).password;
  const fieldId = `remove-${passkey.id}-password`;
  return (
    <form
      className="action-buttons"
      onSubmit={(event) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        passkeysApi.remove(passkey.id, password).then(
          () => onDone(true),
          (failure: unknown) => {
            setError(failure);
            setBusy(false);
          },
        );
      }}
    >
      <label className="visually-hidden" htmlFor={fieldId}>
        Your current password, to remove {passkey.name}
      </label>
      <input
        id={fieldId}
        type="password"
        autoComplete="current-password"
        autoFocus
        required
        placeholder="Your current password"
        aria-invalid={problem ? true : undefined}
        value={password}
        onChange={(event) => setPassword(event.target.value)}
      />
      <button type="submit" className="button danger small" disabled={busy}>
        Remove {passkey.name} for good
      </button>
      <button type="button" className="button secondary small" onClick={() => onDone(false)}>
        Cancel
      </button>
      <FormError error={error} />
    </form>
  );
}

function RenameForm({ passkey, onDone }: { passkey: Passkey; onDone: (renamed?: Passkey) => void }) {
  const [name, setName] = useState(passkey.name);
  const [error, setError] = useState<unknown>();
  return (
    <form
      className="action-buttons"
      onSubmit={(event) => {
        event.preventDefault();
        passkeysApi.rename(passkey.id, name).then(onDone, setError);
      }}
    >
      <label className="visually-hidden" htmlFor={`rename-${passkey.id}`}>
        New name for {passkey.name}
      </label>
      <input id={`rename-${passkey.id}`} autoFocus required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
      <button type="submit" className="button small">
        Save
      </button>
      <button type="button" className="button secondary small" onClick={() => onDone()}>
        Cancel
      </button>
      <FormError error={error} />
    </form>
  );
}

function AddPasskey({ onAdded }: { onAdded: (passkey: Passkey) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [added, setAdded] = useState<string>();
  const problems = problemsByField(error, ['name', 'password']);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setAdded(undefined);
    try {
      const passkey = await passkeysApi.register(name, password);
      onAdded(passkey);
      setAdded(passkey.name);
      setName('');
      setPassword('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="add-passkey-heading">
      <h2 id="add-passkey-heading">Add a passkey</h2>
      <form className="stack" onSubmit={(event) => void submit(event)}>
        <FormField id="passkey-name" label="Name (optional)" problem={problems.name} hint="To tell your passkeys apart: the laptop, the phone, the security key.">
          {(control) => <input {...control} maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />}
        </FormField>
        <FormField
          id="passkey-password"
          label="Your current password"
          problem={problems.password}
          hint="A passkey signs your approvals, so adding one asks who you are again: being signed in is not enough."
        >
          {(control) => (
            <input {...control} type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
          )}
        </FormField>
        <FormError error={error} />
        {added && (
          <p className="notice" role="status">
            Added “{added}”. You can sign in with it, and sign approvals.
          </p>
        )}
        <div>
          <button type="submit" className="button" disabled={busy}>
            {busy ? 'Waiting for your authenticator…' : 'Add a passkey'}
          </button>
        </div>
      </form>
    </section>
  );
}
