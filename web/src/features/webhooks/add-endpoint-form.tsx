import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../../lib/api';
import { FieldProblem, problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { webhooksApi, type EventTypeInfo, type WebhookEndpoint } from './api';

const formFields = ['url', 'description', 'event_types'] as const;

/** A new endpoint: where to POST, what it is for, and the event types it wants. */
export function AddEndpointForm({ eventTypes, onAdded }: { eventTypes: EventTypeInfo[]; onAdded: (endpoint: WebhookEndpoint, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(() => new Set());
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const urlInput = useRef<HTMLInputElement>(null);
  const descriptionInput = useRef<HTMLInputElement>(null);
  const eventTypesGroup = useRef<HTMLFieldSetElement>(null);

  const problems = problemsByField(error, formFields);
  const placed = Object.keys(problems).length > 0;

  // The keyboard goes to the first field the API refused, which now says why.
  useEffect(() => {
    const first = problemsByField(error, formFields);
    if (first.url) urlInput.current?.focus();
    else if (first.description) descriptionInput.current?.focus();
    else if (first.event_types) eventTypesGroup.current?.querySelector('input')?.focus();
  }, [error]);

  function toggle(type: string, on: boolean) {
    const next = new Set(chosen);
    if (on) next.add(type);
    else next.delete(type);
    setChosen(next);
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const selected = eventTypes.map((info) => info.type).filter((type) => chosen.has(type));
    if (!selected.length) {
      const message = 'Choose at least one event type.';
      setError(new ApiError(422, 'validation_failed', message, { fields: [{ field: 'event_types', message }] }));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const added = await webhooksApi.create({ url: url.trim(), description: description.trim() || undefined, event_types: selected });
      onAdded(added.endpoint, added.secret);
      setUrl('');
      setDescription('');
      setChosen(new Set());
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} className="stack" aria-labelledby="add-endpoint-heading" noValidate>
      <h2 id="add-endpoint-heading">Add an endpoint</h2>
      <FormField id="endpoint-url" label="URL" problem={problems.url} hint="Where Gatehouse POSTs each event: an https address that reaches the public internet.">
        {(control) => (
          <input
            {...control}
            ref={urlInput}
            type="url"
            inputMode="url"
            required
            maxLength={2000}
            placeholder="https://example.com/gatehouse-events"
            value={url}
            onChange={(event) => setUrl(event.target.value)}
          />
        )}
      </FormField>
      <FormField id="endpoint-description" label="Description (optional)" problem={problems.description} hint={'What it is for, e.g. "Ops alerts".'}>
        {(control) => <input {...control} ref={descriptionInput} maxLength={500} value={description} onChange={(event) => setDescription(event.target.value)} />}
      </FormField>
      <fieldset ref={eventTypesGroup} aria-describedby={problems.event_types ? 'endpoint-event-types-problem' : undefined}>
        <legend>Event types</legend>
        <FieldProblem id="endpoint-event-types-problem" problem={problems.event_types} />
        <div className="ability-grid">
          {eventTypes.map((info) => (
            <label key={info.type} className="choice">
              <input
                type="checkbox"
                checked={chosen.has(info.type)}
                onChange={(event) => toggle(info.type, event.target.checked)}
                aria-labelledby={`event-type-${info.type}`}
                aria-describedby={`event-type-${info.type}-hint`}
              />
              <span>
                <code id={`event-type-${info.type}`}>{info.type}</code>
                <span id={`event-type-${info.type}-hint`} className="hint block">
                  {info.description}
                </span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      {!placed && <FormError error={error} />}
      <button type="submit" className="button" disabled={busy}>
        {busy ? 'Adding…' : 'Add endpoint'}
      </button>
    </form>
  );
}
