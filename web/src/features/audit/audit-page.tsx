import { stringify } from 'csv-stringify/browser/esm/sync';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { DataTable } from '../../lib/data-table';
import { directory, type AgentDay, type Person } from '../../lib/directory';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { UndoButton, undoneSentence } from '../../lib/undo-button';
import { useDocumentTitle } from '../../lib/use-document-title';
import { auditApi, type AuditEvent, type AuditFilters, type Decision } from './api';

const eventTypes = [
  'gate.decided',
  'write.applied',
  'write.failed',
  'write.undone',
  'trust_window.opened',
  'trust_window.closed',
  'review.approval_added',
  'review.edited',
  'changeset.item_edited',
  'review.approved',
  'review.denied',
  'review.expired',
  'review.withdrawn',
  'review.escalated',
  'api_key.created',
  'api_key.revoked',
  'api_key.budget_changed',
  'oauth.connected',
  'oauth.refreshed',
  'oauth.disconnected',
  'person.invited',
  'person.updated',
  'person.password_set',
  'person.password_reset',
  'person.sessions_ended',
  'person.signed_in',
  'person.sign_in_throttled',
  'person.locked',
  'person.passkey_added',
  'person.passkey_removed',
  'policy.updated',
  'policy.shadow_started',
  'policy.shadow_stopped',
  'organization.updated',
  'memory.corrected',
  'memory.forgotten',
  'data.imported',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.disabled',
];
const decisionNames: Record<string, string> = { allow: 'Allowed', review: 'Held', deny: 'Denied', refused: 'Refused (queue full)' } satisfies Record<Decision, string>;
const csvColumns = ['id', 'created_at', 'type', 'actor_type', 'actor_id', 'actor_name', 'operation', 'decision', 'workflow_id', 'review_id', 'resource_type', 'resource_id', 'data'];

/** A day picked in the filter (YYYY-MM-DD, the browser's time zone) as the instant it starts; `next` for the day after. */
function dayStart(date: string | undefined, next = false): string | undefined {
  if (!date) return undefined;
  const [year, month, day] = date.split('-').map(Number);
  return new Date(year!, month! - 1, day! + (next ? 1 : 0)).toISOString();
}

function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

/** Where a person gave a verdict, as the trail keeps it (`via`), in words. */
const verdictChannels: Record<string, string> = {
  console: 'in the console',
  link: 'from a decision link',
  slack: 'from Slack',
  api_token: 'with a personal access token',
};

/** What an event says, in a few words (a verdict also how it was given: where, and whether a passkey signed it). */
function detail(event: AuditEvent): string {
  const what = summary(event);
  const via = verdictChannels[String(event.data.via)];
  if (!event.type.startsWith('review.') || !via) return what;
  const how = `Given ${via}${event.data.passkey ? ', signed with a passkey' : ''}`;
  return what ? `${what} · ${how}` : how;
}

function summary(event: AuditEvent): string {
  const data = event.data;
  if (event.type === 'gate.decided') return String(data.reason ?? '');
  if (event.type === 'write.failed') return String(data.message ?? '');
  if (event.type === 'review.escalated') return `Told the ${String(data.tier)}`;
  if (event.type === 'changeset.item_edited')
    return `Item ${Number(data.item) + 1} (${String(data.operation)}): edited ${(data.fields as string[] | undefined)?.join(', ') ?? ''}: the policy said ${String(data.decision)}`;
  if (event.type === 'review.edited') return `Edited ${(data.fields as string[] | undefined)?.join(', ') ?? ''}: the policy said ${String(data.decision)}`;
  if (event.type === 'review.approval_added') return `Approval ${String(data.approvals)} of ${String(data.required)}`;
  if (event.type === 'review.withdrawn') return data.reason === 'connection_ended' ? 'Its app was disconnected' : 'Its API key was revoked';
  if (event.type.startsWith('review.') && data.comment) return `“${String(data.comment)}”`;
  if (event.type.startsWith('api_key.')) return `Key “${String(data.label ?? event.resource_id)}”`;
  if (event.type === 'policy.updated') return `Version ${String(data.version)}`;
  if (event.type === 'write.applied') return `${event.resource_type ?? 'Record'} ${event.resource_id ?? ''}`;
  if (event.type === 'write.undone') return `${event.resource_type ?? 'Record'} ${event.resource_id ?? ''} ${String(event.data.outcome ?? 'undone')}, undoing ${String(event.data.undoes ?? '')}`;
  if (event.type === 'trust_window.opened') return `Trust window ${event.resource_id ?? ''}: ${String(data.operation)}, at most ${String(data.max_uses)} writes in ${String(data.minutes)} minutes`;
  if (event.type === 'trust_window.closed') {
    const uses = data.max_uses === undefined ? `${String(data.uses)} used` : `${String(data.uses)} of ${String(data.max_uses)} used`;
    return `Trust window ${event.resource_id ?? ''} ${data.reason === 'used_up' ? 'used up' : 'closed'} (${uses})`;
  }
  if (event.type.startsWith('person.') && typeof data.email === 'string') return data.email;
  return '';
}

