import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { cliActor, recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { placeOf, type SealedColumn } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';
import { checkOutboundUrl, hostOf, type OutboundRules } from './outbound';

/** What an organization can be told of, and when each is sent. */
export const webhookEventTypes = {
  'review.created': 'A write was held for review (a policy said Review)',
  'review.decided': 'A person approved or denied a held write',
  'review.expired': 'A held write waited past its deadline and will not be applied',
  'review.withdrawn':
    'A held write was withdrawn while it waited and will not be applied: `reason` is key_revoked (its API key was revoked) or connection_ended (the app that made it was disconnected); the actor withdrew it',
  'write.applied': 'A gated write was applied (at once, or after approval)',
  'write.denied': 'A policy denied a write',
  'write.failed': 'A write could not be applied (refused, or an approved write that no longer fits the data)',
  'write.undone': 'An applied write was undone (by an agent or a person); `undoes` names it',
  'trust_window.opened':
    'A person approving a held write opened a trust window: the key (`api_key_id`) may make the same `operation` with the `match` values without review, `max_uses` times until `expires_at`',
  'trust_window.closed':
    'A trust window closed: `reason` is closed (a person closed it, the actor) or used_up (the write in `workflow_id` took its last use); one that expires sends nothing',
  'key.created': 'An API key was created',
  'key.revoked': 'An API key was revoked',
  'policy.changed': "The organization's policy set was replaced",
  'audit.head': "Each day, the audit ledger's head (its last sealed event and hash), as an outside witness",
} as const;

export type WebhookEventType = keyof typeof webhookEventTypes;
export const allWebhookEventTypes = Object.keys(webhookEventTypes) as WebhookEventType[];

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  disabledReason: string | null;
  failureStreak: number;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointChanges {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
}

interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  disabled_reason: string | null;
  failure_streak: number;
  created_at: Date;
  updated_at: Date;
}

const endpointOf = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  description: row.description,
  eventTypes: row.event_types,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  failureStreak: row.failure_streak,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** Where an endpoint's signing secret is kept, sealed: every delivery is signed with it, so it is read back. */
export const endpointSecretColumn: SealedColumn = { table: 'webhook_endpoints', column: 'secret', rowKey: 'id' };

/** A Standard Webhooks signing secret: whsec_ and 24 random bytes in base64. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function checkEventTypes(types: string[]): WebhookEventType[] {
  const unknown = types.filter((type) => !(type in webhookEventTypes));
  const problem = !types.length ? 'name at least one event type' : unknown.length ? `unknown event types: ${unknown.join(', ')}` : undefined;
  if (problem) throw new AppError('validation_failed', `event_types: ${problem}`, { fields: [{ field: 'event_types', message: problem }] });
  return [...new Set(types)] as WebhookEventType[];
}

/** Registers an endpoint; the answer carries its signing secret, shown this once. */
export async function createWebhookEndpoint(
  db: Database,
  secrets: SecretBox,
  orgId: string,
  input: { url: string; description?: string | null; eventTypes: string[] },
  policy: OutboundRules,
  by: ActorRef = cliActor,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const eventTypes = checkEventTypes(input.eventTypes);
  const url = await checkOutboundUrl(input.url, policy);
  const secret = newSigningSecret();
  const id = newId('whk');
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, org_id, url, description, event_types, secret, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [id, orgId, url, input.description ?? null, eventTypes, secrets.seal(secret, placeOf(endpointSecretColumn, id)), by.type === 'user' ? by.id : null],
    );
    const endpoint = endpointOf(rows[0]!);
    await recordAudit(tx, orgId, { type: 'webhook.created', actor: by, resourceId: endpoint.id, data: { host: hostOf(url), event_types: eventTypes } });
    return { endpoint, secret };
  });
}

export async function listWebhookEndpoints(db: Queryable, orgId: string): Promise<WebhookEndpoint[]> {
  const { rows } = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE org_id = $1 ORDER BY id', [orgId]);
  return rows.map(endpointOf);
}

export async function findWebhookEndpoint(db: Queryable, orgId: string, id: string): Promise<WebhookEndpoint> {
  const { rows } = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE org_id = $1 AND id = $2', [orgId, id]);
  if (!rows[0]) throw new AppError('not_found', `no webhook endpoint ${id}`);
  return endpointOf(rows[0]);
}

/** Changes an endpoint; switching it back on clears its failures. */
export async function updateWebhookEndpoint(
  db: Database,
  orgId: string,
  id: string,
  changes: EndpointChanges,
  policy: OutboundRules,
  by: ActorRef = cliActor,
): Promise<WebhookEndpoint> {
  await findWebhookEndpoint(db, orgId, id);
  const eventTypes = changes.eventTypes === undefined ? undefined : checkEventTypes(changes.eventTypes);
  const url = changes.url === undefined ? undefined : await checkOutboundUrl(changes.url, policy);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = coalesce($3, url),
         description = CASE WHEN $4 THEN $5 ELSE description END,
         event_types = coalesce($6, event_types),
         enabled = coalesce($7, enabled),
         disabled_reason = CASE WHEN $7 IS NULL THEN disabled_reason WHEN $7 THEN NULL ELSE 'Switched off by a person' END,
         failure_streak = CASE WHEN $7 THEN 0 ELSE failure_streak END,
         owners_to_tell = CASE WHEN $7 THEN false ELSE owners_to_tell END,
         updated_at = now()
       WHERE org_id = $1 AND id = $2 RETURNING *`,
      [orgId, id, url ?? null, changes.description !== undefined, changes.description ?? null, eventTypes ?? null, changes.enabled ?? null],
    );
    if (!rows[0]) throw new AppError('not_found', `no webhook endpoint ${id}`);
    const changed = Object.fromEntries(
      Object.entries({ host: url === undefined ? undefined : hostOf(url), description: changes.description, event_types: eventTypes, enabled: changes.enabled }).filter(([, value]) => value !== undefined),
    );
    await recordAudit(tx, orgId, { type: 'webhook.updated', actor: by, resourceId: id, data: changed });
    return endpointOf(rows[0]);
  });
}

/** Removes an endpoint and its delivery log. */
export async function deleteWebhookEndpoint(db: Database, orgId: string, id: string, by: ActorRef = cliActor): Promise<WebhookEndpoint> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<EndpointRow>('DELETE FROM webhook_endpoints WHERE org_id = $1 AND id = $2 RETURNING *', [orgId, id]);
    if (!rows[0]) throw new AppError('not_found', `no webhook endpoint ${id}`);
    await recordAudit(tx, orgId, { type: 'webhook.deleted', actor: by, resourceId: id, data: { host: hostOf(rows[0]!.url) } });
    return endpointOf(rows[0]);
  });
}
