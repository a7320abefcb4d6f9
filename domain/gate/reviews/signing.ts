import { createHash } from 'node:crypto';
import { canonicalJson } from '../../kit/canonical-json';
import type { ItemVerdict } from '../changesets/verdicts';
import type { Review } from './schema';

// What a verdict is bound to: the exact write a person saw. A decision link carries the digest of the payload it
// was sent for, and a passkey signs a challenge made of it; both refuse once the payload differs.

/** The version of a held write a person decides: the agent's input, the edit held over it, and the edit they send. */
export interface DecidedPayload {
  review_id: string;
  operation: string;
  /** The agent's input, as held. */
  input: Record<string, unknown>;
  /** The reviewer's edit held over it (its id and input), or null. */
  edit: { id: string; input: Record<string, unknown> } | null;
  /** The fields the deciding person changes as they approve (edit-then-approve), or null. */
  proposed_edit: Record<string, unknown> | null;
  /** The trust window the approval opens (its terms), when it opens one; absent otherwise, so older digests stand. */
  trust?: { minutes: number; max_uses: number; match: string[] };
  /** A divisible changeset's items the person decides one by one (rejected with a reason), by index; absent when none. */
  items?: ItemVerdict[];
}

/** SHA-256 (hex) of the payload's canonical JSON: keys sorted, so a client's key order does not matter. */
export function payloadDigest(payload: DecidedPayload): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/** The write a review holds: its operation, the agent's input, and the reviewer's edit held over it. */
export interface HeldPayload {
  id: string;
  operation: string;
  input: Record<string, unknown>;
  edit: { id: string; input: Record<string, unknown> } | null;
}

/** What a person decides beside the write itself as they approve: the fields they change, the window they open, the items they decide. */
export interface ApprovalTerms {
  edit?: Record<string, unknown>;
  trust?: DecidedPayload['trust'];
  items?: ItemVerdict[];
}

/**
 * The payload a person decides: the write the review holds, with the fields they change, the trust window they
 * open and the changeset items they decide as they approve (items by index, a reason without its surrounding
 * blanks, as they are recorded).
 */
export function decidedPayload(held: HeldPayload, { edit, trust, items }: ApprovalTerms = {}): DecidedPayload {
  const payload: DecidedPayload = { review_id: held.id, operation: held.operation, input: held.input, edit: held.edit, proposed_edit: edit ?? null };
  if (trust) payload.trust = { minutes: trust.minutes, max_uses: trust.max_uses, match: trust.match };
  if (items?.length) {
    payload.items = items
      .map((item) => (item.reason === undefined ? item : { ...item, reason: item.reason.trim() }))
      .sort((a, b) => a.index - b.index);
  }
  return payload;
}

/**
 * The digest of the write a review holds now, as a verdict on it computes it: what a decision link and a Slack
 * button are sent with, and refuse once it changes.
 */
export function heldPayloadDigest(review: Pick<Review, 'id' | 'operation' | 'proposed' | 'edit'>): string {
  const edit = review.edit ? { id: review.edit.id, input: review.edit.input } : null;
  return payloadDigest(decidedPayload({ id: review.id, operation: review.operation, input: review.proposed, edit }));
}

export type Verdict = 'approved' | 'denied';

/** The text a passkey's challenge is the SHA-256 of: the review, the payload digest, the verdict and the time. */
export function approvalStatement(reviewId: string, digest: string, verdict: Verdict, signedAt: string): string {
  return `gatehouse approval v1\nreview ${reviewId}\npayload sha256:${digest}\nverdict ${verdict}\nat ${signedAt}`;
}

/** The WebAuthn challenge (base64url, as the authenticator's client data carries it) for a verdict. */
export function approvalChallenge(reviewId: string, digest: string, verdict: Verdict, signedAt: string): string {
  return challengeOf(approvalStatement(reviewId, digest, verdict, signedAt));
}

/** The text a person's passkey signs to undo an applied write (a write or a changeset, by its workflow id) at once. */
export function undoStatement(write: string, signedAt: string): string {
  return `gatehouse undo v1\nwrite ${write}\nat ${signedAt}`;
}

/** The WebAuthn challenge for a person's undo. */
export function undoChallenge(write: string, signedAt: string): string {
  return challengeOf(undoStatement(write, signedAt));
}

/** A review of a batch and the digest of the payload it holds, as one passkey assertion commits to it. */
export interface SignedReview {
  review_id: string;
  payload_digest: string;
}

/** The reviews a batch statement lists: each once, ordered by id, so that the order they were picked in does not matter. */
export function batchReviews(reviews: SignedReview[]): SignedReview[] {
  const byId = new Map(reviews.map((review) => [review.review_id, review.payload_digest]));
  return [...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([review_id, payload_digest]) => ({ review_id, payload_digest }));
}

/**
 * The text one passkey assertion signs to give a verdict on several reviews at once: the verdict, the time, and
 * every review with the digest of the payload it holds (ordered by id).
 */
export function batchStatement(reviews: SignedReview[], verdict: Verdict, signedAt: string): string {
  const lines = batchReviews(reviews).map((review) => `review ${review.review_id} payload sha256:${review.payload_digest}`);
  return ['gatehouse batch approval v1', `verdict ${verdict}`, `at ${signedAt}`, ...lines].join('\n');
}

/** The WebAuthn challenge for a verdict on a batch of reviews. */
export function batchChallenge(reviews: SignedReview[], verdict: Verdict, signedAt: string): string {
  return challengeOf(batchStatement(reviews, verdict, signedAt));
}

/** SHA-256 (hex) of the reviews a batch assertion signed, as the audit trail names the batch and keeps its list. */
export function batchDigest(reviews: SignedReview[], verdict: Verdict): string {
  return createHash('sha256').update(canonicalJson({ verdict, reviews: batchReviews(reviews) })).digest('hex');
}

const challengeOf = (statement: string) => createHash('sha256').update(statement).digest('base64url');