/** The audit trail: every decision, review, write and change, filtered, paged and exported. */
export function AuditPage() {
  useDocumentTitle('Audit');
  const { can } = useSignedIn();
  // Who may list people picks one; the others (reviewers) type a person's id.
  const listsPeople = can('managePeople');
  const [keys, setKeys] = useState<AgentDay[]>([]);
  const [people, setPeople] = useState<Person[]>([]);
  const [form, setForm] = useState<AuditFilters & { from?: string; to?: string }>({});
  const [events, setEvents] = useState<AuditEvent[]>();
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [exporting, setExporting] = useState<string>();
  /** Bumped after an undo, to read the trail again (the undo's own event, the write now undone). */
  const [reads, setReads] = useState(0);
  /**
   * The last undo, said above the trail: the row's own button goes as the trail is read again (the write is undone
   * now), and its word with it.
   */
  const [undoneNote, setUndoneNote] = useState('');

  const filters: AuditFilters = {
    type: form.type,
    api_key_id: form.api_key_id,
    user_id: form.user_id?.trim() || undefined,
    operation: form.operation?.trim() || undefined,
    decision: form.decision,
    since: dayStart(form.from),
    until: dayStart(form.to, true),
  };
  const filterKey = JSON.stringify(filters);

  useEffect(() => {
    directory.agentDays().then(setKeys, setError);
  }, []);
  useEffect(() => {
    if (listsPeople) directory.people().then(setPeople, setError);
  }, [listsPeople]);
  useEffect(() => {
    let current = true;
    auditApi.page(JSON.parse(filterKey) as AuditFilters).then(
      (page) => {
        if (!current) return;
        setEvents(page.items);
        setNextCursor(page.nextCursor);
        setError(undefined);
      },
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [filterKey, reads]);

  const who = (event: AuditEvent) => {
    const name = event.actor.name ?? event.actor.id;
    if (event.actor.type === 'api_key') return `Key “${name}”`;
    if (event.actor.type === 'user') return name ?? 'A person';
    return event.actor.id === 'cli' ? 'The CLI' : 'Gatehouse';
  };
  const set = (change: Partial<typeof form>) => setForm((current) => ({ ...current, ...change }));
  const busy = exporting?.startsWith('Exporting') ?? false;

  async function loadMore() {
    try {
      const page = await auditApi.page(filters, nextCursor);
      setEvents((current) => [...(current ?? []), ...page.items]);
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setError(failure);
    }
  }

  async function exportAs(format: 'csv' | 'jsonl') {
    setExporting('Exporting…');
    try {
      const all = (await auditApi.all(filters, (count) => setExporting(`Exporting… ${count} events`))).reverse();
      const stamp = new Date().toISOString().slice(0, 10);
      if (format === 'jsonl') download(`audit-${stamp}.jsonl`, 'application/x-ndjson', all.map((event) => `${JSON.stringify(event)}\n`).join(''));
      else {
        const rows = all.map((event) => ({ ...event, actor_type: event.actor.type, actor_id: event.actor.id, actor_name: event.actor.name, data: JSON.stringify(event.data) }));
        download(`audit-${stamp}.csv`, 'text/csv', stringify(rows, { header: true, columns: csvColumns }));
      }
      setExporting(`Exported ${all.length} events, oldest first.`);
    } catch (failure) {
      setExporting(undefined);
      setError(failure);
    }
  }

  return (
    <>
      <h1>Audit</h1>
      <p className="lede">Every decision the policy made, every review and its outcome, every write applied or failed, and every change to keys, people and policy.</p>
      <FormError error={error} />
      <form className="row filters" aria-label="Filter events" onSubmit={(event) => event.preventDefault()}>
        <FormField id="audit-type" label="Event">
          {(control) => (
            <select {...control} value={form.type ?? ''} onChange={(event) => set({ type: event.target.value || undefined })}>
              <option value="">Any</option>
              {eventTypes.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          )}
        </FormField>
        <FormField id="audit-key" label="Key">
          {(control) => (
            <select {...control} value={form.api_key_id ?? ''} onChange={(event) => set({ api_key_id: event.target.value || undefined })}>
              <option value="">Any</option>
              {keys.map((key) => (
                <option key={key.api_key_id} value={key.api_key_id}>
                  {key.label}
                </option>
              ))}
            </select>
          )}
        </FormField>
        <FormField id="audit-person" label="Person" hint={listsPeople ? undefined : "A person's id: what they did and what was done to them."}>
          {(control) =>
            listsPeople ? (
              <select {...control} value={form.user_id ?? ''} onChange={(event) => set({ user_id: event.target.value || undefined })}>
                <option value="">Anyone</option>
                {people.map((person) => (
                  <option key={person.id} value={person.id}>
                    {`${person.name ? `${person.name} (${person.email})` : person.email}${person.active ? '' : ', deactivated'}`}
                  </option>
                ))}
              </select>
            ) : (
              <input {...control} placeholder="usr_…" maxLength={100} value={form.user_id ?? ''} onChange={(event) => set({ user_id: event.target.value })} />
            )
          }
        </FormField>
        <FormField id="audit-decision" label="Decision">
          {(control) => (
            <select {...control} value={form.decision ?? ''} onChange={(event) => set({ decision: (event.target.value || undefined) as Decision | undefined })}>
              <option value="">Any</option>
              {Object.entries(decisionNames).map(([value, name]) => (
                <option key={value} value={value}>
                  {name}
                </option>
              ))}
            </select>
          )}
        </FormField>
        <FormField id="audit-operation" label="Operation">
          {(control) => <input {...control} placeholder="tasks.create" value={form.operation ?? ''} onChange={(event) => set({ operation: event.target.value })} />}
        </FormField>
        <FormField id="audit-from" label="From">
          {(control) => <input {...control} type="date" value={form.from ?? ''} onChange={(event) => set({ from: event.target.value || undefined })} />}
        </FormField>
        <FormField id="audit-to" label="To">
          {(control) => <input {...control} type="date" value={form.to ?? ''} onChange={(event) => set({ to: event.target.value || undefined })} />}
        </FormField>
      </form>
      <div className="row export">
        <button type="button" className="button secondary small" onClick={() => void exportAs('csv')} disabled={busy}>
          Export CSV
        </button>
        <button type="button" className="button secondary small" onClick={() => void exportAs('jsonl')} disabled={busy}>
          Export JSON Lines
        </button>
        <p role="status" className="hint">
          {exporting ?? ''}
        </p>
      </div>
      <p role="status" className="hint">
        {undoneNote}
      </p>
      <DataTable label="Audit events, newest first" columns={['When', 'Event', 'Who', 'Operation', 'Decision', 'Details']}>
        {(events ?? []).map((event) => (
          <tr key={event.id} data-event-id={event.id}>
            <td className="when">{when(event.created_at)}</td>
            <td>
              <code>{event.type}</code>
            </td>
            <td>{who(event)}</td>
            <td>{event.operation ? <code>{event.operation}</code> : '—'}</td>
            <td>{event.decision ? <span className={`state ${event.decision === 'allow' ? 'on' : event.decision === 'review' ? 'waiting' : 'off'}`}>{decisionNames[event.decision]}</span> : '—'}</td>
            <td className="details">
              {detail(event)}
              {event.review_id ? (
                <>
                  {' '}
                  <Link to={`/reviews/${event.review_id}`}>Review {event.review_id}</Link>
                </>
              ) : null}
              {event.type === 'write.applied' && event.undone_by ? <> Undone ({event.undone_by}).</> : null}
              {event.type === 'write.applied' && event.workflow_id && event.undoable_until && can('decideReviews') ? (
                <UndoButton
                  write={event.workflow_id}
                  what={summary(event)}
                  saidByPage
                  onUndone={(undone) => {
                    setUndoneNote(`${undoneSentence(undone)} (${summary(event)})`);
                    setReads((count) => count + 1);
                  }}
                />
              ) : null}
            </td>
          </tr>
        ))}
      </DataTable>
      {events?.length === 0 && <p>No events match.</p>}
      {nextCursor && (
        <button type="button" className="button secondary" onClick={() => void loadMore()}>
          Show older events
        </button>
      )}
    </>
  );
}
