import { api, type ListPage } from '../../lib/api';

export type Decision = 'allow' | 'review' | 'deny' | 'refused';

export interface AuditEvent {
  id: string;
  type: string;
  actor: { type: 'api_key' | 'user' | 'system'; id: string | null; name: string | null };
  workflow_id: string | null;
  review_id: string | null;
  resource_type: string | null;
  resource_id: string | null;
  operation: string | null;
  decision: Decision | null;
  data: Record<string, unknown>;
  created_at: string;
}

export interface AuditFilters {
  type?: string;
  api_key_id?: string;
  /** A person (usr_…): what they did and what was done to them. */
  user_id?: string;
  operation?: string;
  decision?: Decision;
  /** RFC 3339 instants. */
  since?: string;
  until?: string;
}

const query = (filters: AuditFilters, cursor: string | null, limit: number) => {
  const params = new URLSearchParams({ limit: String(limit) });
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, String(value));
  if (cursor) params.set('cursor', cursor);
  return params.toString();
};

export const auditApi = {
  page: (filters: AuditFilters, cursor: string | null = null, limit = 50) => api.page<AuditEvent>(`/v1/audit-events?${query(filters, cursor, limit)}`),
  /** Every event the filters keep, newest first, page after page; `onProgress` hears the count so far. */
  async all(filters: AuditFilters, onProgress: (count: number) => void): Promise<AuditEvent[]> {
    const events: AuditEvent[] = [];
    let page: ListPage<AuditEvent> | undefined;
    do {
      page = await auditApi.page(filters, page?.nextCursor ?? null, 200);
      events.push(...page.items);
      onProgress(events.length);
    } while (page.nextCursor);
    return events;
  },
};
