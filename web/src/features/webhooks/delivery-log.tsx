import { useCallback, useEffect, useRef, useState } from 'react';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { useLatest } from '../../lib/use-live';
import { webhooksApi, type DeliveryStatus, type WebhookDelivery, type WebhookEndpoint } from './api';

const pageSize = 20;
/** How often the log looks again while a delivery in it is still pending. */
const pendingRecheckMs = 2000;

const statusNames: Record<DeliveryStatus, string> = { pending: 'Pending', delivered: 'Delivered', failed: 'Failed' };
const statusLooks: Record<DeliveryStatus, string> = { pending: 'waiting', delivered: 'on', failed: 'off' };

interface Log {
  deliveries: WebhookDelivery[];
  nextCursor: string | null;
  /** Older pages are shown: a refresh of the newest page keeps them and their cursor. */
  olderShown: boolean;
}

/** When the receiver took it, or when it was last tried. */
function attemptTime(delivery: WebhookDelivery): string {
  if (delivery.delivered_at) return `at ${when(delivery.delivered_at)}`;
  return delivery.last_attempt_at ? `last tried ${when(delivery.last_attempt_at)}` : 'not tried yet';
}

/** The newest page merged into what is shown, newest first (ids sort by time), each delivery as last seen. */
function merged(newest: WebhookDelivery[], shown: WebhookDelivery[]): WebhookDelivery[] {
  const byId = new Map(shown.map((delivery) => [delivery.id, delivery]));
  for (const delivery of newest) byId.set(delivery.id, delivery);
  return [...byId.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** An endpoint's deliveries, newest first, page after page; each can be sent again. */
export function DeliveryLog({ endpoint, onClose }: { endpoint: WebhookEndpoint; onClose: () => void }) {
  const [log, setLog] = useState<Log>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const heading = useRef<HTMLHeadingElement>(null);
  const latest = useLatest();

  const refresh = useCallback(
    (background: boolean) =>
      latest(
        webhooksApi.deliveries(endpoint.id, null, pageSize, { background }),
        (page) =>
          setLog((current) =>
            current?.olderShown ? { ...current, deliveries: merged(page.items, current.deliveries) } : { deliveries: page.items, nextCursor: page.nextCursor, olderShown: false },
          ),
        // A refresh of its own that fails says nothing: the next one, or the person's, will.
        (failure) => !background && setError(failure),
      ),
    [endpoint.id, latest],
  );

  useEffect(() => {
    refresh(false);
    heading.current?.focus();
  }, [refresh]);

  const pending = log?.deliveries.some((delivery) => delivery.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(() => refresh(true), pendingRecheckMs);
    return () => clearTimeout(timer);
  }, [pending, log, refresh]);

  async function showOlder() {
    if (!log?.nextCursor) return;
    setError(undefined);
    try {
      const page = await webhooksApi.deliveries(endpoint.id, log.nextCursor, pageSize);
      setLog((current) => ({ deliveries: merged(page.items, current?.deliveries ?? []), nextCursor: page.nextCursor, olderShown: true }));
    } catch (failure) {
      setError(failure);
    }
  }

  async function redeliver(delivery: WebhookDelivery) {
    setError(undefined);
    setNotice(undefined);
    try {
      await webhooksApi.redeliver(delivery.id);
      setNotice(`${delivery.event_type} ${delivery.event_id} is being sent again, as a new delivery at the top of the log.`);
      refresh(false);
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section id="delivery-log" aria-labelledby="delivery-log-heading">
      <div className="review-head">
        <h2 id="delivery-log-heading" ref={heading} tabIndex={-1}>
          Delivery log
        </h2>
        <div className="action-buttons">
          <button type="button" className="button secondary small" onClick={() => refresh(false)}>
            Refresh
          </button>
          <button type="button" className="button secondary small" onClick={onClose}>
            Close the log
          </button>
        </div>
      </div>
      <p className="hint">
        Deliveries to <strong>{endpoint.url}</strong>, newest first. A redelivery sends the same event again, with the same <code>webhook-id</code>, for the
        receiver to recognize.
      </p>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <FormError error={error} />
      {log === undefined ? (
        <p role="status">Loading…</p>
      ) : log.deliveries.length === 0 ? (
        <p>Nothing sent to it yet: deliveries appear here as events of its types happen.</p>
      ) : (
        <DataTable label={`Deliveries to ${endpoint.url}, newest first`} columns={['When', 'Event', 'Status', 'Attempts', 'HTTP status', 'Last error', actionsColumn]}>
          {log.deliveries.map((delivery) => (
            <tr key={delivery.id} data-delivery-id={delivery.id}>
              <td className="when">{when(delivery.created_at)}</td>
              <td>
                <code>{delivery.event_type}</code>
                <span className="hint block">
                  <code>{delivery.event_id}</code>
                </span>
              </td>
              <td>
                <span className={`state ${statusLooks[delivery.status]}`}>{statusNames[delivery.status]}</span>
                <span className="hint block">{attemptTime(delivery)}</span>
                {delivery.redelivery_of && <span className="hint block">Redelivery</span>}
              </td>
              <td>{delivery.attempts}</td>
              <td>{delivery.response_status ?? '—'}</td>
              <td>{delivery.last_error ?? '—'}</td>
              <td>
                <button
                  type="button"
                  className="button secondary small"
                  aria-label={`Redeliver ${delivery.event_type} ${delivery.event_id}`}
                  onClick={() => void redeliver(delivery)}
                >
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {log?.nextCursor && (
        <button type="button" className="button secondary" onClick={() => void showOlder()}>
          Show older deliveries
        </button>
      )}
    </section>
  );
}
