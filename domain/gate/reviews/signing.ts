import { createHash } from 'node:crypto';
import { canonicalJson } from '../../kit/canonical-json';
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

/** The payload a person decides: the write the review holds, with the fields they change and the trust window they open as they approve. */
export function decidedPayload(held: HeldPayload, proposedEdit?: Record<string, unknown>, trust?: DecidedPayload['trust']): DecidedPayload {
  const payload: DecidedPayload = { review_id: held.id, operation: held.operation, input: held.input, edit: held.edit, proposed_edit: proposedEdit ?? null };
  return trust ? { ...payload, trust: { minutes: trust.minutes, max_uses: trust.max_uses, match: trust.match } } : payload;
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
  return createHash('sha256').update(approvalStatement(reviewId, digest, verdict, signedAt)).digest('base64url');
}
