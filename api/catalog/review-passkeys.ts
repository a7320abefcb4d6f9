import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { assertReviewsOfOrganization, batchLimit } from '../../domain/gate/reviews/batch';
import { approvalChallenge, batchChallenge, type Verdict } from '../../domain/gate/reviews/signing';
import { trustTermsInput } from '../../domain/gate/trust-windows';
import { editFieldsInput, itemVerdictsInput } from '../../domain/gate/changesets/schema';
import { pendingPayloadDigests, pendingVerdictPayload, type PasskeyCheck } from '../../domain/gate/reviews/verdicts';
import { reviewerRoles, type PersonActor } from '../../domain/identity/actors';
import { signingCredentials, verifySignedAssertion } from '../../domain/identity/passkey-assertions';
import { relyingPartyOf, type PasskeyOwner } from '../../domain/identity/passkeys';
import { text } from '../../domain/kit/fields';
import { defineOperation } from './operation';

// Approvals signed with a passkey: the challenge a person's authenticator signs (the review, the digest of the
// exact payload, the verdict and the time), and the verdict port that checks the signature against it. The
// challenge is made of what it commits to, so the check recomputes it and nothing is kept in between.

/**
 * The verdict port's check (`VerdictPorts.verifyPasskey`) for a console at `publicUrl`: the person's own passkey
 * signed this verdict's challenge. Wire it as `verifyPasskey: (tx, check) => verifyApprovalPasskey(tx, check, publicUrl)`,
 * so that an approval without a passkey runs none of it.
 */
export function verifyApprovalPasskey(tx: Queryable, check: PasskeyCheck, publicUrl: string): Promise<void> {
  return verifySignedAssertion(tx, { orgId: check.orgId, userId: check.userId }, check.assertion, check.challenge, relyingPartyOf(publicUrl));
}

/** What every challenge a person's passkey signs comes with: its time, the relying party and the person's passkeys. */
function signingFields() {
  return {
    signed_at: z.string().describe('The time the challenge commits to: send it back as passkey.signed_at, within five minutes'),
    rp_id: z.string().describe("The relying party's id: the console's host name"),
    allow_credentials: z
      .array(z.object({ id: z.string().describe('A credential id (base64url)'), transports: z.array(z.string()) }))
      .describe("The person's passkeys; empty: they must register one first"),
  };
}

/** The output of a challenge operation: the challenge (`statement`: what it is the SHA-256 of) and the fields every one has. */
export function signingChallengeSchema(statement: string) {
  return z.object({ challenge: z.string().describe(`The WebAuthn challenge (base64url): SHA-256 of ${statement}`), ...signingFields() });
}

/** A challenge made now (`challengeAt`: the challenge for a time) for the signed-in person, naming their passkeys. */
export async function signingChallengeFor(db: Queryable, signer: PasskeyOwner, publicUrl: string, challengeAt: (signedAt: string) => string) {
  const signedAt = new Date().toISOString();
  return { challenge: challengeAt(signedAt), signed_at: signedAt, rp_id: relyingPartyOf(publicUrl).id, allow_credentials: await signingCredentials(db, signer) };
}

const challengeSchema = z.object({
  challenge: z.string().describe("The WebAuthn challenge (base64url): SHA-256 of the approval statement, as the authenticator's client data carries it"),
  payload_digest: z.string().describe('SHA-256 (hex) of the exact payload the verdict decides'),
  ...signingFields(),
});

export type ApprovalChallenge = z.infer<typeof challengeSchema>;

/**
 * What a passkey signs to give `verdict` on a review whose payload digests to `digest`, now, naming no passkey:
 * the authenticator offers the person's own for this site (discoverable credentials).
 */
export function approvalChallengeOf(publicUrl: string, review: { id: string; digest: string; verdict: Verdict }, signedAt = new Date().toISOString()): ApprovalChallenge {
  return {
    challenge: approvalChallenge(review.id, review.digest, review.verdict, signedAt),
    signed_at: signedAt,
    payload_digest: review.digest,
    rp_id: relyingPartyOf(publicUrl).id,
    allow_credentials: [],
  };
}

