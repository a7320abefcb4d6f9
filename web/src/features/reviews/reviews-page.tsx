import { useCallback, useEffect, useRef, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { agentInWords } from '../../lib/agent-name';
import { FormError } from '../../lib/form-error';
import { useLatest, useLive } from '../../lib/use-live';
import { useDocumentTitle } from '../../lib/use-document-title';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { queuePageSize, reviewsApi, type Review } from './api';
import { BatchBar } from './batch-bar';
import { ReviewCard } from './review-card';
import { useWritesCount } from './review-context';
import { addressOf, apiFilters, countedWord, filtersFromAddress, QueueFilterForm, type QueueFilters } from './queue-filters';
import { useFocusFollowsQueue, useQueueKeys } from './queue-keyboard';
import { QueueKeyLegend, useQueueKeysSetting } from './queue-key-legend';

type Choices = Awaited<ReturnType<typeof reviewsApi.filterChoices>>;
const verdictWords = { pending: 'Approval recorded', approved: 'Approved', denied: 'Denied', expired: 'Expired', withdrawn: 'Withdrawn' } as const;

/**
 * The review queue: pending writes newest first, a page at a time with the exact count of what the filters match,
 * live, and worked from the keyboard; decided and expired ones a filter away.
 */
export function ReviewsPage() {
  useDocumentTitle('Review queue');
  const navigate = useNavigate();
  const [search, setSearch] = useSearchParams();
  // The filters start from the page's address, and the address follows them (replaced, not pushed): a reload, a
  // bookmark or Back from a review shows the same queue.
  const [filters, setFilters] = useState(() => filtersFromAddress(search));
  const filtersKey = new URLSearchParams(addressOf(filters)).toString();
  useEffect(() => {
    if (filtersKey !== search.toString()) setSearch(filtersKey, { replace: true });
    // Only the filters move the address; the address read at the start is the filters' first value.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filtersKey]);
  // The cursors of the pages walked through (the first page has none); a change of filters starts again.
  const [paging, setPaging] = useState<{ key: string; cursors: (string | undefined)[] }>({ key: filtersKey, cursors: [undefined] });
  const cursors = paging.key === filtersKey ? paging.cursors : [undefined];
  const cursor = cursors.at(-1);
  // What the page shows, with the number of the page it is: until a turned page's answer comes, the count line and
  // the cards both still describe the page before (never "51–100 shown" over the first fifty cards).
  const [shown, setShown] = useState<{ reviews: Review[]; nextCursor: string | null; count: number; page: number }>();
  const reviews = shown?.reviews;
  const [choices, setChoices] = useState<Choices>();
  const [error, setError] = useState<unknown>();
  const { can } = useSignedIn();
  // Once a batch is sent, the bar stays (with its outcome) even when the queue empties, live, as its verdicts commit.
  const [batchSent, setBatchSent] = useState(false);
  // The pending writes the person selected for one verdict; what leaves the list (decided elsewhere, filtered
  // away) leaves the selection.
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const pending = (reviews ?? []).filter((review) => review.status === 'pending');
  const selectedShown = pending.filter((review) => selected.has(review.id)).map((review) => review.id);
  const list = useRef<HTMLElement>(null);
  const [keysOn, setKeysOn] = useQueueKeysSetting();
  const [helpOpen, setHelpOpen] = useState(false);
  const [said, setSaid] = useState('');
  // The same words twice are still news: a no-break space tells the live region that something changed.
  const announce = useCallback((text: string) => setSaid((before) => (before === text ? `${text}\u00a0` : text)), []);

  // Every load asks for the filters and page shown now, whoever calls it: a card's decision answered after the
  // person changed the filter reloads what the page shows, not the list of the filter it was decided under (which,
  // being the newest request, would replace the right answer and stay until the next change).
  const shownQuery = useRef<{ filters: QueueFilters; cursor: string | undefined; page: number }>({ filters, cursor, page: cursors.length });
  const latest = useLatest();
  const load = useCallback(
    (background = false) => {
      const { filters: asked, cursor: from, page: number } = shownQuery.current;
      // Ages and deadlines count from now, at every load: "held more than an hour ago" takes in writes as they age.
      const wire = apiFilters(asked);
      latest(
        Promise.all([reviewsApi.page(wire, from, background), reviewsApi.count(wire, background)]),
        ([page, count]) => {
          setShown({ reviews: page.items, nextCursor: page.nextCursor, count, page: number });
          setError(undefined);
        },
        setError,
      );
      reviewsApi.filterChoices(background).then(setChoices, () => {});
    },
    [latest],
  );

  const pageAsked = cursors.length;
  useEffect(() => {
    shownQuery.current = { filters, cursor, page: pageAsked };
    load();
  }, [filters, cursor, pageAsked, load]);
  const writes = useWritesCount();
  useLive(['reviews', 'calls'], (topic) => (topic === 'reviews' ? load(true) : writes.moved()));

  const focus = useFocusFollowsQueue(list, reviews);
  useQueueKeys(list, {
    enabled: keysOn,
    announce,
    toggleHelp: () => setHelpOpen((open) => !open),
    open: (id) => void navigate(`/reviews/${id}`),
    toBatch: () => {
      const bar = document.querySelector<HTMLElement>(selectedShown.length > 0 ? '.batch-bar button:not(:disabled)' : '.batch-bar input[type="checkbox"]');
      if (!bar) return false;
      bar.focus();
      announce(`The batch verdict: ${selectedShown.length} selected.`);
      return true;
    },
  });

  // Each change applies to the filters as they are then: two changes in a row both hold.
  const changeFilters = (change: Partial<QueueFilters>) => setFilters((current) => ({ ...current, ...change }));
  const turnPage = (to: (string | undefined)[]) => {
    setPaging({ key: filtersKey, cursors: to });
    focus.pageTurned();
  };
  const page = cursors.length;
  const first = ((shown?.page ?? page) - 1) * queuePageSize + 1;
  return (
    <>
      <h1>Review queue</h1>
      <p className="lede">
        Writes the policy held for a person's decision. The list follows new writes and others' decisions as they happen. Work it from the keyboard: <kbd>j</kbd> and{' '}
        <kbd>k</kbd> move between reviews, <kbd>?</kbd> lists every key.
      </p>
      <QueueFilterForm filters={filters} choices={choices} onChange={changeFilters} />
      <FormError error={error} />
      {can('decideReviews') && (pending.length > 0 || batchSent) && (
        <BatchBar
          selected={selectedShown}
          shown={pending.length}
          describe={(id) => {
            const review = pending.find((candidate) => candidate.id === id);
            return review && `${review.operation} by ${agentInWords(review.submitted_by.api_key_label, review.submitted_by.api_key_label_verified)} (held ${when(review.created_at)})`;
          }}
          onSelectAll={(all) => setSelected(new Set(all ? pending.map((review) => review.id) : []))}
          onSent={() => setBatchSent(true)}
          onDecided={() => {
            setSelected(new Set());
            load();
          }}
        />
      )}
      {shown !== undefined && (
        <p role="status" className="queue-count">
          <strong>
            {shown.count.toLocaleString('en')} {countedWord(filters, shown.count)}
          </strong>
          {shown.reviews.length > 0 && shown.count > shown.reviews.length && (
            <span className="hint">
              {' '}
              · {first.toLocaleString('en')}–{(first + shown.reviews.length - 1).toLocaleString('en')} shown, newest first
            </span>
          )}
        </p>
      )}
      <section aria-label="Reviews" aria-busy={reviews === undefined} ref={list} className="queue">
        {reviews === undefined ? (
          <p role="status">Loading…</p>
        ) : reviews.length === 0 ? (
          <p className="card">{filters.status === 'pending' ? 'Nothing waits for a decision.' : 'No reviews match.'}</p>
        ) : (
          reviews.map((review) => (
            <ReviewCard
              key={review.id}
              review={review}
              writes={writes.count}
              onDecided={(decided) => {
                // A verdict (not an undo of one): say so, and go on to the next review.
                if (review.status === 'pending') {
                  announce(`${verdictWords[decided.status]}: ${decided.operation} by ${agentInWords(decided.submitted_by.api_key_label, decided.submitted_by.api_key_label_verified)}.`);
                  focus.decided(decided.id);
                }
                load();
              }}
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
      {shown !== undefined && (page > 1 || shown.nextCursor) && (
        <nav className="pager" aria-label="Pages of the queue">
          <button type="button" className="button secondary" disabled={page === 1} onClick={() => turnPage(cursors.slice(0, -1))}>
            Newer
          </button>
          <span className="hint">Page {page}</span>
          <button type="button" className="button secondary" disabled={!shown.nextCursor} onClick={() => turnPage([...cursors, shown.nextCursor ?? undefined])}>
            Older
          </button>
        </nav>
      )}
      <QueueKeyLegend enabled={keysOn} onEnabled={setKeysOn} helpOpen={helpOpen} onHelp={setHelpOpen} message={said} />
    </>
  );
}
