import { z } from 'zod';
import { rolesThat, type PersonActor } from '../../domain/identity/actors';
import { text } from '../../domain/kit/fields';
import { pageInput } from '../../domain/kit/pagination';
import { listDeliveries, redeliver, type WebhookDelivery } from '../../domain/notify/deliveries';
import {
  allWebhookEventTypes,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
  webhookEventTypes,
  type WebhookEndpoint,
} from '../../domain/notify/endpoints';
import { defineOperation } from './operation';

// Outgoing events: the organization's webhook endpoints and their delivery logs, for its owners and admins (in the
// console's Settings, or over REST with a personal token).

const access = { person: { roles: rolesThat.manageWebhooks } };
const actorOf = (actor: PersonActor) => ({ type: 'user' as const, id: actor.userId });

const eventTypeField = z.enum(allWebhookEventTypes as [string, ...string[]]);

const endpointSchema = z.object({
  id: z.string().describe('The endpoint (whk_…)'),
  url: z.string().describe('Where events are POSTed: https (http only to loopback, in development)'),
  description: z.string().nullable().describe('What it is for'),
  event_types: z.array(z.string()).describe('The event types it receives'),
  enabled: z.boolean().describe('Whether events are sent to it'),
  disabled_reason: z.string().nullable().describe('Why it is switched off: by a person, or by Gatehouse after deliveries kept failing'),
  failure_streak: z.number().int().describe('Deliveries in a row that failed every attempt (it is switched off at the limit)'),
  created_at: z.iso.datetime().describe('When it was registered'),
  updated_at: z.iso.datetime().describe('When it last changed'),
});

const deliverySchema = z.object({
  id: z.string().describe('The delivery (whd_…)'),
  endpoint_id: z.string().describe('The endpoint it goes to'),
  event_id: z.string().describe('The event: the webhook-id header, the same on every attempt and redelivery'),
  event_type: z.string().describe('review.created, write.applied, …'),
  status: z.enum(['pending', 'delivered', 'failed']).describe('pending: still trying; delivered: a 2xx answer; failed: every attempt failed'),
  attempts: z.number().int().describe('Attempts made so far'),
  response_status: z.number().int().nullable().describe("The receiver's HTTP status at the last attempt; null when none came"),
  last_error: z.string().nullable().describe("What went wrong at the last attempt: the receiver's status and answer, or the network's error"),
  last_attempt_at: z.iso.datetime().nullable().describe('When it was last tried'),
  delivered_at: z.iso.datetime().nullable().describe('When the receiver accepted it'),
  created_at: z.iso.datetime().describe('When it was made'),
  redelivery_of: z.string().nullable().describe('The delivery a person sent again, for a redelivery'),
});

const wireOfEndpoint = (endpoint: WebhookEndpoint): z.infer<typeof endpointSchema> => ({
  id: endpoint.id,
  url: endpoint.url,
  description: endpoint.description,
  event_types: endpoint.eventTypes,
  enabled: endpoint.enabled,
  disabled_reason: endpoint.disabledReason,
  failure_streak: endpoint.failureStreak,
  created_at: endpoint.createdAt,
  updated_at: endpoint.updatedAt,
});

const wireOfDelivery = (delivery: WebhookDelivery): z.infer<typeof deliverySchema> => ({
  id: delivery.id,
  endpoint_id: delivery.endpointId,
  event_id: delivery.eventId,
  event_type: delivery.eventType,
  status: delivery.status,
  attempts: delivery.attempts,
  response_status: delivery.responseStatus,
  last_error: delivery.lastError,
  last_attempt_at: delivery.lastAttemptAt,
  delivered_at: delivery.deliveredAt,
  created_at: delivery.createdAt,
  redelivery_of: delivery.redeliveryOf,
});

const endpointId = text({ max: 100 }).describe('The endpoint (whk_…)');
const fields = {
  url: text({ min: 1, max: 2000 }).describe('Where to POST events: https://…'),
  description: text({ max: 500 }).describe('What it is for, e.g. "Ops alerts"'),
  event_types: z.array(eventTypeField).min(1).max(allWebhookEventTypes.length * 2).describe('The event types to send it'),
};

export const listWebhookEventTypesOperation = defineOperation({
  kind: 'read',
  name: 'webhooks.event_types',
  family: 'webhooks',
  summary: 'The event types an endpoint can receive',
  description: 'Each event type a webhook endpoint can ask for, with when it is sent.',
  method: 'GET',
  path: '/webhook-endpoints/event-types',
  list: false,
  input: z.strictObject({}),
  output: z.array(z.object({ type: z.string().describe('The event type'), description: z.string().describe('When it is sent') })),
  access,
  handler: async () => Object.entries(webhookEventTypes).map(([type, description]) => ({ type, description })),
});

export const listWebhookEndpointsOperation = defineOperation({
  kind: 'read',
  name: 'webhooks.list',
  family: 'webhooks',
  summary: "List the organization's webhook endpoints",
  description: 'Every endpoint, oldest first, with whether it is switched on; signing secrets are never shown again.',
  method: 'GET',
  path: '/webhook-endpoints',
  // Whole: an organization has a handful of endpoints.
  list: false,
  input: z.strictObject({}),
  output: z.array(endpointSchema),
  access,
  handler: async (_input, { db, caller }) => (await listWebhookEndpoints(db, caller.organization.id)).map(wireOfEndpoint),
});

