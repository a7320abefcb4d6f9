import { api, queryString } from '../../lib/api';
import type { Body, Data, Item, Query } from '../../lib/api-types';

export type Review = Item<'reviews_list'>;
export type ReviewStatus = Review['status'];
/** A reviewer's edit of the held write, which is what runs once approved (proposed keeps the agent's version). */
export type ReviewEdit = NonNullable<Review['edit']>;
export type ReviewFilters = Omit<Query<'reviews_list'>, 'limit' | 'cursor'>;

/** Only a held create or update can be edited before it is approved. */
export const editable = (operation: string) => /\.(create|update)$/.test(operation);

const reviewPath = (id: string) => `/v1/reviews/${encodeURIComponent(id)}`;

export const reviewsApi = {
  list: (filters: ReviewFilters, background = false) => api.get<Data<'reviews_list'>>(`/v1/reviews?${queryString({ limit: 50, ...filters })}`, { background }),
  get: (id: string, background = false) => api.get<Data<'reviews_get'>>(reviewPath(id), { background }),
  /** An approval names the edit the person saw, if the review holds one: it counts for that version only. */
  decide: (review: Review, verdict: 'approve' | 'deny', comment: string) =>
    api.post<Data<'reviews_approve'>>(`${reviewPath(review.id)}/${verdict}`, {
      ...(comment.trim() ? { comment: comment.trim() } : {}),
      ...(verdict === 'approve' && review.edit ? { seen_edit: review.edit.id } : {}),
    } satisfies Body<'reviews_approve'>),
  /** Approves with the fields changed over the agent's input; the policy decides the edited write again. */
  approveWithEdit: (id: string, edit: Record<string, unknown>, comment: string) =>
    api.post<Data<'reviews_approve'>>(`${reviewPath(id)}/approve`, (comment.trim() ? { edit, comment: comment.trim() } : { edit }) satisfies Body<'reviews_approve'>),
};
