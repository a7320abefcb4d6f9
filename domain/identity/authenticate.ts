import type { Queryable } from '../../db/database';
import type { Ability, Access } from './abilities';
import type { Caller, Role } from './actors';
import { AppError } from '../kit/errors';
import { organizationColumns, organizationFromRow } from './organizations';
import { planColumns, planFromRow } from './plans';
import { oauthRecordDigest } from './oauth-records';
import { digestToken, parseToken } from './tokens';

export const unauthorized = () => new AppError('unauthorized', 'The bearer token is missing, malformed, unknown, expired or revoked');

/**
 * How a bearer token finds its caller: one SELECT that returns the caller's row when the token is live and
 * nothing otherwise, so that another statement (the request limits' count) can take it as a CTE and do its
 * work only for a caller that exists. Its columns include the organization's (`id`, `timezone`), the plan's, and
 * the key's own `daily_request_budget` (NULL for a key without one, and for a person's token).
 *
 * The secret is checked by its SHA-256 digest in the WHERE clause. An `=` on digests is not constant-time, and
 * needs not be: what a timing difference could tell is how many leading bytes of the digest match, and a digest's
 * bytes cannot be steered by choosing the secret.
 */
export interface BearerLookup {
  /**
   * The SELECT, with its two parameters at $1 and $2: an API key's or a personal token's id and digest, or an OAuth
   * access token's digest and the audience it must be for. Its `credential_id` column is what the request limits
   * count by: the key (a connected client's, whatever token it holds now) or the personal token.
   */
  sql: string;
  params: [string, Buffer | string];
  /** The row of the credential (`credential_id`), whose `last_used_at` is kept. */
  table: 'api_keys' | 'personal_tokens';
  /** The caller of a row the SELECT returned. */
  callerOf(row: Record<string, unknown>): Caller;
}

const apiKeyLookup = `SELECT k.id AS credential_id, k.id AS key_id, k.oauth_client_id, NULL AS token_scope, k.label, k.access, k.abilities, k.daily_request_budget, k.write_caps, ${organizationColumns}, ${planColumns}
  FROM api_keys k JOIN organizations o ON o.id = k.org_id JOIN plans p ON p.name = o.plan
  WHERE k.id = $1 AND k.token_digest = $2 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`;

// A person's token has no budget of its own: the column is there for the limits' statement, which reads it of both.
const personalTokenLookup = `SELECT t.id AS credential_id, t.id AS token_id, u.id AS user_id, u.email, u.role, NULL::integer AS daily_request_budget, ${organizationColumns}, ${planColumns}
  FROM personal_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.id = t.org_id JOIN plans p ON p.name = o.plan
  WHERE t.id = $1 AND t.token_digest = $2 AND t.revoked_at IS NULL AND u.deactivated_at IS NULL`;

/**
 * An access token the authorization server issued to a client a person connected (api/oauth): found by its digest
 * in the server's records, live, for this audience (a token for /mcp is refused on /api, and the other way round),
 * of a grant whose key is neither revoked nor expired. Its caller is that key, holding the abilities both the key
 * and the token carry (a refreshed token may carry fewer).
 */
const oauthLookup = `SELECT k.id AS credential_id, k.id AS key_id, k.oauth_client_id, t.payload->>'scope' AS token_scope, k.label, k.access, k.abilities,
    k.daily_request_budget, k.write_caps, ${organizationColumns}, ${planColumns}
  FROM oauth_records t JOIN api_keys k ON k.oauth_grant_id = t.grant_id JOIN organizations o ON o.id = k.org_id JOIN plans p ON p.name = o.plan
  WHERE t.kind = 'AccessToken' AND t.id_digest = $1 AND t.expires_at > now() AND t.payload->>'aud' = $2
    AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`;

/** What an access token the authorization server issues looks like (opaque, base64url); ours start `gate_`. */
const accessTokenShape = /^[A-Za-z0-9_-]{32,128}$/;

