import { useEffect, useRef, useState, type FormEvent } from 'react';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { keysApi, type AbilityInfo, type ApiKey } from './api';

interface CapRow {
  /** A stable key for React while rows come and go. */
  row: number;
  operation: string;
  count: string;
}

/** A key's own budgets in words, for its row: `500 requests a day · customers.update 20 a day`, or `None`. */
export function budgetSummary(key: ApiKey): string {
  const parts = [
    ...(key.daily_request_budget !== null ? [`${key.daily_request_budget} requests a day`] : []),
    ...Object.entries(key.write_caps).map(([operation, cap]) => `${operation} ${cap} a day`),
  ];
  return parts.length ? parts.join(' · ') : 'None';
}

/**
 * A key's own daily request budget and its daily caps of writes by operation. The operations offered are the gated
 * writes the key's abilities allow (and any it is capped on already).
 */
export function KeyBudgetForm({ apiKey, abilities, onSaved, onCancel }: { apiKey: ApiKey; abilities: AbilityInfo[]; onSaved: (key: ApiKey) => void; onCancel: () => void }) {
  const [requests, setRequests] = useState(apiKey.daily_request_budget === null ? '' : String(apiKey.daily_request_budget));
  const [caps, setCaps] = useState<CapRow[]>(() => Object.entries(apiKey.write_caps).map(([operation, cap], row) => ({ row, operation, count: String(cap) })));
  const nextRow = useRef(caps.length);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const id = apiKey.id;

  // The form replaces the button just pressed: the keyboard goes to its heading.
  useEffect(() => heading.current?.focus(), []);

  const allowed = abilities.filter((info) => apiKey.abilities.includes(info.ability)).flatMap((info) => info.operations);
  const operations = [...new Set([...allowed, ...Object.keys(apiKey.write_caps)])];
  const unused = operations.filter((operation) => !caps.some((cap) => cap.operation === operation));

  const change = (row: number, update: Partial<CapRow>) => setCaps((rows) => rows.map((cap) => (cap.row === row ? { ...cap, ...update } : cap)));

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const saved = await keysApi.setBudget(id, {
        daily_request_budget: requests.trim() === '' ? null : Number(requests),
        write_caps: Object.fromEntries(caps.map((cap) => [cap.operation, Number(cap.count)])),
      });
      onSaved(saved);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} className="stack" aria-labelledby={`budget-heading-${id}`}>
      <h3 id={`budget-heading-${id}`} ref={heading} tabIndex={-1}>
        Budgets of "{apiKey.label}"
      </h3>
      <p className="hint">Counted by the organization's day, within its own budget. Past them, the key's requests or writes are refused (429) until midnight.</p>
      <FormField id={`budget-requests-${id}`} label="Requests a day" hint="REST and MCP together. Leave empty for none: the organization's budget alone applies.">
        {(control) => <input {...control} type="number" min={1} step={1} inputMode="numeric" value={requests} onChange={(event) => setRequests(event.target.value)} />}
      </FormField>
      <fieldset>
        <legend>Writes a day, by operation</legend>
        {operations.length === 0 ? (
          <p className="hint">This key may submit no writes.</p>
        ) : (
          <>
            {caps.length === 0 && <p className="hint">No caps: the key may submit as many writes as its requests allow.</p>}
            {caps.map((cap) => (
              <div key={cap.row} className="row">
                <FormField id={`cap-operation-${id}-${cap.row}`} label="Operation">
                  {(control) => (
                    <select {...control} value={cap.operation} onChange={(event) => change(cap.row, { operation: event.target.value })}>
                      {operations
                        .filter((operation) => operation === cap.operation || unused.includes(operation))
                        .map((operation) => (
                          <option key={operation} value={operation}>
                            {operation}
                          </option>
                        ))}
                    </select>
                  )}
                </FormField>
                <FormField id={`cap-count-${id}-${cap.row}`} label={`Writes a day of ${cap.operation}`}>
                  {(control) => (
                    <input
                      {...control}
                      type="number"
                      min={1}
                      step={1}
                      inputMode="numeric"
                      required
                      value={cap.count}
                      onChange={(event) => change(cap.row, { count: event.target.value })}
                    />
                  )}
                </FormField>
                <button type="button" className="button secondary small" onClick={() => setCaps((rows) => rows.filter((other) => other.row !== cap.row))}>
                  Remove the cap on {cap.operation}
                </button>
              </div>
            ))}
            {unused.length > 0 && (
              <button type="button" className="button secondary small" onClick={() => setCaps((rows) => [...rows, { row: nextRow.current++, operation: unused[0]!, count: '' }])}>
                Add a cap
              </button>
            )}
          </>
        )}
      </fieldset>
      <FormError error={error} />
      <div className="action-buttons">
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Saving…' : 'Save budgets'}
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
