import type { ReviewFilters, reviewsApi, ReviewStatus } from './api';

type Choices = Awaited<ReturnType<typeof reviewsApi.filterChoices>>;

const hour = 3_600_000;
const spans = { '1h': hour, '1d': 24 * hour, '1w': 7 * 24 * hour } as const;
type Span = keyof typeof spans;
const heldSpans = ['1h', '1d', '1w'] as const satisfies readonly Span[];
const expiringSpans = ['1h', '1d'] as const satisfies readonly Span[];
const spanWords: Record<Span, string> = { '1h': '1 hour', '1d': '1 day', '1w': '1 week' };
const statuses = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const satisfies readonly ReviewStatus[];

/** The queue's filters as the page's address keeps them (so Back from a card returns to the same queue). */
export interface QueueFilters {
  status: ReviewStatus | 'any';
  key?: string;
  operation?: string;
  /** Held more than this long ago. */
  held?: (typeof heldSpans)[number];
  /** Expiring within this span from now. */
  expiring?: (typeof expiringSpans)[number];
}

const oneOf = <T extends string>(allowed: readonly T[], value: string | null): T | undefined => allowed.find((candidate) => candidate === value);

export function filtersFromAddress(search: URLSearchParams): QueueFilters {
  return {
    status: search.get('status') === 'any' ? 'any' : (oneOf(statuses, search.get('status')) ?? 'pending'),
    key: search.get('key') || undefined,
    operation: search.get('operation') || undefined,
    held: oneOf(heldSpans, search.get('held')),
    expiring: oneOf(expiringSpans, search.get('expiring')),
  };
}

export function addressOf(filters: QueueFilters): Record<string, string> {
  const shown: Record<string, string | undefined> = {
    status: filters.status === 'pending' ? undefined : filters.status,
    key: filters.key,
    operation: filters.operation,
    held: filters.held,
    expiring: filters.expiring,
  };
  return Object.fromEntries(Object.entries(shown).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The filters as reviews.list and reviews.count take them, the spans counted back (or on) from `now`. */
export function apiFilters(filters: QueueFilters, now = Date.now()): ReviewFilters {
  return {
    ...(filters.status !== 'any' ? { status: filters.status } : {}),
    ...(filters.key ? { api_key_id: filters.key } : {}),
    ...(filters.operation ? { operation: filters.operation } : {}),
    ...(filters.held ? { held_before: new Date(now - spans[filters.held]).toISOString() } : {}),
    ...(filters.expiring ? { expires_before: new Date(now + spans[filters.expiring]).toISOString() } : {}),
  };
}

/** What the count counts: "pending", "approved"… or "reviews" for any status. */
export function countedWord(filters: QueueFilters, count: number): string {
  if (filters.status === 'any') return count === 1 ? 'review' : 'reviews';
  return filters.status;
}

const waiting = (pending: number) => (pending > 0 ? ` (${pending.toLocaleString('en')} pending)` : '');

/** Status, key, operation, age and deadline: every key and operation with a review is offered, not only those shown. */
export function QueueFilterForm({ filters, choices, onChange }: { filters: QueueFilters; choices: Choices | undefined; onChange: (change: Partial<QueueFilters>) => void }) {
  const set = onChange;
  const keys = choices?.keys ?? [];
  const operations = choices?.operations ?? [];
  return (
    <form className="row filters queue-filters" aria-label="Filter reviews" onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor="filter-status">Status</label>
        <select id="filter-status" value={filters.status} onChange={(event) => set({ status: event.target.value as QueueFilters['status'] })}>
          <option value="pending">Pending</option>
          <option value="approved">Approved</option>
          <option value="denied">Denied</option>
          <option value="expired">Expired</option>
          <option value="withdrawn">Withdrawn</option>
          <option value="any">Any</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-key">API key</label>
        <select id="filter-key" value={filters.key ?? ''} onChange={(event) => set({ key: event.target.value || undefined })}>
          <option value="">Any</option>
          {filters.key && !keys.some((key) => key.api_key_id === filters.key) && <option value={filters.key}>{filters.key}</option>}
          {keys.map((key) => (
            <option key={key.api_key_id} value={key.api_key_id}>
              {key.label}
              {waiting(key.pending)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-operation">Operation</label>
        <select id="filter-operation" value={filters.operation ?? ''} onChange={(event) => set({ operation: event.target.value || undefined })}>
          <option value="">Any</option>
          {filters.operation && !operations.some((operation) => operation.operation === filters.operation) && <option value={filters.operation}>{filters.operation}</option>}
          {operations.map((operation) => (
            <option key={operation.operation} value={operation.operation}>
              {operation.operation}
              {waiting(operation.pending)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-held">Held</label>
        <select id="filter-held" value={filters.held ?? ''} onChange={(event) => set({ held: oneOf(heldSpans, event.target.value) })}>
          <option value="">Any time</option>
          {heldSpans.map((span) => (
            <option key={span} value={span}>
              More than {spanWords[span]} ago
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-expiring">Expires</label>
        <select id="filter-expiring" value={filters.expiring ?? ''} onChange={(event) => set({ expiring: oneOf(expiringSpans, event.target.value) })}>
          <option value="">Any time</option>
          {expiringSpans.map((span) => (
            <option key={span} value={span}>
              Within {spanWords[span]}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}
