import { Webhook } from 'standardwebhooks';
import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { reviewWebUrl } from '../gate/links';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { placeOf } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';
import { endpointSecretColumn } from './endpoints';
import { decodeCursor, toPage, type Page } from '../kit/pagination';
import { hostOf, postOutbound, type OutboundRules } from './outbound';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  responseStatus: number | null;
  lastError: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  redeliveryOf: string | null;
}

/** How deliveries are made: where they may go, the links they carry, how long a receiver has to answer. */
export interface DeliverySettings {
  policy: OutboundRules;
  publicUrl: string;
  timeoutMs?: number;
  /** Aborts the request in flight (the activity cancelled). */
  signal?: AbortSignal;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  redelivery_of: string | null;
}

const deliveryOf = (row: DeliveryRow): WebhookDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attempts: row.attempts,
  responseStatus: row.response_status,
  lastError: row.last_error,
  lastAttemptAt: iso(row.last_attempt_at),
  deliveredAt: iso(row.delivered_at),
  createdAt: row.created_at.toISOString(),
  redeliveryOf: row.redelivery_of,
});

/** What an outbox event asks for once it is relayed: deliveries to the endpoints that want it. */
export interface PlannedEvent {
  eventId: string;
  type: string;
  orgId: string;
  reviewId: string | null;
  deliveryIds: string[];
}

/**
 * Makes one delivery of the event for each enabled endpoint of its organization that asks for its type (once: a
 * retry finds them made) and answers them all, started from here on by the caller.
 */
