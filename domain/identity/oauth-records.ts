import { createHash } from 'node:crypto';
import { housekeeping } from '../kit/housekeeping';
import type { Queryable } from '../../db/database';
import { openJson, placeOf, sealJson, type SealedColumn } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';

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
  /** Refuses (UnstorableRecord) a payload that holds what PostgreSQL cannot keep in jsonb (a NUL, a lone surrogate). */
  upsert(id: string, payload: OAuthPayload, expiresInSeconds: number | undefined): Promise<void>;
  find(id: string): Promise<OAuthPayload | undefined>;
  findByUid(uid: string): Promise<OAuthPayload | undefined>;
  findByUserCode(userCode: string): Promise<OAuthPayload | undefined>;
  /**
   * Marks a code or refresh token used, once: of two requests that use it at the same moment, one gets
   * `{ consumed: true }` and the other `{ consumed: false }` with the record's grant (a replay).
   */
  consume(id: string): Promise<{ consumed: true } | { consumed: false; grantId: string | null }>;
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

/** A NUL, or a surrogate escape not part of a pair, as JSON.stringify writes them. */
const unstorable = /\\u0000|\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i;

/** A record holds characters that cannot be stored: the request that made it is refused. */
export class UnstorableRecord extends Error {
  constructor() {
    super('The request holds characters that cannot be stored (a NUL, or half of a surrogate pair)');
  }
}

/** How often a process deletes records past their end (they are never found again: this is housekeeping). */
const sweepEveryMs = 10 * 60_000;
// Records past their end; and clients that registered themselves a day ago or more and hold no live connection
// (open registration must not grow the table for good). A metadata document's client is not stored here.
const expired = `DELETE FROM oauth_records WHERE expires_at < now() - interval '1 hour'`;
const unused = `DELETE FROM oauth_records r WHERE r.kind = 'Client'
  AND to_timestamp((r.payload->>'client_id_issued_at')::bigint) < now() - interval '1 day'
  AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.oauth_client_id = r.payload->>'client_id' AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))`;
let sweepDb: Queryable | undefined;
const sweeps = housekeeping(sweepEveryMs, async () => sweepDb && Promise.all([sweepDb.query(expired), sweepDb.query(unused)]));

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
    sweepDb = db;
    sweeps.poke();
  };

  return {
    async upsert(id, payload, expiresInSeconds) {
      const { consumed: _consumed, ...kept } = payload;
      const { jti: _jti, ...withoutId } = kept;
      const stored = secret ? withoutId : kept;
      const text = JSON.stringify(stored);
      // What a client sent (a state, a client name) is kept as it came; jsonb cannot hold a NUL or a lone surrogate.
      if (unstorable.test(text)) throw new UnstorableRecord();
      await db.query(
        `INSERT INTO oauth_records (kind, id_digest, payload, grant_id, uid, user_code, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END)
         ON CONFLICT (kind, id_digest) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
           user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`,
        [kind, oauthRecordDigest(id), text, payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiresInSeconds ?? null],
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
      const digest = oauthRecordDigest(id);
      const { rowCount } = await db.query(`UPDATE oauth_records SET consumed_at = now() WHERE kind = $1 AND id_digest = $2 AND consumed_at IS NULL`, [kind, digest]);
      if (rowCount === 1) return { consumed: true };
      const { rows } = await db.query(`SELECT grant_id FROM oauth_records WHERE kind = $1 AND id_digest = $2`, [kind, digest]);
      return { consumed: false, grantId: rows[0]?.grant_id ?? null };
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

/** Where the authorization server's own secrets are kept, sealed: each a JSON document, sealed whole. */
export const oauthSecretsColumn: SealedColumn = { table: 'oauth_secrets', column: 'value', rowKey: 'name', json: true };

/**
 * One of the authorization server's own secrets (its cookie keys, its signing keys): made by `make` the first time
 * any api asks, and the same for every api after (the first insert wins).
 */
export async function oauthSecret<T>(db: Queryable, secrets: SecretBox, name: string, make: () => T): Promise<T> {
  const place = placeOf(oauthSecretsColumn, name);
  const read = async () => (await db.query(`SELECT value FROM oauth_secrets WHERE name = $1`, [name])).rows[0]?.value as unknown;
  let stored = await read();
  if (stored === undefined) {
    await db.query(`INSERT INTO oauth_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, sealJson(secrets, make(), place)]);
    stored = await read();
  }
  return openJson<T>(secrets, stored, place);
}
