import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import type { Queryable } from '../../db/database';
import { AppError } from '../kit/errors';
import { listPasskeys, lockCredential, markUsed, type PasskeyOwner, type RelyingParty } from './passkeys';

// A person's passkey signing a challenge made of what it commits to (an approval: the review, the payload's
// digest, the verdict and the time; see domain/gate/reviews/signing.ts), rather than a random one kept between
// asking and answering: the caller recomputes the challenge, the time bounds how long a signature is good for.

/** How old a signed statement may be when it arrives, and how far ahead of the server's clock its time may be. */
export const signedStatementWindow = { pastMs: 5 * 60 * 1000, futureMs: 60 * 1000 };

/** A WebAuthn assertion as Gatehouse keeps it, binary fields base64url, with the time its challenge committed to. */
export interface SignedAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  signed_at: string;
}

/** The passkeys a person may sign with, as an authentication ceremony's allowCredentials names them. */
export async function signingCredentials(db: Queryable, owner: PasskeyOwner): Promise<{ id: string; transports: string[] }[]> {
  return (await listPasskeys(db, owner)).map((passkey) => ({ id: passkey.credential_id, transports: passkey.transports }));
}

const failed = (why: string, cause?: unknown) => new AppError('passkey_failed', `The passkey's signature does not stand for this approval: ${why}`, undefined, { cause });

/**
 * Checks, in the caller's transaction, that `assertion` is the signer's own passkey (this person, this
 * organization) signing `expectedChallenge` at a recent `signed_at`, from this console's origin, with the person
 * verified; its counter moves on. Throws `passkey_failed` otherwise.
 */
export async function verifySignedAssertion(
  tx: Queryable,
  signer: PasskeyOwner,
  assertion: SignedAssertion,
  expectedChallenge: string,
  relyingParty: RelyingParty,
  now = Date.now(),
): Promise<void> {
  const stored = await lockCredential(tx, assertion.credential_id);
  if (!stored || stored.userId !== signer.userId || stored.orgId !== signer.orgId) throw failed('it is not one of your passkeys');
  const signedAt = Date.parse(assertion.signed_at);
  if (Number.isNaN(signedAt)) throw failed('signed_at is not a time');
  if (signedAt < now - signedStatementWindow.pastMs) throw failed('it was signed more than five minutes ago; sign again');
  if (signedAt > now + signedStatementWindow.futureMs) throw failed('its time is in the future');
  const verified = await verifyAuthenticationResponse({
    response: {
      id: assertion.credential_id,
      rawId: assertion.credential_id,
      type: 'public-key',
      clientExtensionResults: {},
      response: { authenticatorData: assertion.authenticator_data, clientDataJSON: assertion.client_data_json, signature: assertion.signature },
    },
    expectedChallenge,
    expectedOrigin: relyingParty.origin,
    expectedRPID: relyingParty.id,
    expectedType: 'webauthn.get',
    credential: stored.credential,
    requireUserVerification: true,
  }).catch((error: unknown) => {
    throw failed((error as Error).message, error);
  });
  if (!verified.verified) throw failed('the signature does not verify');
  await markUsed(tx, stored.id, verified.authenticationInfo.newCounter);
}
