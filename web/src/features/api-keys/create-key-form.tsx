import { useState, type FormEvent } from 'react';
import { ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { keysApi, type AbilityInfo, type ApiKey } from './api';

/** A new key: label, access, abilities as a checklist, an optional expiry. */
export function CreateKeyForm({ abilities, onCreated }: { abilities: AbilityInfo[]; onCreated: (key: ApiKey, token: string) => void }) {
  const [label, setLabel] = useState('');
  const [access, setAccess] = useState<'read' | 'read_write'>('read_write');
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(abilities.map((info) => info.ability)));
  const [expiresOn, setExpiresOn] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const offered = abilities.filter((info) => access === 'read_write' || !info.write);

  function toggle(ability: string, on: boolean) {
    const next = new Set(chosen);
    if (on) next.add(ability);
    else next.delete(ability);
    setChosen(next);
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const selected = offered.map((info) => info.ability).filter((ability) => chosen.has(ability));
    if (!selected.length) {
      setError(new ApiError(422, 'validation_failed', 'Choose at least one ability.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // The key works through the whole day chosen, in the person's own time zone.
      const expires_at = expiresOn ? new Date(`${expiresOn}T23:59:59`).toISOString() : null;
      const created = await keysApi.create({ label, access, abilities: selected, expires_at });
      onCreated(created.key, created.token);
      setLabel('');
      setExpiresOn('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  const families = [...new Set(offered.map((info) => info.family))];
  return (
    <form onSubmit={(event) => void submit(event)} className="stack" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <FormField id="key-label" label="Label" hint={'What the key is for, e.g. "Support agent". Reviewers see it on every write the key makes.'}>
        {(control) => <input {...control} required maxLength={100} value={label} onChange={(event) => setLabel(event.target.value)} />}
      </FormField>
      <fieldset>
        <legend>Access</legend>
        <label className="choice">
          <input type="radio" name="access" value="read" checked={access === 'read'} onChange={() => setAccess('read')} /> Read only
        </label>
        <label className="choice">
          <input type="radio" name="access" value="read_write" checked={access === 'read_write'} onChange={() => setAccess('read_write')} /> Read and write
          (writes go through the organization's policy)
        </label>
      </fieldset>
      <fieldset>
        <legend>Abilities</legend>
        <div className="ability-grid">
          {families.map((family) => (
            <div key={family} className="ability-family">
              <span className="family-name">{family.replace('_', ' ')}</span>
              {offered
                .filter((info) => info.family === family)
                .map((info) => (
                  <label key={info.ability} className="choice" title={info.description}>
                    <input type="checkbox" checked={chosen.has(info.ability)} onChange={(event) => toggle(info.ability, event.target.checked)} />{' '}
                    {info.ability}
                  </label>
                ))}
            </div>
          ))}
        </div>
      </fieldset>
      <FormField id="key-expiry" label="Expires after (optional)" hint="Leave empty for a key that works until it is revoked.">
        {(control) => <input {...control} type="date" value={expiresOn} onChange={(event) => setExpiresOn(event.target.value)} />}
      </FormField>
      <FormError error={error} />
      <button type="submit" className="button" disabled={busy}>
        {busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}