export async function planEventDeliveries(db: Database, eventId: string): Promise<PlannedEvent> {
  return db.transaction(async (tx) => {
    const { rows: events } = await tx.query('SELECT id, org_id, type, data FROM webhook_events WHERE id = $1', [eventId]);
    const event = events[0];
    // Pruned since (relayed long after it was written): nothing is left to deliver.
    if (!event) return { eventId, type: 'gone', orgId: '', reviewId: null, deliveryIds: [] };
    const { rows: endpoints } = await tx.query(
      `SELECT e.id FROM webhook_endpoints e
       WHERE e.org_id = $1 AND e.enabled AND $2 = ANY (e.event_types)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = $3 AND d.endpoint_id = e.id AND NOT d.is_redelivery)`,
      [event.org_id, event.type, eventId],
    );
    for (const endpoint of endpoints) {
      await tx.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, started_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT DO NOTHING`,
        [newId('whd'), event.org_id, endpoint.id, eventId],
      );
    }
    const { rows: deliveries } = await tx.query(
      "SELECT id FROM webhook_deliveries WHERE event_id = $1 AND NOT is_redelivery AND status = 'pending' ORDER BY id",
      [eventId],
    );
    return {
      eventId,
      type: event.type,
      orgId: event.org_id,
      reviewId: (event.data as { review_id?: string }).review_id ?? null,
      deliveryIds: deliveries.map((row) => row.id as string),
    };
  });
}

/** The body a receiver gets: the event's type, when it happened, and its data (with the review's page, for reviews). */
export function webhookBody(event: { type: string; created_at: Date; data: Record<string, unknown> }, publicUrl: string): string {
  const data = { ...event.data };
  if (typeof data.review_id === 'string') data.review_web_url = reviewWebUrl(publicUrl, data.review_id);
  return JSON.stringify({ type: event.type, timestamp: event.created_at.toISOString(), data });
}

/** A delivery attempt the receiver did not accept: Temporal retries it. */
export class DeliveryAttemptFailed extends Error {}

/**
 * One attempt at a delivery: signed by the Standard Webhooks scheme (webhook-id is the event's id, the same on
 * every attempt and redelivery), recorded whatever its outcome. Answers the delivery's status: `delivered`, or
 * `failed` without trying when its endpoint was removed or switched off; throws DeliveryAttemptFailed otherwise.
 */
export async function attemptDelivery(db: Database, secrets: SecretBox, deliveryId: string, settings: DeliverySettings, now = new Date()): Promise<DeliveryStatus> {
  const { rows } = await db.query(
    `SELECT d.status, d.endpoint_id, e.url, e.secret, e.enabled, ev.id AS event_id, ev.type, ev.created_at, ev.data
     FROM webhook_deliveries d
     LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
     JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.id = $1`,
    [deliveryId],
  );
  const row = rows[0];
  if (!row) return 'failed'; // its endpoint was deleted, and its log with it
  if (row.status !== 'pending') return row.status;
  if (!row.enabled) {
    await db.query(
      "UPDATE webhook_deliveries SET status = 'failed', last_error = 'The endpoint is switched off' WHERE id = $1 AND status = 'pending'",
      [deliveryId],
    );
    return 'failed';
  }
  const body = webhookBody(row, settings.publicUrl);
  let status: number | null = null;
  let problem: string | null = null;
  try {
    // A secret that does not open (its key no longer held) fails the attempt like a receiver away, in the log.
    const secret = secrets.open(row.secret, placeOf(endpointSecretColumn, row.endpoint_id));
    const headers = {
      'webhook-id': row.event_id,
      'webhook-timestamp': Math.floor(now.getTime() / 1000).toString(),
      'webhook-signature': new Webhook(secret).sign(row.event_id, now, body),
      'user-agent': 'Gatehouse-Webhooks/1',
    };
    const answer = await postOutbound(row.url, body, headers, { policy: settings.policy, timeoutMs: settings.timeoutMs, signal: settings.signal });
    status = answer.status;
    if (status < 200 || status > 299) problem = `HTTP ${status}${answer.body ? `: ${answer.body.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;
  } catch (error) {
    problem = (error as Error).message.slice(0, 300);
  }
  const delivered = problem === null;
  const { rows: recorded } = await db.query(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, response_status = $2, last_error = $3, last_attempt_at = $4,
       status = CASE WHEN $5 THEN 'delivered' ELSE status END, delivered_at = CASE WHEN $5 THEN $4 ELSE delivered_at END
     WHERE id = $1 RETURNING endpoint_id`,
    [deliveryId, status, problem, now, delivered],
  );
  if (delivered) {
    if (recorded[0]) await db.query('UPDATE webhook_endpoints SET failure_streak = 0 WHERE id = $1 AND failure_streak > 0', [recorded[0].endpoint_id]);
    return 'delivered';
  }
  throw new DeliveryAttemptFailed(problem!);
}

/** The endpoint that a delivery went to, once Gatehouse switched it off and its owners are still to be told of it. */
export async function endpointOwnersToTell(db: Queryable, deliveryId: string): Promise<{ orgId: string; endpointId: string; url: string } | undefined> {
  const { rows } = await db.query<{ org_id: string; id: string; url: string }>(
    `SELECT e.org_id, e.id, e.url FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
     WHERE d.id = $1 AND e.owners_to_tell AND NOT e.enabled`,
    [deliveryId],
  );
  return rows[0] ? { orgId: rows[0].org_id, endpointId: rows[0].id, url: rows[0].url } : undefined;
}

/** The owners were told (or there was nobody to tell). */
export async function markOwnersTold(db: Queryable, endpointId: string): Promise<void> {
  await db.query('UPDATE webhook_endpoints SET owners_to_tell = false WHERE id = $1', [endpointId]);
}

/** What became of an endpoint whose delivery failed every attempt. */
export interface FailedDelivery {
  orgId: string;
  endpointId: string;
  url: string;
  /** Switched off just now: its deliveries kept failing. */
  disabled: boolean;
}

/** How the reason of an endpoint the service switched off begins (a person's reads "Switched off by a person"). */
const switchedOffByGatehouse = 'Switched off by Gatehouse: ';

/** An endpoint Gatehouse switched off, for a person to fix: its receiver, then switch it back on. */
export interface EndpointSwitchedOff {
  endpoint_id: string;
  url: string;
  reason: string;
  since: string;
}

/** The organization's endpoints the service switched off because their deliveries kept failing (not those a person switched off). */
export async function endpointsSwitchedOffAfterFailures(db: Queryable, orgId: string): Promise<EndpointSwitchedOff[]> {
  const { rows } = await db.query(
    `SELECT e.id, e.url, e.disabled_reason, e.updated_at FROM webhook_endpoints e
     WHERE e.org_id = $1 AND NOT e.enabled AND e.disabled_reason LIKE '${switchedOffByGatehouse}%' ORDER BY e.id`,
    [orgId],
  );
  return rows.map((row) => ({ endpoint_id: row.id as string, url: row.url as string, reason: row.disabled_reason as string, since: (row.updated_at as Date).toISOString() }));
}

/**
 * Records a delivery that failed every attempt; the endpoint is switched off once `disableAfter` deliveries in a
 * row have failed so (recorded, for its owners to be told).
 */
export async function recordDeliveryFailed(db: Database, deliveryId: string, disableAfter: number): Promise<FailedDelivery | undefined> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      "UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1 AND status = 'pending' RETURNING endpoint_id",
      [deliveryId],
    );
    if (!rows[0]) return undefined;
    const { rows: endpoints } = await tx.query(
      `WITH before AS (SELECT id, enabled FROM webhook_endpoints WHERE id = $1 FOR UPDATE)
       UPDATE webhook_endpoints e SET failure_streak = e.failure_streak + 1,
         enabled = e.enabled AND e.failure_streak + 1 < $2,
         disabled_reason = CASE WHEN e.enabled AND e.failure_streak + 1 >= $2
           THEN '${switchedOffByGatehouse}' || (e.failure_streak + 1) || ' deliveries in a row failed every attempt' ELSE e.disabled_reason END,
         owners_to_tell = e.owners_to_tell OR (e.enabled AND e.failure_streak + 1 >= $2),
         updated_at = now()
       FROM before WHERE e.id = before.id
       RETURNING e.org_id, e.url, e.failure_streak, before.enabled AND NOT e.enabled AS just_disabled`,
      [rows[0].endpoint_id, disableAfter],
    );
    const endpoint = endpoints[0];
    if (!endpoint) return undefined;
    const disabled: boolean = endpoint.just_disabled;
    if (disabled) {
      await recordAudit(tx, endpoint.org_id, {
        type: 'webhook.disabled',
        actor: { type: 'system', id: 'webhooks' },
        resourceId: rows[0].endpoint_id,
        data: { host: hostOf(endpoint.url), failed_deliveries: endpoint.failure_streak },
      });
    }
    return { orgId: endpoint.org_id, endpointId: rows[0].endpoint_id, url: endpoint.url, disabled };
  });
}

