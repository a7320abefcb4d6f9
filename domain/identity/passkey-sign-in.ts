import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Database } from '../../db/database';
import { AppError } from '../kit/errors';
import { consumeChallenge, issueChallenge } from './passkey-challenges';
import { challengeOf, lockCredential, markUsed, type RelyingParty } from './passkeys';
import { startSession, type SessionRules } from './sessions';

// Signing in with a passkey: no organization, email or password typed. The browser offers the person's
// discoverable credentials for this console; the one they pick names them (its credential id, and the user
// handle it carries). The session is the one a password gives.

/** A sign-in ceremony's options: a fresh challenge, no credentials named (the authenticator offers its own). */
export async function signInOptions(db: Database, relyingParty: RelyingParty) {
  return generateAuthenticationOptions({
    rpID: relyingParty.id,
    userVerification: 'required',
    challenge: new Uint8Array(Buffer.from(await issueChallenge(db, 'sign_in', null), 'base64url')),
  });
}

const notSignedIn = () => new AppError('unauthorized', 'That passkey does not sign anyone in here; sign in with your password, or use another passkey');

/**
 * Checks a sign-in assertion (the challenge handed out here, once, within five minutes; a registered passkey
 * whose user handle it carries; the person verified) and starts a session. A deactivated person is refused as an
 * unknown passkey is. Failed password attempts never stand in its way: a passkey cannot be guessed, and a stranger
 * guessing at the password must not keep its owner out.
 */
export async function signInWithPasskey(
  db: Database,
  relyingParty: RelyingParty,
  input: { response: AuthenticationResponseJSON; userAgent?: string },
  policy: SessionRules,
) {
  const challenge = challengeOf(input.response.response.clientDataJSON);
  if (!challenge || !(await consumeChallenge(db, challenge, 'sign_in', null))) {
    throw new AppError('unauthorized', 'This sign-in was not started here, or took longer than five minutes; try again');
  }
  const person = await db.transaction(async (tx) => {
    const stored = await lockCredential(tx, input.response.id);
    if (!stored) throw notSignedIn();
    const { rows } = await tx.query('SELECT passkey_handle, deactivated_at FROM users WHERE id = $1', [stored.userId]);
    const user = rows[0] as { passkey_handle: string | null; deactivated_at: Date | null };
    const handle = input.response.response.userHandle;
    if (user.deactivated_at || (handle !== undefined && handle !== user.passkey_handle)) throw notSignedIn();
    const verified = await verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.id,
      expectedType: 'webauthn.get',
      credential: stored.credential,
      requireUserVerification: true,
    }).catch((error: unknown) => {
      throw new AppError('unauthorized', `That passkey's answer does not verify: ${(error as Error).message}`, undefined, { cause: error });
    });
    if (!verified.verified) throw notSignedIn();
    await markUsed(tx, stored.id, verified.authenticationInfo.newCounter);
    return { stored, credentialId: stored.credential.id };
  });
  return startSession(db, { userId: person.stored.userId, orgId: person.stored.orgId, userAgent: input.userAgent }, policy, {
    method: 'passkey',
    credential_id: person.credentialId,
  });
}
