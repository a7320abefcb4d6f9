import { createHash } from 'node:crypto';
import { canonicalJson } from '../../kit/canonical-json';

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
}

/** SHA-256 (hex) of the payload's canonical JSON: keys sorted, so a client's key order does not matter. */
export function payloadDigest(payload: DecidedPayload): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
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