const deliveryColumns = 'd.*, ev.type AS event_type';

/** An endpoint's delivery log, newest first. */
export async function listDeliveries(
  db: Queryable,
  orgId: string,
  endpointId: string,
  { limit, cursor }: { limit: number; cursor?: string },
): Promise<Page<WebhookDelivery>> {
  const after = decodeCursor(cursor);
  const { rows: endpoints } = await db.query('SELECT 1 FROM webhook_endpoints WHERE org_id = $1 AND id = $2', [orgId, endpointId]);
  if (!endpoints[0]) throw new AppError('not_found', `no webhook endpoint ${endpointId}`);
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.org_id = $1 AND d.endpoint_id = $2 AND ($3::text IS NULL OR d.id < $3)
     ORDER BY d.id DESC LIMIT $4`,
    [orgId, endpointId, after ?? null, limit + 1],
  );
  return toPage(rows.map(deliveryOf), limit);
}

/**
 * Sends a delivery's event to its endpoint again, as a new delivery (the same event id, for the receiver to
 * de-duplicate): written here, handed to Temporal by the relay.
 */
export async function redeliver(db: Database, orgId: string, deliveryId: string, by: ActorRef): Promise<WebhookDelivery> {
  return db.transaction(async (tx) => {
    const { rows: originals } = await tx.query(
      `SELECT d.endpoint_id, d.event_id, e.enabled FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.org_id = $1 AND d.id = $2`,
      [orgId, deliveryId],
    );
    const original = originals[0];
    if (!original) throw new AppError('not_found', `no webhook delivery ${deliveryId}`);
    if (!original.enabled) throw new AppError('conflict', 'The endpoint is switched off: switch it on before redelivering');
    const id = newId('whd');
    await tx.query('INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, redelivery_of, is_redelivery) VALUES ($1, $2, $3, $4, $5, true)', [
      id,
      orgId,
      original.endpoint_id,
      original.event_id,
      deliveryId,
    ]);
    await recordAudit(tx, orgId, { type: 'webhook.updated', actor: by, resourceId: original.endpoint_id, data: { redelivered: original.event_id, delivery: id } });
    const { rows } = await tx.query<DeliveryRow>(`SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE d.id = $1`, [id]);
    return deliveryOf(rows[0]!);
  });
}
