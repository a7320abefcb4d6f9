import type { Database, Queryable } from '../../../db/database';
import { AppError, asRefusal, invalidFields, type ErrorCode } from '../../kit/errors';
import { getReview } from './reads';
import type { Review } from './schema';
import { batchChallenge, batchDigest, batchReviews, type SignedReview } from './signing';
import { recordVerdict, type PasskeyAssertion, type PersonsVerdict, type VerdictPorts } from './verdicts';

// Deciding several held writes in one action: each is its own verdict (its own transaction, checks and audit
// event), given one after another, so one refused never holds back the rest.

/** The most writes one batch decides: a page of the queue and then some, and a bounded wait for their workflows. */
export const batchLimit = 100;

export interface BatchVerdict extends Omit<PersonsVerdict, 'reviewId' | 'edit' | 'seenEditId' | 'expectedDigest' | 'passkey' | 'signedBatch' | 'trust' | 'items'> {
  /** The reviews the person selected, each decided once (repeats are dropped), in the order given. */
  reviewIds: string[];
  /**
   * One passkey assertion over the whole batch: it signed `batchChallenge(signed, verdict, signed_at)`, the
   * verdict on every review listed with the digest of the payload it held then.
   */
  passkey?: { assertion: PasskeyAssertion; signed: SignedReview[] };
}

export interface BatchOutcome {
  /** The reviews the verdict was recorded on, as they stand after it (approved, denied, or pending a quorum). */
  decided: Review[];
  /** The reviews it was refused for, each with the refusal a single verdict would have had. */
  refused: { id: string; code: ErrorCode; message: string }[];
}

/**
 * A person's verdict on several held writes. Every rule of a single verdict applies to each (roles, self-approval,
 * quorum, the edit they saw, passkeys, expiry), because each goes through recordVerdict: a write that cannot be
 * decided is listed with why, and the others are decided. The held writes' workflows are told as each verdict
 * commits, and waited for together, so that approved writes answer with their results.
 */
export async function recordBatchVerdict(db: Database, given: BatchVerdict, ports: VerdictPorts): Promise<BatchOutcome> {
  const ids = [...new Set(given.reviewIds)];
  if (ids.length > batchLimit) throw new AppError('validation_failed', `a batch decides at most ${batchLimit} reviews; ${ids.length} were named`);
  await assertReviewsOfOrganization(db, given.orgId, given.reviewIds);
  const signed = given.passkey ? await verifyBatchSignature(db, given, given.passkey, ports) : undefined;
  const told: Promise<unknown>[] = [];
  const tellWorkflow: VerdictPorts['reviewEnded'] = (workflowId, verdict) => {
    told.push(ports.reviewEnded(workflowId, verdict).catch(() => undefined));
    return Promise.resolve();
  };
  const decidedIds: string[] = [];
  const refused: BatchOutcome['refused'] = [];
  for (const reviewId of ids) {
    const { reviewIds: _selected, passkey: _signature, ...verdict } = given;
    // A review the signature covers is decided only as the payload it signed (payload_changed otherwise).
    const signedDigest = signed?.digests.get(reviewId);
    const signature: Partial<PersonsVerdict> =
      signed && signedDigest ? { passkey: given.passkey!.assertion, expectedDigest: signedDigest, signedBatch: { digest: signed.digest } } : {};
    try {
      // An approval counts for the agent's version: a write a reviewer edited is approved on its own card, where
      // the person sees the edit (recordVerdict refuses it here with conflict).
      await recordVerdict(db, { ...verdict, ...signature, reviewId }, { ...ports, reviewEnded: tellWorkflow });
      decidedIds.push(reviewId);
    } catch (error) {
      const refusal = asRefusal(error);
      if (!refusal) throw error;
      refused.push({ id: reviewId, code: refusal.code, message: refusal.message });
    }
  }
  await Promise.all(told);
  const decided = await reviewsById(db, given.orgId, decidedIds);
  return { decided, refused };
}

/**
 * Checks, once, that the person's own passkey signed this verdict on the listed reviews and their digests (a
 * batch's reviews must be among those named), and keeps the list it signed by its digest, for the audit export to
 * carry beside each verdict. Throws passkey_failed, and nothing is decided, when it does not verify.
 */
async function verifyBatchSignature(
  db: Database,
  given: BatchVerdict,
  passkey: NonNullable<BatchVerdict['passkey']>,
  ports: VerdictPorts,
): Promise<{ digest: string; digests: Map<string, string> }> {
  assertSignedAmongNamed(given.reviewIds, passkey.signed);
  if (!ports.verifyPasskey) throw new AppError('passkey_failed', 'a passkey cannot be checked here');
  const verifyPasskey = ports.verifyPasskey;
  const reviews = batchReviews(passkey.signed);
  const digest = batchDigest(reviews, given.verdict);
  await db.transaction(async (tx) => {
    const challenge = batchChallenge(reviews, given.verdict, passkey.assertion.signed_at);
    await verifyPasskey(tx, { orgId: given.orgId, userId: given.person.userId, challenge, assertion: passkey.assertion });
    await tx.query('INSERT INTO signed_payloads (digest, org_id, payload) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      digest,
      given.orgId,
      { verdict: given.verdict, reviews },
    ]);
  });
  return { digest, digests: new Map(reviews.map((review) => [review.review_id, review.payload_digest])) };
}

/** The reviews a batch's signature lists are among those it decides: else bad input, naming each stray. */
export function assertSignedAmongNamed(reviewIds: string[], signed: SignedReview[]): void {
  const named = new Set(reviewIds);
  const strays = signed.flatMap((review, index) =>
    named.has(review.review_id) ? [] : [{ field: `signed_reviews.${index}.review_id`, message: `review ${review.review_id} is not among review_ids` }],
  );
  if (strays.length) throw invalidFields(strays);
}

/** A batch names reviews of the organization, or it is bad input: nothing is decided, and the strays are named. */
export async function assertReviewsOfOrganization(db: Queryable, orgId: string, reviewIds: string[]): Promise<void> {
  const { rows } = await db.query('SELECT id FROM reviews WHERE org_id = $1 AND id = ANY($2::text[])', [orgId, reviewIds]);
  const known = new Set(rows.map((row) => row.id as string));
  const strays = reviewIds.flatMap((id, index) => (known.has(id) ? [] : [{ field: `review_ids.${index}`, message: `no review ${id} in this organization` }]));
  if (strays.length) throw invalidFields(strays);
}

async function reviewsById(db: Queryable, orgId: string, ids: string[]): Promise<Review[]> {
  const reviews: Review[] = [];
  for (const id of ids) reviews.push(await getReview(db, orgId, id));
  return reviews;
}
