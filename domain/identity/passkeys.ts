import { randomBytes } from 'node:crypto';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON, type WebAuthnCredential } from '@simplewebauthn/server';
import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { reviewerRoles } from './actors';
import { newId } from '../kit/ids';
import { consumeChallenge, issueChallenge } from './passkey-challenges';
import { spkiOfCoseKey } from './passkey-public-keys';

// A person's passkeys: registering one (WebAuthn), naming and removing them. Signing in with one is
// passkey-sign-in.ts; an approval signed with one, passkey-approvals.ts.

/** Where passkeys are made and used: the console's host name (the RP ID) and origin, from its public URL. */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, name: 'Gatehouse', origin: url.origin };
}

/** A passkey as its owner sees it (never the key itself). */
export interface Passkey {
  id: string;
  name: string;
  credential_id: string;
  transports: string[];
  backed_up: boolean;
  created_at: string;
  last_used_at: string | null;
}

/** The person a passkey belongs to, as the ceremonies need them. */
export interface PasskeyOwner {
  userId: string;
  orgId: string;
}

const passkeyColumns = 'id, name, credential_id, transports, backed_up, created_at, last_used_at';

function passkeyFromRow(row: Record<string, unknown>): Passkey {
  return {
    id: row.id as string,
    name: row.name as string,
    credential_id: row.credential_id as string,
    transports: row.transports as string[],
    backed_up: row.backed_up as boolean,
    created_at: (row.created_at as Date).toISOString(),
    last_used_at: row.last_used_at ? (row.last_used_at as Date).toISOString() : null,
  };
}

export async function listPasskeys(db: Queryable, owner: PasskeyOwner): Promise<Passkey[]> {
  const { rows } = await db.query(`SELECT ${passkeyColumns} FROM passkeys WHERE user_id = $1 AND org_id = $2 ORDER BY created_at, id`, [owner.userId, owner.orgId]);
  return rows.map(passkeyFromRow);
}

/** The person's opaque WebAuthn user handle (random, made on their first registration). */
async function userHandle(db: Queryable, userId: string): Promise<Buffer> {
  const { rows } = await db.query(
    `UPDATE users SET passkey_handle = COALESCE(passkey_handle, $2) WHERE id = $1 RETURNING passkey_handle`,
    [userId, randomBytes(32).toString('base64url')],
  );
  return Buffer.from(rows[0].passkey_handle as string, 'base64url');
}

/**
 * What the browser needs to make a passkey for this person: a fresh challenge, this relying party, their handle,
 * and their passkeys already made (so one authenticator does not register twice). User verification required.
 */
export async function registrationOptions(db: Database, owner: PasskeyOwner, relyingParty: RelyingParty) {
  const { rows } = await db.query('SELECT u.email, u.name, o.name AS org_name FROM users u JOIN organizations o ON o.id = u.org_id WHERE u.id = $1 AND u.org_id = $2', [
    owner.userId,
    owner.orgId,
  ]);
  const person = rows[0] as { email: string; name: string | null; org_name: string };
  const existing = await listPasskeys(db, owner);
  return generateRegistrationOptions({
    rpName: relyingParty.name,
    rpID: relyingParty.id,
    userID: new Uint8Array(await userHandle(db, owner.userId)),
    userName: person.email,
    userDisplayName: `${person.name ?? person.email} (${person.org_name})`,
    challenge: new Uint8Array(Buffer.from(await issueChallenge(db, 'register', owner.userId), 'base64url')),
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credential_id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  });
}

