import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { approvalChallenge, type Verdict } from '../../domain/gate/reviews/signing';
import { trustTermsInput } from '../../domain/gate/trust-windows';
import { pendingVerdictPayload, type PasskeyCheck } from '../../domain/gate/reviews/verdicts';
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
 * signed this verdict. Wire it as `verifyPasskey: (tx, check) => verifyApprovalPasskey(tx, check, publicUrl)`, so
 * that an approval without a passkey runs none of it.
 */
export function verifyApprovalPasskey(tx: Queryable, check: PasskeyCheck, publicUrl: string): Promise<void> {
  return verifySignedAssertion(
    tx,
    { orgId: check.orgId, userId: check.userId },
    check.assertion,
    approvalChallenge(check.reviewId, check.payloadDigest, check.verdict, check.assertion.signed_at),
    relyingPartyOf(publicUrl),
  );
}

const challengeSchema = z.object({
  challenge: z.string().describe("The WebAuthn challenge (base64url): SHA-256 of the approval statement, as the authenticator's client data carries it"),
  signed_at: z.string().describe('The time the challenge commits to: send it back as passkey.signed_at, within five minutes'),
  payload_digest: z.string().describe('SHA-256 (hex) of the exact payload the verdict decides'),
  rp_id: z.string().describe("The relying party's id: the console's host name"),
  allow_credentials: z
    .array(z.object({ id: z.string().describe('A credential id (base64url)'), transports: z.array(z.string()) }))
    .describe("The person's passkeys; empty: they must register one first"),
});

export type ApprovalChallenge = z.infer<typeof challengeSchema>;

/**
 * What a passkey signs to give `verdict` on a review whose payload digests to `digest`, now, naming no passkey:
 * the authenticator offers the person's own for this site (discoverable credentials).
 */
export function approvalChallengeOf(publicUrl: string, review: { id: string; digest: string; verdict: Verdict }): ApprovalChallenge {
  const signedAt = new Date().toISOString();
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
    edit: z.record(z.string(), z.unknown()).optional().describe('The fields you change as you approve (edit, then approve): part of what is signed'),
    trust: trustTermsInput.optional().describe('The trust window you open as you approve: its terms are part of what is signed'),
  }),
  output: challengeSchema,
  access: { person: { roles: reviewerRoles } },
  interfaces: ['console'],
  handler: async (input, { db, caller, publicUrl }) => {
    const person = caller.actor as PersonActor;
    const pending = await pendingVerdictPayload(db, caller.organization.id, input.id, input.verdict === 'approved' ? input.edit : undefined, input.verdict === 'approved' ? input.trust : undefined);
    return approvalChallengeFor(db, { orgId: caller.organization.id, userId: person.userId }, publicUrl, { id: input.id, digest: pending.digest, verdict: input.verdict });
  },
});