/** The same, naming the signer's passkeys: for the signed-in person, whose passkeys are theirs to know. */
export async function approvalChallengeFor(db: Queryable, signer: PasskeyOwner, publicUrl: string, review: { id: string; digest: string; verdict: Verdict }): Promise<ApprovalChallenge> {
  return { ...approvalChallengeOf(publicUrl, review), allow_credentials: await signingCredentials(db, signer) };
}

export const reviewPasskeyChallengeOperation = defineOperation({
  kind: 'person_action',
  name: 'reviews.passkey_challenge',
  family: 'reviews',
  summary: "The challenge a person's passkey signs to decide a review",
  description:
    'For an organization that needs approvals signed: the WebAuthn challenge over the review, the digest of the payload it holds now (with the fields you change as you approve, `edit`), the verdict and the time, and your passkeys to sign it with. Changes nothing; the approval then carries the assertion as `passkey`.',
  method: 'POST',
  path: '/reviews/:id/passkey-challenge',
  input: z.strictObject({
    id: text({ max: 100 }).describe('The review id'),
    verdict: z.enum(['approved', 'denied']).describe('The verdict the passkey signs'),
    edit: editFieldsInput().optional().describe('The fields you change as you approve (edit, then approve): part of what is signed'),
    trust: trustTermsInput.optional().describe('The trust window you open as you approve: its terms are part of what is signed'),
    items: itemVerdictsInput.optional().describe("A divisible changeset's items you decide as you approve (rejected, with their reasons): part of what is signed"),
  }),
  output: challengeSchema,
  access: { person: { roles: reviewerRoles } },
  interfaces: ['console'],
  handler: async (input, { db, caller, publicUrl }) => {
    const person = caller.actor as PersonActor;
    const terms = input.verdict === 'approved' ? { edit: input.edit, trust: input.trust, items: input.items } : {};
    const pending = await pendingVerdictPayload(db, caller.organization.id, input.id, terms);
    return approvalChallengeFor(db, { orgId: caller.organization.id, userId: person.userId }, publicUrl, { id: input.id, digest: pending.digest, verdict: input.verdict });
  },
});

/** A review a batch's passkey assertion covers, with the digest of the payload it held. */
export const signedReviewSchema = z.object({
  review_id: text({ max: 100 }).describe('The review (rev_…)'),
  payload_digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 digest in lowercase hex')
    .describe('SHA-256 (hex) of the payload it holds, which the signature commits to'),
});

export const batchPasskeyChallengeOperation = defineOperation({
  kind: 'person_action',
  name: 'reviews.batch_passkey_challenge',
  family: 'reviews',
  summary: "The challenge one passkey assertion signs to decide several reviews",
  description: `For an organization that needs approvals signed: the WebAuthn challenge over one verdict on several pending reviews (at most ${batchLimit}), each with the digest of the payload it holds now, and the time; and your passkeys to sign it with. Reviews that are not pending are left out (a verdict on them is refused as it would be). Changes nothing; send the assertion with reviews.decide_batch as \`passkey\`, and \`reviews\` back as \`signed_reviews\`.`,
  method: 'POST',
  path: '/reviews/batch/passkey-challenge',
  input: z.strictObject({
    verdict: z.enum(['approved', 'denied']).describe('The verdict the passkey signs'),
    review_ids: z.array(text({ max: 100 })).min(1).max(batchLimit).describe('The reviews to decide (rev_…)'),
  }),
  output: signingChallengeSchema(
    '"gatehouse batch approval v1\\nverdict <verdict>\\nat <signed_at>" followed by a line "review <id> payload sha256:<digest>" per review, ordered by id',
  ).extend({
    reviews: z.array(signedReviewSchema).describe('The pending reviews the challenge covers, with their payload digests: send them back as signed_reviews'),
  }),
  access: { person: { roles: reviewerRoles } },
  interfaces: ['console'],
  handler: async (input, { db, caller, publicUrl }) => {
    const person = caller.actor as PersonActor;
    await assertReviewsOfOrganization(db, caller.organization.id, input.review_ids);
    const reviews = await pendingPayloadDigests(db, caller.organization.id, [...new Set(input.review_ids)]);
    const signer = { orgId: caller.organization.id, userId: person.userId };
    return { ...(await signingChallengeFor(db, signer, publicUrl, (signedAt) => batchChallenge(reviews, input.verdict, signedAt))), reviews };
  },
});
