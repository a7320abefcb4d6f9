import { api } from '../../lib/api';

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  /** Why it is off: switched off by a person, or by Gatehouse after deliveries kept failing. */
  disabled_reason: string | null;
  /** Deliveries in a row that failed every attempt. */
  failure_streak: number;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  endpoint_id: string;
  /** The webhook-id header: the same on every attempt and every redelivery of the event. */
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  redelivery_of: string | null;
}

export interface EventTypeInfo {
  type: string;
  description: string;
}

export interface NewEndpoint {
  url: string;
  description?: string;
  event_types: string[];
}

const endpointPath = (id: string) => `/v1/webhook-endpoints/${encodeURIComponent(id)}`;

export const webhooksApi = {
  eventTypes: () => api.get<EventTypeInfo[]>('/v1/webhook-endpoints/event-types'),
  list: () => api.get<WebhookEndpoint[]>('/v1/webhook-endpoints'),
  /** The answer carries the signing secret, shown this once. */
  create: (endpoint: NewEndpoint) => api.post<{ endpoint: WebhookEndpoint; secret: string }>('/v1/webhook-endpoints', endpoint),
  setEnabled: (id: string, enabled: boolean) => api.patch<WebhookEndpoint>(endpointPath(id), { enabled }),
  remove: (id: string) => api.delete<WebhookEndpoint>(endpointPath(id)),
  /** The endpoint's delivery log, newest first, a page at a time. */
  deliveries: (id: string, cursor: string | null, limit: number, options?: { background?: boolean }) => {
    const params = new URLSearchParams({ limit: String(limit) });
    if (cursor) params.set('cursor', cursor);
    return api.page<WebhookDelivery>(`${endpointPath(id)}/deliveries?${params.toString()}`, options);
  },
  /** A new pending delivery of the same event (the same webhook-id) to the same endpoint. */
  redeliver: (deliveryId: string) => api.post<WebhookDelivery>(`/v1/webhook-deliveries/${encodeURIComponent(deliveryId)}/redeliver`),
};