export const getWebhookEndpointOperation = defineOperation({
  kind: 'read',
  name: 'webhooks.get',
  family: 'webhooks',
  summary: 'Get a webhook endpoint',
  description: 'One endpoint, with whether it is switched on and why not.',
  method: 'GET',
  path: '/webhook-endpoints/:id',
  list: false,
  input: z.strictObject({ id: endpointId }),
  output: endpointSchema,
  access,
  handler: async (input, { db, caller }) => wireOfEndpoint(await findWebhookEndpoint(db, caller.organization.id, input.id)),
});

export const createWebhookEndpointOperation = defineOperation({
  kind: 'person_action',
  name: 'webhooks.create',
  family: 'webhooks',
  summary: 'Register a webhook endpoint',
  description:
    'Events of the types named are POSTed to the URL, signed by the Standard Webhooks scheme with the secret in the answer, shown this once. The URL must be https and reach a public address.',
  method: 'POST',
  path: '/webhook-endpoints',
  input: z.strictObject({ url: fields.url, description: fields.description.optional(), event_types: fields.event_types }),
  output: z.object({ endpoint: endpointSchema.describe('The endpoint, as registered'), secret: z.string().describe('The signing secret (whsec_…), shown once: store it now') }),
  access,
  handler: async (input, { db, secrets, caller, outbound }) => {
    const created = await createWebhookEndpoint(
      db,
      secrets,
      caller.organization.id,
      { url: input.url, description: input.description, eventTypes: input.event_types },
      outbound,
      actorOf(caller.actor as PersonActor),
    );
    return { endpoint: wireOfEndpoint(created.endpoint), secret: created.secret };
  },
});

export const updateWebhookEndpointOperation = defineOperation({
  kind: 'person_action',
  name: 'webhooks.update',
  family: 'webhooks',
  summary: 'Change a webhook endpoint',
  description: 'Its URL, description or event types, or switch it off and on (switching it on clears its failures).',
  method: 'PATCH',
  path: '/webhook-endpoints/:id',
  input: z.strictObject({
    id: endpointId,
    url: fields.url.optional(),
    description: fields.description.nullable().optional(),
    event_types: fields.event_types.optional(),
    enabled: z.boolean().optional().describe('false switches it off; true switches it back on'),
  }),
  output: endpointSchema,
  access,
  handler: async (input, { db, caller, outbound }) =>
    wireOfEndpoint(
      await updateWebhookEndpoint(
        db,
        caller.organization.id,
        input.id,
        { url: input.url, description: input.description, eventTypes: input.event_types, enabled: input.enabled },
        outbound,
        actorOf(caller.actor as PersonActor),
      ),
    ),
});

export const deleteWebhookEndpointOperation = defineOperation({
  kind: 'person_action',
  name: 'webhooks.delete',
  family: 'webhooks',
  summary: 'Remove a webhook endpoint',
  description: 'Nothing more is sent to it; its delivery log goes with it.',
  method: 'DELETE',
  path: '/webhook-endpoints/:id',
  input: z.strictObject({ id: endpointId }),
  output: endpointSchema,
  access,
  handler: async (input, { db, caller }) =>
    wireOfEndpoint(await deleteWebhookEndpoint(db, caller.organization.id, input.id, actorOf(caller.actor as PersonActor))),
});

export const listWebhookDeliveriesOperation = defineOperation({
  kind: 'read',
  name: 'webhooks.deliveries',
  family: 'webhooks',
  summary: "An endpoint's delivery log",
  description: 'Each delivery to the endpoint, newest first: its event, status, attempts, and the last answer or error.',
  method: 'GET',
  path: '/webhook-endpoints/:id/deliveries',
  list: true,
  input: z.strictObject({ id: endpointId, ...pageInput }),
  output: z.array(deliverySchema),
  access,
  handler: async (input, { db, caller }) => {
    const page = await listDeliveries(db, caller.organization.id, input.id, input);
    return { ...page, items: page.items.map(wireOfDelivery) };
  },
});

export const redeliverWebhookOperation = defineOperation({
  kind: 'person_action',
  name: 'webhooks.redeliver',
  family: 'webhooks',
  summary: 'Send a delivery again',
  description: "A new delivery of the same event (the same webhook-id, for the receiver to de-duplicate) to the same endpoint, with its own attempts.",
  method: 'POST',
  path: '/webhook-deliveries/:id/redeliver',
  input: z.strictObject({ id: text({ max: 100 }).describe('The delivery to send again (whd_…)') }),
  output: deliverySchema,
  access,
  handler: async (input, { db, caller }) => wireOfDelivery(await redeliver(db, caller.organization.id, input.id, actorOf(caller.actor as PersonActor))),
});

export const webhookOperations = [
  listWebhookEventTypesOperation,
  listWebhookEndpointsOperation,
  getWebhookEndpointOperation,
  createWebhookEndpointOperation,
  updateWebhookEndpointOperation,
  deleteWebhookEndpointOperation,
  listWebhookDeliveriesOperation,
  redeliverWebhookOperation,
];
