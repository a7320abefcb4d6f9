import { api, queryString, type ListPage } from '../../lib/api';
import type { Item, Query } from '../../lib/api-types';

export type AuditEvent = Item<'audit_events'>;
export type AuditFilters = Omit<Query<'audit_events'>, 'limit' | 'cursor'>;
/** What a decision came out as, as the filter takes it (an event's own schema says only string). */
export type Decision = NonNullable<AuditFilters['decision']>;

export const auditApi = {
  page: (filters: AuditFilters, cursor: string | null = null, limit = 50) => api.page<AuditEvent>(`/v1/audit-events?${queryString({ limit, ...filters, cursor })}`),
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
