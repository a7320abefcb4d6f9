import { api, ApiError, queryString } from '../../lib/api';
import { signVerdict } from '../../lib/passkeys';
import type { Body, Data, Item, Query } from '../../lib/api-types';

export type Review = Item<'reviews_list'>;
export type ReviewStatus = Review['status'];
/** A reviewer's edit of the held write, which is what runs once approved (proposed keeps the agent's version). */
export type ReviewEdit = NonNullable<Review['edit']>;
/** What surrounds a held write: its record's changes since the hold, the agent's notes about it, where it came from. */
export type ReviewContext = Data<'reviews_context'>;
export type ReviewFilters = Omit<Query<'reviews_list'>, 'limit' | 'cursor'>;

/** How many reviews one page of the queue shows. */
export const queuePageSize = 50;

/** Only a held create or update can be edited before it is approved. */
export const editable = (operation: string) => /\.(create|update)$/.test(operation);

const reviewPath = (id: string) => `/v1/reviews/${encodeURIComponent(id)}`;

/** A passkey's assertion over an approval, as the approve call carries it. */
export type PasskeyAssertion = NonNullable<Body<'reviews_approve'>['passkey']>;

/**
 * The person's passkey's signature over approving this review (with their edit, if any): the challenge commits to
 * the review, the payload's digest, the verdict and the time, and the authenticator signs it.
 */
async function signApproval(id: string, { edit, trust, items }: Pick<Body<'reviews_approve'>, 'edit' | 'trust' | 'items'>): Promise<PasskeyAssertion> {
  const asked = await api.post<Data<'reviews_passkey_challenge'>>(`${reviewPath(id)}/passkey-challenge`, {
    verdict: 'approved',
    ...(edit ? { edit } : {}),
    ...(trust ? { trust } : {}),
    ...(items ? { items } : {}),
  } satisfies Body<'reviews_passkey_challenge'>);
  return signVerdict(asked);
}

/**
 * One verdict on several reviews, signed first when the organization needs approvals signed (`signed`): one
 * passkey assertion covers every pending review selected, each with the digest of the payload it holds.
 */
async function decideBatch(ids: string[], verdict: 'approved' | 'denied', comment: string, signed: boolean): Promise<Data<'reviews_decide_batch'>> {
  const body: Body<'reviews_decide_batch'> = { review_ids: ids, verdict, ...(comment.trim() ? { comment: comment.trim() } : {}) };
  const send = (extra = {}) => api.post<Data<'reviews_decide_batch'>>('/v1/reviews/batch', { ...body, ...extra } satisfies Body<'reviews_decide_batch'>);
  const sign = async () => {
    const asked = await api.post<Data<'reviews_batch_passkey_challenge'>>('/v1/reviews/batch/passkey-challenge', {
      review_ids: ids,
      verdict,
    } satisfies Body<'reviews_batch_passkey_challenge'>);
    return send({ passkey: await signVerdict(asked), signed_reviews: asked.reviews });
  };
  if (signed && verdict === 'approved') return sign();
  return send();
}

/**
 * An approval, signed first when the organization needs it (`signed`); one sent unsigned that the service
 * refuses with passkey_required (the setting changed since the page loaded) is signed and sent again.
 */
async function approve(id: string, body: Body<'reviews_approve'>, signed: boolean): Promise<Data<'reviews_approve'>> {
  const send = (passkey?: PasskeyAssertion) => api.post<Data<'reviews_approve'>>(`${reviewPath(id)}/approve`, passkey ? { ...body, passkey } : body);
  if (signed) return send(await signApproval(id, body));
  try {
    return await send();
  } catch (failure) {
    if (failure instanceof ApiError && failure.code === 'passkey_required') return send(await signApproval(id, body));
    throw failure;
  }
}

/** A divisible changeset's items the reviewer rejects (by index), with their reasons, as an approval carries them. */
const rejectedItems = (rejected: Record<number, string>) =>
  Object.entries(rejected).map(([index, reason]) => ({ index: Number(index), verdict: 'rejected' as const, reason: reason.trim() }));

export const reviewsApi = {
  list: (filters: ReviewFilters, background = false) => api.get<Data<'reviews_list'>>(`/v1/reviews?${queryString({ limit: 50, ...filters })}`, { background }),
  /** One page of the queue (`cursor`: where the one before ended) with the cursor of the next. */
  page: (filters: ReviewFilters, cursor: string | undefined, background = false) =>
    api.page<Review>(`/v1/reviews?${queryString({ limit: queuePageSize, ...filters, cursor })}`, { background }),
  /** The exact number of reviews that pass the filters. */
  count: async (filters: ReviewFilters, background = false) =>
    (await api.get<Data<'reviews_count'>>(`/v1/reviews/count?${queryString({ ...filters })}`, { background })).count,
  /** Every key and operation with a review, to filter by. */
  filterChoices: (background = false) => api.get<Data<'reviews_filter_choices'>>('/v1/reviews/filter-choices', { background }),
  get: (id: string, background = false) => api.get<Data<'reviews_get'>>(reviewPath(id), { background }),
  context: (id: string, background = false) => api.get<ReviewContext>(`${reviewPath(id)}/context`, { background }),
  /** An approval names the edit the person saw, if the review holds one: it counts for that version only. */
  /** `signed`: the organization needs approvals signed with the person's passkey. */
  /** `trust`: a trust window the approval also opens. `rejected`: for a divisible changeset, the items rejected (by index) with their reasons. */
  decide: (
    review: Review,
    verdict: 'approve' | 'deny',
    comment: string,
    signed = false,
    { trust, rejected = {} }: { trust?: Body<'reviews_approve'>['trust']; rejected?: Record<number, string> } = {},
  ) => {
    const remark = comment.trim() ? { comment: comment.trim() } : {};
    if (verdict === 'deny') return api.post<Data<'reviews_deny'>>(`${reviewPath(review.id)}/deny`, remark satisfies Body<'reviews_deny'>);
    const items = rejectedItems(rejected);
    return approve(review.id, { ...remark, ...(review.edit ? { seen_edit: review.edit.id } : {}), ...(trust ? { trust } : {}), ...(items.length ? { items } : {}) }, signed);
  },
  /**
   * Approves a held changeset with one item's fields changed over the agent's (`edit`), and the items rejected: the
   * policy decides the changeset as edited again. The edited item goes first, so a problem is named `items.0.edit.…`.
   */
  approveWithItemEdit: (review: Review, { index, edit }: { index: number; edit: Record<string, unknown> }, comment: string, signed = false, rejected: Record<number, string> = {}) =>
    approve(
      review.id,
      {
        ...(comment.trim() ? { comment: comment.trim() } : {}),
        ...(review.edit ? { seen_edit: review.edit.id } : {}),
        items: [{ index, verdict: 'approved', edit }, ...rejectedItems(rejected)],
      },
      signed,
    ),
  /** One verdict on several held writes; each is decided on its own, and the answer says which were refused and why. */
  decideBatch,
  /** Approves with the fields changed over the agent's input; the policy decides the edited write again. */
  approveWithEdit: (id: string, edit: Record<string, unknown>, comment: string, signed = false) =>
    approve(id, { edit, ...(comment.trim() ? { comment: comment.trim() } : {}) }, signed),
};