/** The challenge a WebAuthn response's client data carries (base64url), or undefined when it does not parse. */
export function challengeOf(clientDataJson: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(clientDataJson, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Registers the passkey the browser made: the challenge must be one this person was handed (once, within five
 * minutes), the origin and RP ID this console's, the person verified. Recorded with its public key in the audit
 * ledger (SubjectPublicKeyInfo), where an offline verifier finds it.
 */
export async function registerPasskey(
  db: Database,
  owner: PasskeyOwner,
  relyingParty: RelyingParty,
  input: { name?: string; response: RegistrationResponseJSON },
): Promise<Passkey> {
  const challenge = challengeOf(input.response.response.clientDataJSON);
  if (!challenge || !(await consumeChallenge(db, challenge, 'register', owner.userId))) {
    throw new AppError('passkey_failed', 'This registration was not started here, or took longer than five minutes; start again');
  }
  const verified = await verifyRegistrationResponse({
    response: input.response,
    expectedChallenge: challenge,
    expectedOrigin: relyingParty.origin,
    expectedRPID: relyingParty.id,
    requireUserVerification: true,
  }).catch((error: unknown) => {
    throw new AppError('passkey_failed', `The passkey could not be registered: ${(error as Error).message}`, undefined, { cause: error });
  });
  if (!verified.verified) throw new AppError('passkey_failed', 'The passkey could not be registered: its response does not verify');
  const { credential, aaguid, credentialBackedUp } = verified.registrationInfo;
  const publicKey = spkiOfCoseKey(credential.publicKey);
  return db.transaction(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM passkeys WHERE credential_id = $1', [credential.id]);
    if (taken.rowCount) throw new AppError('conflict', 'This passkey is registered already');
    const count = (await tx.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [owner.userId])).rows[0].n as number;
    const name = input.name?.trim() || `Passkey ${count + 1}`;
    const { rows } = await tx.query(
      `INSERT INTO passkeys (id, org_id, user_id, credential_id, public_key, counter, transports, name, aaguid, backed_up)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${passkeyColumns}`,
      [newId('pky'), owner.orgId, owner.userId, credential.id, Buffer.from(credential.publicKey), credential.counter, credential.transports ?? [], name, aaguid, credentialBackedUp],
    );
    await recordAudit(tx, owner.orgId, {
      type: 'person.passkey_added',
      actor: { type: 'user', id: owner.userId },
      resourceId: owner.userId,
      data: { credential_id: credential.id, public_key_spki: publicKey.spki, algorithm: publicKey.algorithm, rp_id: relyingParty.id, name },
    });
    return passkeyFromRow(rows[0]);
  });
}

export async function renamePasskey(db: Database, owner: PasskeyOwner, id: string, name: string): Promise<Passkey> {
  const { rows } = await db.query(`UPDATE passkeys SET name = $4 WHERE id = $1 AND user_id = $2 AND org_id = $3 RETURNING ${passkeyColumns}`, [
    id,
    owner.userId,
    owner.orgId,
    name.trim(),
  ]);
  if (!rows[0]) throw new AppError('not_found', `You have no passkey ${id}`);
  return passkeyFromRow(rows[0]);
}

/** Removes one of the person's passkeys; it signs nothing from now on (what it signed stays verifiable in the ledger). */
export async function removePasskey(db: Database, owner: PasskeyOwner, id: string, by: ActorRef = { type: 'user', id: owner.userId }): Promise<void> {
  await db.transaction(async (tx) => {
    const { rows } = await tx.query('DELETE FROM passkeys WHERE id = $1 AND user_id = $2 AND org_id = $3 RETURNING credential_id, name', [id, owner.userId, owner.orgId]);
    if (!rows[0]) throw new AppError('not_found', `You have no passkey ${id}`);
    await recordAudit(tx, owner.orgId, {
      type: 'person.passkey_removed',
      actor: by,
      resourceId: owner.userId,
      data: { credential_id: rows[0].credential_id, name: rows[0].name },
    });
  });
}

/** A registered passkey as WebAuthn's verification takes it, with whom it belongs to. */
export interface StoredCredential extends PasskeyOwner {
  id: string;
  credential: WebAuthnCredential;
}

/** The passkey with this credential id, locked for its counter to move on; undefined when none is registered. */
export async function lockCredential(tx: Queryable, credentialId: string): Promise<StoredCredential | undefined> {
  const { rows } = await tx.query('SELECT id, org_id, user_id, public_key, counter, transports FROM passkeys WHERE credential_id = $1 FOR UPDATE', [credentialId]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    credential: { id: credentialId, publicKey: new Uint8Array(row.public_key as Buffer), counter: Number(row.counter), transports: row.transports },
  };
}

/** After an assertion verified: its signature counter, and when the passkey was last used. */
export async function markUsed(tx: Queryable, passkeyId: string, counter: number): Promise<void> {
  await tx.query('UPDATE passkeys SET counter = $2, last_used_at = now() WHERE id = $1', [passkeyId, counter]);
}

/**
 * Approvals that need a passkey need someone able to give one: an organization turns it on only once an active
 * person who decides reviews has registered a passkey, or every held write would wait for nobody.
 */
export async function assertSomeoneCanSignApprovals(db: Queryable, orgId: string): Promise<void> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM passkeys p JOIN users u ON u.id = p.user_id
     WHERE p.org_id = $1 AND u.deactivated_at IS NULL AND u.role = ANY($2) LIMIT 1`,
    [orgId, reviewerRoles],
  );
  if (!rowCount) {
    throw new AppError('conflict', 'Nobody who decides reviews has a passkey yet, so no approval could be given: register one in Settings → Passkeys first');
  }
}
