import { useEffect, useRef, useState, type FormEvent } from 'react';
import { problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { SaveRow } from '../../lib/save-row';
import { policyApi } from './api';

const formFields = ['undo_window_days'] as const;

const days = (count: number) => `${count} day${count === 1 ? '' : 's'}`;

/** Owners and admins: for how many days after it was applied a gated write may be undone. */
export function UndoWindowSetting() {
  const [saved, setSaved] = useState<number>();
  const [value, setValue] = useState('');
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const problems = problemsByField(error, formFields);

  useEffect(() => {
    policyApi.organization().then((organization) => {
      setSaved(organization.undo_window_days);
      setValue(String(organization.undo_window_days));
    }, setError);
  }, []);

  // The keyboard goes to the field the API refused, which now says why.
  useEffect(() => {
    if (problemsByField(error, formFields).undo_window_days) input.current?.focus();
  }, [error]);

  async function save(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setStatus(undefined);
    try {
      // Sent as the number typed (an empty field is 0): the API says what is wrong with it.
      const organization = await policyApi.updateOrganization({ undo_window_days: Number(value) });
      setSaved(organization.undo_window_days);
      setValue(String(organization.undo_window_days));
      setStatus(`Saved: an applied write may be undone for ${days(organization.undo_window_days)} after it was applied.`);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="undo-window-heading">
      <h2 id="undo-window-heading">Undo</h2>
      <p className="hint">
        People undo an applied write from the Audit page and from an approved review's card; agents ask with <code>undo_write</code>, which the policy
        decides. Either way only while the record is as the write left it, and only within this window.
      </p>
      {saved === undefined ? (
        error ? <FormError error={error} /> : <p role="status">Loading…</p>
      ) : (
        <form onSubmit={(event) => void save(event)} className="stack" noValidate>
          <FormField
            id="undo-window-days"
            label="Days an applied write may be undone"
            problem={problems.undo_window_days}
            hint="A whole number of days from 1 to 365, counted from when the write was applied (7 by default)."
          >
            {(control) => (
              <input
                {...control}
                ref={input}
                type="number"
                inputMode="numeric"
                min={1}
                max={365}
                step={1}
                value={value}
                onChange={(event) => {
                  setValue(event.target.value);
                  setStatus(undefined);
                }}
              />
            )}
          </FormField>
          {!problems.undo_window_days && <FormError error={error} />}
          <SaveRow label="Save the undo window" busy={busy} status={status} />
        </form>
      )}
    </section>
  );
}
