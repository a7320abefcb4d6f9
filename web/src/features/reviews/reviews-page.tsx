import { useCallback, useEffect, useRef, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { useLatest, useLive } from '../../lib/use-live';
import { useDocumentTitle } from '../../lib/use-document-title';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { reviewsApi, type Review, type ReviewFilters, type ReviewStatus } from './api';
import { BatchBar } from './batch-bar';
import { ReviewCard } from './review-card';

/** The review queue: pending writes newest first, live; decided and expired ones a filter away. */
export function ReviewsPage() {
  useDocumentTitle('Review queue');
  const [filters, setFilters] = useState<ReviewFilters>({ status: 'pending' });
  const [reviews, setReviews] = useState<Review[]>();
  const [seen, setSeen] = useState<{ keys: Map<string, string>; operations: Set<string> }>({ keys: new Map(), operations: new Set() });
  const [error, setError] = useState<unknown>();
  const { can } = useSignedIn();
  // Once a batch is sent, the bar stays (with its outcome) even when the queue empties, live, as its verdicts commit.
  const [batchSent, setBatchSent] = useState(false);
  // The pending writes the person selected for one verdict; what leaves the list (decided elsewhere, filtered
  // away) leaves the selection.
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const pending = (reviews ?? []).filter((review) => review.status === 'pending');
  const selectedShown = pending.filter((review) => selected.has(review.id)).map((review) => review.id);

  // Every load asks for the filters shown now, whoever calls it: a card's decision answered after the person
  // changed the filter reloads what the page shows, not the list of the filter it was decided under (which, being
  // the newest request, would replace the right answer and stay until the next change).
  const shownFilters = useRef(filters);
  const latest = useLatest();
  const load = useCallback(
    (background = false) =>
      latest(
        reviewsApi.list(shownFilters.current, background),
        (list) => {
      setReviews(list);
      setError(undefined);
      // The filters offer the keys and operations the queue has shown so far.
      setSeen((known) => {
        const keys = new Map(known.keys);
        const operations = new Set(known.operations);
        for (const review of list) {
          keys.set(review.submitted_by.api_key_id, review.submitted_by.api_key_label);
          operations.add(review.operation);
        }
        return { keys, operations };
      });
        },
        setError,
      ),
    [latest],
  );

  useEffect(() => {
    shownFilters.current = filters;
    load();
  }, [filters, load]);
  useLive(['reviews'], () => load(true));

  const set = (change: Partial<ReviewFilters>) => setFilters((current) => ({ ...current, ...change }));
  return (
    <>
      <h1>Review queue</h1>
      <p className="lede">Writes the policy held for a person's decision. The list follows new writes and others' decisions as they happen.</p>
      <form className="row filters" aria-label="Filter reviews" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" value={filters.status ?? ''} onChange={(event) => set({ status: (event.target.value || undefined) as ReviewStatus | undefined })}>
            <option value="pending">Pending</option>
            <option value="approved">Approved</option>
            <option value="denied">Denied</option>
            <option value="expired">Expired</option>
            <option value="">Any</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-key">API key</label>
          <select id="filter-key" value={filters.api_key_id ?? ''} onChange={(event) => set({ api_key_id: event.target.value || undefined })}>
            <option value="">Any</option>
            {[...seen.keys].map(([id, label]) => (
              <option key={id} value={id}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-operation">Operation</label>
          <select id="filter-operation" value={filters.operation ?? ''} onChange={(event) => set({ operation: event.target.value || undefined })}>
            <option value="">Any</option>
            {[...seen.operations].sort().map((operation) => (
              <option key={operation} value={operation}>
                {operation}
              </option>
            ))}
          </select>
        </div>
      </form>
      <FormError error={error} />
      {can('decideReviews') && (pending.length > 0 || batchSent) && (
        <BatchBar
          selected={selectedShown}
          shown={pending.length}
          describe={(id) => {
            const review = pending.find((candidate) => candidate.id === id);
            return review && `${review.operation} by “${review.submitted_by.api_key_label}” (held ${when(review.created_at)})`;
          }}
          onSelectAll={(all) => setSelected(new Set(all ? pending.map((review) => review.id) : []))}
          onSent={() => setBatchSent(true)}
          onDecided={() => {
            setSelected(new Set());
            load();
          }}
        />
      )}
      {reviews !== undefined && (
        <p role="status" className="hint">
          {reviews.length === 50 ? 'The 50 newest shown.' : `${reviews.length} shown.`}
        </p>
      )}
      <section aria-label="Reviews" aria-busy={reviews === undefined}>
        {reviews === undefined ? (
          <p role="status">Loading…</p>
        ) : reviews.length === 0 ? (
          <p className="card">{filters.status === 'pending' ? 'Nothing waits for a decision.' : 'No reviews match.'}</p>
        ) : (
          reviews.map((review) => (
            <ReviewCard
              key={review.id}
              review={review}
              onDecided={() => load()}
              selection={{
                selected: selected.has(review.id),
                onChange: (on) =>
                  setSelected((current) => {
                    const next = new Set(current);
                    if (on) next.add(review.id);
                    else next.delete(review.id);
                    return next;
                  }),
              }}
            />
          ))
        )}
      </section>
    </>
  );
}
