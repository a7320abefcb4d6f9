import type { Queryable } from '../../db/database';
import type { Ability, Access } from './abilities';
import type { Caller, Role } from './actors';
import { AppError } from '../kit/errors';
import { organizationColumns, organizationFromRow } from './organizations';
import { planColumns, planFromRow } from './plans';
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
  /** The SELECT, with its parameters at $1 (the token's id) and $2 (its digest). */
  sql: string;
  params: [id: string, digest: Buffer];
  /** The row of the credential, whose `last_used_at` is kept. */
  table: 'api_keys' | 'personal_tokens';
  /** The caller of a row the SELECT returned. */
  callerOf(row: Record<string, unknown>): Caller;
}

const apiKeyLookup = `SELECT k.id AS key_id, k.label, k.access, k.abilities, k.daily_request_budget, k.write_caps, ${organizationColumns}, ${planColumns}
  FROM api_keys k JOIN organizations o ON o.id = k.org_id JOIN plans p ON p.name = o.plan
  WHERE k.id = $1 AND k.token_digest = $2 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`;

// A person's token has no budget of its own: the column is there for the limits' statement, which reads it of both.
const personalTokenLookup = `SELECT t.id AS token_id, u.id AS user_id, u.email, u.role, NULL::integer AS daily_request_budget, ${organizationColumns}, ${planColumns}
  FROM personal_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.id = t.org_id JOIN plans p ON p.name = o.plan
  WHERE t.id = $1 AND t.token_digest = $2 AND t.revoked_at IS NULL AND u.deactivated_at IS NULL`;

/** The lookup of `Authorization: Bearer …`; a header that holds no API key or personal token is refused with 401. */
export function bearerLookup(authorization: string | undefined): BearerLookup {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const parsed = match ? parseToken(match[1]!) : undefined;
  // Session cookies and password links are never bearer tokens.
  if (!match || !parsed || parsed.kind === 'session' || parsed.kind === 'password_link') throw unauthorized();
  const params: BearerLookup['params'] = [parsed.id, digestToken(match[1]!)];

  if (parsed.kind === 'api_key') {
    return {
      sql: apiKeyLookup,
      params,
      table: 'api_keys',
      callerOf: (row) =>
        callerWith(row, {
          kind: 'api_key',
          keyId: row.key_id as string,
          label: row.label as string,
          access: row.access as Access,
          abilities: row.abilities as Ability[],
          dailyRequestBudget: (row.daily_request_budget as number | null) ?? null,
          writeCaps: (row.write_caps as Record<string, number> | null) ?? {},
        }),
    };
  }
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

/** The caller of a looked-up row: its organization and plan, and the actor its credential names. */
function callerWith(row: Record<string, unknown>, actor: Caller['actor']): Caller {
  return { organization: organizationFromRow(row), plan: planFromRow(row), actor };
}

const lastTouched = new Map<string, number>();
const touchEveryMs = 60_000;

/** Keeps `last_used_at` to the minute without a write on every request. */
export function noteUse(db: Queryable, lookup: BearerLookup): void {
  const [id] = lookup.params;
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
export async function authenticate(db: Queryable, authorization: string | undefined): Promise<Caller> {
  const lookup = bearerLookup(authorization);
  const { rows } = await db.query(lookup.sql, lookup.params);
  if (!rows[0]) throw unauthorized();
  noteUse(db, lookup);
  return lookup.callerOf(rows[0]);
}