/**
 * The lookup of `Authorization: Bearer …`: an API key, a personal token, or an OAuth access token issued for
 * `audience` (the resource the request is for: `…/api` or `…/mcp`; none, no access token passes). Anything else is
 * refused with 401.
 */
export function bearerLookup(authorization: string | undefined, audience?: string): BearerLookup {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw unauthorized();
  const token = match[1]!;
  const parsed = parseToken(token);
  if (!parsed && accessTokenShape.test(token) && !token.startsWith('gate_')) {
    if (audience === undefined) throw unauthorized();
    return { sql: oauthLookup, params: [oauthRecordDigest(token), audience], table: 'api_keys', callerOf: apiKeyCaller };
  }
  // Session cookies and password links are never bearer tokens.
  if (!parsed || parsed.kind === 'session' || parsed.kind === 'password_link') throw unauthorized();
  const params: [string, Buffer] = [parsed.id, digestToken(token)];

  if (parsed.kind === 'api_key') return { sql: apiKeyLookup, params, table: 'api_keys', callerOf: apiKeyCaller };
  return {
    sql: personalTokenLookup,
    params,
    table: 'personal_tokens',
    callerOf: (row) =>
      callerWith(row, {
        kind: 'person',
        userId: row.user_id as string,
        credential: { type: 'personal_token', id: row.token_id as string },
        email: row.email as string,
        role: row.role as Role,
      }),
  };
}

/** The caller of a key's row: an API key's, or a connected client's (whose token may carry fewer abilities). */
function apiKeyCaller(row: Record<string, unknown>): Caller {
  const abilities = row.abilities as Ability[];
  const tokenScope = row.token_scope as string | null;
  const granted = tokenScope === null ? undefined : new Set(tokenScope.split(' '));
  return callerWith(row, {
    kind: 'api_key',
    keyId: row.key_id as string,
    label: row.label as string,
    access: row.access as Access,
    abilities: granted ? abilities.filter((ability) => granted.has(ability)) : abilities,
    dailyRequestBudget: (row.daily_request_budget as number | null) ?? null,
    writeCaps: (row.write_caps as Record<string, number> | null) ?? {},
    ...(row.oauth_client_id ? { oauthClientId: row.oauth_client_id as string } : {}),
  });
}

/** The caller of a looked-up row: its organization and plan, and the actor its credential names. */
function callerWith(row: Record<string, unknown>, actor: Caller['actor']): Caller {
  return { organization: organizationFromRow(row), plan: planFromRow(row), actor };
}

const lastTouched = new Map<string, number>();
const touchEveryMs = 60_000;

/** Keeps `last_used_at` to the minute without a write on every request. */
export function noteUse(db: Queryable, lookup: BearerLookup, row: Record<string, unknown>): void {
  const id = row.credential_id as string;
  const now = Date.now();
  if (now - (lastTouched.get(id) ?? 0) < touchEveryMs) return;
  if (lastTouched.size > 10_000) lastTouched.clear();
  lastTouched.set(id, now);
  db.query(`UPDATE ${lookup.table} SET last_used_at = now() WHERE id = $1`, [id]).catch(() => lastTouched.delete(id));
}

/**
 * Resolves `Authorization: Bearer …` to an organization, its plan and an actor, or refuses with 401. One query,
 * nothing cached: a revoked token, a plan change or API access turned off counts from the next request. (With the
 * request limits on, the api asks this inside the limits' count: `RequestLimits.admit`.)
 */
export async function authenticate(db: Queryable, authorization: string | undefined, audience?: string): Promise<Caller> {
  const lookup = bearerLookup(authorization, audience);
  const { rows } = await db.query(lookup.sql, lookup.params);
  if (!rows[0]) throw unauthorized();
  noteUse(db, lookup, rows[0]);
  return lookup.callerOf(rows[0]);
}
