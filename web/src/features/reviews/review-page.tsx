import { useCallback, useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { FormError } from '../../lib/form-error';
import { useLatest, useLive } from '../../lib/use-live';
import { useDocumentTitle } from '../../lib/use-document-title';
import { reviewsApi, type Review } from './api';
import { ReviewCard } from './review-card';
import { useWritesCount } from './review-context';

/** One review: the page a held write's `web_url` opens. */
export function ReviewPage() {
  useDocumentTitle('Review');
  const { id = '' } = useParams();
  const [review, setReview] = useState<Review>();
  const [error, setError] = useState<unknown>();
  const latest = useLatest();
  const load = useCallback(
    (background = false) =>
      latest(
        reviewsApi.get(id, background),
        (found) => {
          setReview(found);
          setError(undefined);
        },
        setError,
      ),
    [id, latest],
  );
  useEffect(() => load(), [load]);
  const writes = useWritesCount();
  useLive(['reviews', 'calls'], (topic) => (topic === 'reviews' ? load(true) : writes.moved()));
  return (
    <>
      <p className="breadcrumbs">
        <Link to="/reviews">Review queue</Link>
      </p>
      <h1>Review</h1>
      <FormError error={error} />
      {review ? <ReviewCard review={review} onDecided={setReview} writes={writes.count} /> : !error && <p role="status">Loading…</p>}
    </>
  );
}
