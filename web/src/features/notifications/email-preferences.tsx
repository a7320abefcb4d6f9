import { useEffect, useState, type FormEvent } from 'react';
import { FormError } from '../../lib/form-error';
import { SaveRow } from '../../lib/save-row';
import { notificationsApi, type NotificationPreferences } from './api';

/** What the signed-in person is told by email; the rest is not sent to them. */
export function EmailPreferences() {
  const [preferences, setPreferences] = useState<NotificationPreferences>();
  const [chosen, setChosen] = useState<Set<string>>(() => new Set());
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    notificationsApi.preferences().then((loaded) => {
      setPreferences(loaded);
      setChosen(new Set(loaded.email));
    }, setError);
  }, []);

  function toggle(kind: string, on: boolean) {
    const next = new Set(chosen);
    if (on) next.add(kind);
    else next.delete(kind);
    setChosen(next);
    setStatus(undefined);
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!preferences) return;
    setBusy(true);
    setError(undefined);
    setStatus(undefined);
    try {
      const saved = await notificationsApi.updatePreferences(preferences.available.map((item) => item.kind).filter((kind) => chosen.has(kind)));
      setPreferences(saved);
      setChosen(new Set(saved.email));
      setStatus(
        saved.email.length === 0
          ? 'Saved: you get no notifications by email.'
          : `Saved: you get ${saved.email.length} of ${saved.available.length} notifications by email.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="email-heading">
      <h2 id="email-heading">Your email notifications</h2>
      {preferences === undefined ? (
        error ? <FormError error={error} /> : <p role="status">Loading…</p>
      ) : (
        <form onSubmit={(event) => void save(event)} className="stack" noValidate>
          <fieldset>
            <legend>Email me when</legend>
            {preferences.available.map((item) => (
              <label key={item.kind} className="choice">
                <input type="checkbox" checked={chosen.has(item.kind)} onChange={(event) => toggle(item.kind, event.target.checked)} />
                <span>
                  {item.description}
                  <span className="hint block">
                    <code>{item.kind}</code>
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
          <FormError error={error} />
          <SaveRow label="Save email notifications" busy={busy} status={status} />
        </form>
      )}
    </section>
  );
}
