import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/database';

// What the OAuth authorization server keeps between requests, in PostgreSQL (the `oauth_records` table): every
// api host reads the same interactions, grants, codes and tokens. The server (oidc-provider, api/oauth) names
// each record by a kind and an id; for codes and tokens the id is the very secret a client holds, so a record is
// found by the digest of its id and stored without it.

/** The digest a record is found by: SHA-256 of its id, base64url. */
export function oauthRecordDigest(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** A record as the authorization server hands it over and takes it back. */
export type OAuthPayload = Record<string, unknown> & {
  jti?: string;
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: unknown;
};

/** The records of one kind (`AccessToken`, `Grant`, `Interaction`, `Client`, …). */
export interface OAuthRecords {
  upsert(id: string, payload: OAuthPayload, expiresInSeconds: number | undefined): Promise<void>;
  find(id: string): Promise<OAuthPayload | undefined>;
  findByUid(uid: string): Promise<OAuthPayload | undefined>;
  findByUserCode(userCode: string): Promise<OAuthPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** The kinds whose id is a secret a client holds (a code, a token): stored without it. */
const secretKinds = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'PushedAuthorizationRequest',
]);

/** How often a process deletes records past their end (they are never found again: this is housekeeping). */
const sweepEveryMs = 10 * 60_000;
let lastSweep = 0;

export function oauthRecords(db: Queryable, kind: string): OAuthRecords {
  const live = `(expires_at IS NULL OR expires_at > now())`;
  const secret = secretKinds.has(kind);
  // The payload as stored: a code's or token's without its id (put back on reading), and marked consumed when it is.
  const withId = (row: { payload: OAuthPayload; consumed_at: Date | null } | undefined, id: string | undefined) => {
    if (!row) return undefined;
    const payload: OAuthPayload = { ...row.payload };
    if (secret && id !== undefined) payload.jti = id;
    if (row.consumed_at) payload.consumed = Math.floor(row.consumed_at.getTime() / 1000);
    return payload;
  };
  const sweep = () => {
    if (Date.now() - lastSweep < sweepEveryMs) return;
    lastSweep = Date.now();
    db.query(`DELETE FROM oauth_records WHERE expires_at < now() - interval '1 hour'`).catch(() => {
      lastSweep = 0;
    });
  };

  return {
    async upsert(id, payload, expiresInSeconds) {
      const { consumed: _consumed, ...kept } = payload;
      const { jti: _jti, ...withoutId } = kept;
      const stored = secret ? withoutId : kept;
      await db.query(
        `INSERT INTO oauth_records (kind, id_digest, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END)
         ON CONFLICT (kind, id_digest) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
           user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
        [kind, oauthRecordDigest(id), JSON.stringify(stored), payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresInSeconds ?? null],
      );
      sweep();
    },
    async find(id) {
      const { rows } = await db.query(`SELECT payload, consumed_at FROM oauth_records WHERE kind = $1 AND id_digest = $2 AND ${live}`, [kind, oauthRecordDigest(id)]);
      return withId(rows[0], id);
    },
    async findByUid(uid) {
      const { rows } = await db.query(`SELECT payload, consumed_at FROM oauth_records WHERE kind = $1 AND uid = $2 AND ${live}`, [kind, uid]);
      return withId(rows[0], undefined);
    },
    async findByUserCode(userCode) {
      const { rows } = await db.query(`SELECT payload, consumed_at FROM oauth_records WHERE kind = $1 AND user_code = $2 AND ${live}`, [kind, userCode]);
      return withId(rows[0], undefined);
    },
    async consume(id) {
      await db.query(`UPDATE oauth_records SET consumed_at = now() WHERE kind = $1 AND id_digest = $2 AND consumed_at IS NULL`, [kind, oauthRecordDigest(id)]);
    },
    async destroy(id) {
      await db.query(`DELETE FROM oauth_records WHERE kind = $1 AND id_digest = $2`, [kind, oauthRecordDigest(id)]);
    },
    async revokeByGrantId(grantId) {
      await db.query(`DELETE FROM oauth_records WHERE grant_id = $1`, [grantId]);
    },
  };
}

/** Ends every record of a grant (its codes, access and refresh tokens) and the grant itself: a disconnection. */
export async function endGrant(db: Queryable, grantId: string): Promise<void> {
  await db.query(`DELETE FROM oauth_records WHERE grant_id = $1 OR (kind = 'Grant' AND id_digest = $2)`, [grantId, oauthRecordDigest(grantId)]);
}

/**
 * One of the authorization server's own secrets (its cookie keys, its signing keys): made by `make` the first time
 * any api asks, and the same for every api after (the first insert wins).
 */
export async function oauthSecret<T>(db: Queryable, name: string, make: () => T): Promise<T> {
  await db.query(`INSERT INTO oauth_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, JSON.stringify(make())]);
  const { rows } = await db.query(`SELECT value FROM oauth_secrets WHERE name = $1`, [name]);
  return rows[0].value as T;
}
