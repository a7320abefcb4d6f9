import { api, queryString } from '../../lib/api';
import type { Body, Data, Item } from '../../lib/api-types';

export type WebhookEndpoint = Item<'webhooks_list'>;
export type WebhookDelivery = Item<'webhooks_deliveries'>;
export type DeliveryStatus = WebhookDelivery['status'];
export type NewEndpoint = Body<'webhooks_create'>;
/** An event type the service lists, which is one an endpoint takes (the list's schema says only string). */
export type EventTypeInfo = Item<'webhooks_event_types'> & { type: NewEndpoint['event_types'][number] };

const endpointPath = (id: string) => `/v1/webhook-endpoints/${encodeURIComponent(id)}`;

export const webhooksApi = {
  eventTypes: () => api.get<EventTypeInfo[]>('/v1/webhook-endpoints/event-types'),
  list: () => api.get<Data<'webhooks_list'>>('/v1/webhook-endpoints'),
  /** The answer carries the signing secret, shown this once. */
  create: (endpoint: NewEndpoint) => api.post<Data<'webhooks_create'>>('/v1/webhook-endpoints', endpoint),
  setEnabled: (id: string, enabled: boolean) => api.patch<Data<'webhooks_update'>>(endpointPath(id), { enabled } satisfies Body<'webhooks_update'>),
  remove: (id: string) => api.delete<Data<'webhooks_delete'>>(endpointPath(id)),
  /** The endpoint's delivery log, newest first, a page at a time. */
  deliveries: (id: string, cursor: string | null, limit: number, options?: { background?: boolean }) =>
    api.page<WebhookDelivery>(`${endpointPath(id)}/deliveries?${queryString({ limit, cursor })}`, options),
  /** A new pending delivery of the same event (the same webhook-id) to the same endpoint. */
  redeliver: (deliveryId: string) => api.post<Data<'webhooks_redeliver'>>(`/v1/webhook-deliveries/${encodeURIComponent(deliveryId)}/redeliver`),
};
