import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../../lib/api';
import { FieldProblem, problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { day } from '../../lib/format';
import { connectApi, type Access, type ConsentRequest } from './api';
import { useAnswer } from './use-answer';

const formFields = ['access', 'abilities', 'lasts_days'] as const;

/** `7 days`, `1 year`. */
export function lasting(days: number): string {
  if (days % 365 === 0) return days === 365 ? '1 year' : `${days / 365} years`;
  return days === 1 ? '1 day' : `${days} days`;
}

/**
 * What the app may do, if the person connects it: read or also write, which of the abilities it asked for, and for
 * how long. Connect or deny, and the browser goes back to the app.
 */
export function ConsentForm({ uid, request }: { uid: string; request: ConsentRequest }) {
  const { client, organization } = request;
  const known = new Map(request.abilities.map((info) => [info.ability, info]));
  // Asked-for abilities Gatehouse does not know are not given; the person is told which.
  const requested = request.requested.abilities.flatMap((ability) => known.get(ability) ?? []);
  const unknown = request.requested.abilities.filter((ability) => !known.has(ability));
  const asksToWrite = requested.some((info) => info.write);

  const [access, setAccess] = useState<Access>(asksToWrite ? 'read_write' : 'read');
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(request.requested.abilities));
  const [lastsDays, setLastsDays] = useState(request.lasts_days.default);
  // The page's opening time, from which the end is said (the server counts from the answer: the same day, near enough).
  const [openedAt] = useState(() => Date.now());
  const { pending, returning, error, setError, answer } = useAnswer();
  const abilitiesGroup = useRef<HTMLFieldSetElement>(null);
  const accessGroup = useRef<HTMLFieldSetElement>(null);
  const lastsSelect = useRef<HTMLSelectElement>(null);

  const problems = problemsByField(error, formFields);
  const placed = Object.keys(problems).length > 0;
  const offered = (info: { write: boolean }) => access === 'read_write' || !info.write;

  // The keyboard goes to the first field the server refused, which now says why.
  useEffect(() => {
    const first = problemsByField(error, formFields);
    if (first.access) accessGroup.current?.querySelector('input')?.focus();
    else if (first.abilities) abilitiesGroup.current?.querySelector<HTMLInputElement>('input:not(:disabled)')?.focus();
    else if (first.lasts_days) lastsSelect.current?.focus();
  }, [error]);

  function toggle(ability: string, on: boolean) {
    const next = new Set(chosen);
    if (on) next.add(ability);
    else next.delete(ability);
    setChosen(next);
  }

  function connect(event: FormEvent) {
    event.preventDefault();
    const abilities = requested.filter((info) => offered(info) && chosen.has(info.ability)).map((info) => info.ability);
    if (!abilities.length) {
      const message = 'Choose at least one ability, or deny the app.';
      setError(new ApiError(422, 'validation_failed', message, { fields: [{ field: 'abilities', message }] }));
      return;
    }
    void answer('connect', () => connectApi.consent(uid, request.csrf_token, { access, abilities, lasts_days: lastsDays }));
  }

  const ends = new Date(openedAt + lastsDays * 24 * 60 * 60 * 1000).toISOString();
  return (
    <form onSubmit={connect} className="stack" aria-labelledby="consent-heading" noValidate>
      <h2 id="consent-heading">What “{client.name}” may do</h2>
      <fieldset ref={accessGroup} aria-describedby={problems.access ? 'consent-access-problem' : undefined}>
        <legend>Access</legend>
        <FieldProblem id="consent-access-problem" problem={problems.access} />
        <label className="choice">
          <input type="radio" name="access" value="read" checked={access === 'read'} onChange={() => setAccess('read')} /> Read only
        </label>
        <label className="choice">
          <input type="radio" name="access" value="read_write" checked={access === 'read_write'} disabled={!asksToWrite} onChange={() => setAccess('read_write')} />{' '}
          <span>
            Read and write
            <span className="hint block">
              {asksToWrite ? `Its writes go through ${organization.name}'s policy like any agent's: held for review or refused where the policy says so.` : 'The app asks for no write ability.'}
            </span>
          </span>
        </label>
      </fieldset>
      <fieldset ref={abilitiesGroup} aria-describedby={problems.abilities ? 'consent-abilities-problem' : undefined}>
        <legend>Abilities it asked for</legend>
        <FieldProblem id="consent-abilities-problem" problem={problems.abilities} />
        {requested.length === 0 && <p className="hint">It asked for none that Gatehouse knows.</p>}
        {requested.map((info) => {
          const id = `consent-ability-${info.ability}`;
          return (
            <label key={info.ability} className="choice">
              <input
                type="checkbox"
                checked={offered(info) && chosen.has(info.ability)}
                disabled={!offered(info)}
                onChange={(event) => toggle(info.ability, event.target.checked)}
                aria-labelledby={id}
                aria-describedby={`${id}-hint`}
              />
              <span>
                <code id={id}>{info.ability}</code>
                <span id={`${id}-hint`} className="hint block">
                  {info.description}
                  {!offered(info) && ' (needs Read and write)'}
                </span>
              </span>
            </label>
          );
        })}
        {unknown.length > 0 && (
          <p className="hint">
            It also asked for{' '}
            {unknown.map((ability, index) => (
              <span key={ability}>
                {index > 0 && ', '}
                <code>{ability}</code>
              </span>
            ))}
            , which Gatehouse does not know: not given.
          </p>
        )}
      </fieldset>
      <FormField id="consent-lasts" label="Connection lasts" problem={problems.lasts_days} hint={`Until ${day(ends)}, unless it is disconnected sooner.`}>
        {(control) => (
          <select {...control} ref={lastsSelect} value={lastsDays} onChange={(event) => setLastsDays(Number(event.target.value))}>
            {request.lasts_days.options.map((days) => (
              <option key={days} value={days}>
                {lasting(days)}
              </option>
            ))}
          </select>
        )}
      </FormField>
      <p className="hint">
        It will appear as “{client.listed_as}” in Settings → Advanced → API keys as a connected app, where an owner or admin of {organization.name} can disconnect it at any
        time.
      </p>
      {!placed && <FormError error={error} />}
      {returning && <p role="status">Returning you to {client.redirect_host}…</p>}
      <div className="action-buttons">
        <button type="submit" className="button" disabled={pending !== undefined}>
          {pending === 'connect' ? 'Connecting…' : 'Connect'}
        </button>
        <button type="button" className="button secondary" disabled={pending !== undefined} onClick={() => void answer('deny', () => connectApi.deny(uid, request.csrf_token))}>
          {pending === 'deny' ? 'Denying…' : 'Deny'}
        </button>
      </div>
    </form>
  );
}
