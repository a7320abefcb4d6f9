import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../db/database';
import { digestToken } from './tokens';

// The random challenges a relying party hands out to register a passkey and to sign in with one: single use,
// five minutes, kept by their digest (a leaked table names none). An approval's challenge is not one of these: it
// is the digest of what the approval commits to (domain/gate/reviews/signing.ts).

export type ChallengePurpose = 'register' | 'sign_in';

export const challengeLifetimeMs = 5 * 60 * 1000;


/** A new challenge (base64url, 32 random bytes) for `purpose`; expired ones are swept as it is made. */
export async function issueChallenge(db: Queryable, purpose: ChallengePurpose, userId: string | null): Promise<string> {
  const challenge = randomBytes(32).toString('base64url');
  await db.query('DELETE FROM passkey_challenges WHERE expires_at <= now()');
  await db.query(
    `INSERT INTO passkey_challenges (digest, purpose, user_id, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4 / 1000.0))`,
    [digestToken(challenge), purpose, userId, challengeLifetimeMs],
  );
  return challenge;
}

/**
 * Takes a challenge back as a client returned it: true once, when it was issued for this purpose (and person)
 * and has not expired; it is gone afterwards whatever the answer.
 */
export async function consumeChallenge(db: Queryable, challenge: string, purpose: ChallengePurpose, userId: string | null): Promise<boolean> {
  const { rows } = await db.query('DELETE FROM passkey_challenges WHERE digest = $1 RETURNING purpose, user_id, expires_at > now() AS live', [digestToken(challenge)]);
  const row = rows[0];
  return Boolean(row && row.live && row.purpose === purpose && row.user_id === userId);
}
