import { useId } from 'react';
import { AgentName } from '../../lib/agent-name';
import type { Review } from './api';

/** The terms of a trust window, as the approve call carries them. */
export interface TrustTerms {
  minutes: number;
  max_uses: number;
  match: string[];
}

export interface TrustChoice {
  on: boolean;
  minutes: number;
  uses: number;
  match: string[];
}

export const noTrust: TrustChoice = { on: false, minutes: 60, uses: 10, match: [] };

/** The terms to send, or nothing when the person did not ask for a window. */
export const trustTerms = (choice: TrustChoice): TrustTerms | undefined =>
  choice.on ? { minutes: choice.minutes, max_uses: choice.uses, match: choice.match } : undefined;

/** Fields that differ on every write (a new id, the times, the version) would match nothing again. */
const unmatchable = new Set(['created_at', 'updated_at', 'version']);

/** The record's fields a window can match: plain values only (text, numbers, true/false, empty). */
function matchableFields(review: Review): [string, unknown][] {
  const record = review.edit?.resource ?? review.resource;
  return Object.entries(record).filter(
    ([name, value]) =>
      !unmatchable.has(name) && !(name === 'id' && review.operation.endsWith('.create')) && (value === null || ['string', 'number', 'boolean'].includes(typeof value)),
  );
}

/**
 * "Also trust this key for…": with the approval, let the same key make the same operation with the values ticked
 * here without review, for some minutes and some writes at most.
 */
export function TrustOption({ review, choice, onChange }: { review: Review; choice: TrustChoice; onChange: (choice: TrustChoice) => void }) {
  const id = useId();
  const fields = matchableFields(review);
  const toggle = (name: string, ticked: boolean) =>
    onChange({ ...choice, match: ticked ? [...choice.match, name] : choice.match.filter((picked) => picked !== name) });
  return (
    <div className="trust-option">
      <label className="choice">
        <input type="checkbox" checked={choice.on} onChange={(event) => onChange({ ...choice, on: event.target.checked })} /> Also trust{' '}
        <AgentName label={review.submitted_by.api_key_label} verified={review.submitted_by.api_key_label_verified} quoted /> for more <code>{review.operation}</code> writes
        like this one
      </label>
      {choice.on && (
        <fieldset className="stack">
          <legend className="visually-hidden">Trust window</legend>
          <div className="row">
            <div className="field">
              <label htmlFor={`${id}-minutes`}>For how many minutes</label>
              <input
                id={`${id}-minutes`}
                type="number"
                min={1}
                max={1440}
                required
                value={choice.minutes}
                onChange={(event) => onChange({ ...choice, minutes: Number(event.target.value) })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-uses`}>At most how many writes</label>
              <input
                id={`${id}-uses`}
                type="number"
                min={1}
                max={1000}
                required
                value={choice.uses}
                onChange={(event) => onChange({ ...choice, uses: Number(event.target.value) })}
              />
            </div>
          </div>
          <fieldset>
            <legend>Only writes with the same</legend>
            {fields.length === 0 && <p className="hint">This write has no field a window can match: any such write of this key would pass.</p>}
            {fields.map(([name, value]) => (
              <label className="choice" key={name}>
                <input type="checkbox" checked={choice.match.includes(name)} onChange={(event) => toggle(name, event.target.checked)} /> {name} ={' '}
                <code>{JSON.stringify(value)}</code>
              </label>
            ))}
          </fieldset>
          <p className="hint">The policy still denies what it denies; the window shows on the Policy page, where it can be closed at once.</p>
        </fieldset>
      )}
    </div>
  );
}
