import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { when } from '../../lib/format';
import { shown } from '../../lib/record-diff';
import { useLatest } from '../../lib/use-live';
import { reviewsApi, type Review, type ReviewContext } from './api';

// Around a held write, on its card: a warning when its record changed since the hold, what the agent knew about
// the record (its notes), and where the write came from. Each card reads its own (GET /reviews/:id/context).

/** A card asks again when the person turns to it (points at it, moves focus into it), at most this often. */
const askAgainAfterMs = 2000;

/**
 * The review's context, read when the card shows it and whenever the review changes (decided, edited), and
 * again when the person turns to the card (`onAttention`) or, while the card is on screen, when agents' writes may
 * have changed its record (`writes`, a count the page moves on the live `calls` topic): a record changed since the
 * hold is told before they decide. Decided reviews are read once. `card` is the card's element, watched for being
 * on screen, so a long queue does not ask for every card on every write.
 */
export function useReviewContext(
  review: Review,
  { writes = 0, card }: { writes?: number; card?: RefObject<HTMLElement | null> } = {},
): { context: ReviewContext | undefined; onAttention: () => void } {
  const [context, setContext] = useState<ReviewContext>();
  const latest = useLatest();
  const asked = useRef(0);
  const onScreen = useRef(false);
  const ask = useCallback(
    (background: boolean) => {
      asked.current = Date.now();
      // A context that cannot be read leaves the card as it is: the write itself is still shown whole.
      latest(reviewsApi.context(review.id, background), setContext, () => {});
    },
    [latest, review.id],
  );
  // A card is read once it comes near the screen (a page of fifty cards asks for the few in view, not fifty at once,
  // which would queue the page's own requests behind them); without a card to watch, at once.
  const [near, setNear] = useState(card === undefined);
  useEffect(() => {
    const element = card?.current;
    if (!element) return;
    const observer = new IntersectionObserver(
      ([entry]) => {
        onScreen.current = entry?.isIntersecting ?? false;
        if (onScreen.current) setNear(true);
      },
      { rootMargin: '300px 0px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [card]);
  // The queue's live reload hands every card a new review object: only a change of the review itself (decided, edited)
  // reads the context again, so fifty cards do not ask fifty times on every event.
  const version = `${review.status}:${review.edit?.id ?? ''}:${review.approvals.given.length}`;
  useEffect(() => {
    if (near) ask(true);
  }, [ask, version, near]);
  const pending = review.status === 'pending';
  const onAttention = useCallback(() => {
    if (pending && Date.now() - asked.current > askAgainAfterMs) ask(true);
  }, [ask, pending]);
  const firstWrites = useRef(writes);
  useEffect(() => {
    if (writes !== firstWrites.current && pending && onScreen.current) ask(true);
  }, [writes, pending, ask]);
  return { context, onAttention };
}

/** How long agents' calls are gathered before the cards on screen check their records again. */
const writesSettleMs = 1500;

/**
 * A count that moves at most every 1.5 s while agents call (`moved`, on the live `calls` topic): what the queue's
 * cards on screen watch to check their records again.
 */
export function useWritesCount(): { count: number; moved: () => void } {
  const [count, setCount] = useState(0);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const moved = useCallback(() => {
    timer.current ??= window.setTimeout(() => {
      timer.current = undefined;
      setCount((current) => current + 1);
    }, writesSettleMs);
  }, []);
  return { count, moved };
}

type StaleCheck = ReviewContext['stale'][number];

const itemName = (check: StaleCheck) => (check.index === null ? 'The record' : `Item ${check.index + 1}'s record (${check.operation})`);

/** The records written (or deleted) since the write was held: each field, its value then and now. */
export function StaleWarning({ context }: { context: ReviewContext }) {
  const stale = context.stale.filter((check) => check.state !== 'current');
  if (stale.length === 0) return null;
  return (
    <div className="stale-warning" role="alert" data-stale="true">
      {stale.map((check) => (
        <div key={check.index ?? 'write'}>
          <p>
            <strong>
              {itemName(check)} {check.state === 'deleted' ? 'was deleted' : 'changed'} after this write was held.
            </strong>{' '}
            {check.state === 'deleted'
              ? 'Approving it will fail: there is nothing left to write to.'
              : `It is at version ${check.current_version ?? '—'} now (held at ${check.held_version ?? '—'}, written ${when(check.changed_at)}): approving will fail as a conflict. Deny it, or ask the agent to try again.`}
          </p>
          {check.changes.length > 0 && (
            <table className="record diff stale-changes">
              <caption className="visually-hidden">What changed in {check.record_id} since the write was held</caption>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">When held</th>
                  <th scope="col">Now</th>
                </tr>
              </thead>
              <tbody>
                {check.changes.map((change) => (
                  <tr key={change.field} data-stale-field={change.field}>
                    <th scope="row">{change.field}</th>
                    <td>{shown(change.held)}</td>
                    <td>{shown(change.now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </div>
  );
}

/** The submitting key's notes that concern the record, read-only. Not shown to those whose role does not see them. */
export function AgentNotes({ context, agent }: { context: ReviewContext; agent: string }) {
  const { memories } = context;
  if (memories === null) return null;
  return (
    <section className="agent-notes" aria-label={`What “${agent}” knew about the record`}>
      <p>
        <strong>What the agent knew:</strong>{' '}
        {memories.length === 0
          ? <span className="hint">“{agent}” kept no notes about this record.</span>
          : <span className="hint">{memories.length === 1 ? 'one note' : `${memories.length} notes`} of “{agent}” about this record, as they were when it wrote.</span>}
      </p>
      {memories.length > 0 && (
        <ul className="plain-list notes">
          {memories.map((memory) => (
            <li key={memory.id} data-memory-id={memory.id}>
              <blockquote>{memory.content}</blockquote>
              <p className="hint">
                {memory.tags.length > 0 && <>tags {memory.tags.join(', ')} · </>}
                remembered {when(memory.created_at)} · {memory.matched.join('; ')}
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const outcomeNames = { ok: 'ok', applied: 'applied', held: 'held', denied: 'denied', refused: 'refused', error: 'error' } as const;

/** Where the write came from: interface, the key (or connected client), and its calls just before the hold. */
export function Provenance({ context }: { context: ReviewContext }) {
  const { provenance } = context;
  const client = provenance.api_key.connected_client;
  const mcpClient = provenance.mcp_client;
  const calls = provenance.calls_before;
  return (
    <details className="provenance">
      <summary>
        Where it came from: {provenance.interface.toUpperCase()}
        {mcpClient ? ` from ${mcpClient.name} ${mcpClient.version}` : ''} · {client ? `connected app “${provenance.api_key.label}”` : `key “${provenance.api_key.label}”`} ·{' '}
        {calls.length === 0 ? 'no calls just before' : calls.length === 1 ? 'one call just before' : `${calls.length} calls just before`}
      </summary>
      {client && (
        <p className="hint">
          A client a person connected over OAuth: {client.client_id}
          {client.client_uri ? ` (${client.client_uri})` : ''}.
        </p>
      )}
      {calls.length > 0 && (
        <table className="record calls-before">
          <caption className="visually-hidden">The agent's calls before the write was held, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Call</th>
              <th scope="col">Outcome</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => (
              <tr key={call.id}>
                <th scope="row">
                  {call.operation} <span className="hint">({call.interface.toUpperCase()})</span>
                </th>
                <td>{call.outcome === 'refused' || call.outcome === 'error' ? `${outcomeNames[call.outcome]} (${call.code})` : outcomeNames[call.outcome]}</td>
                <td>{when(call.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}
