import type { Queryable } from '../../db/database';
import type { Ability, Access } from './abilities';
import type { Caller, Role } from './actors';
import { AppError } from '../kit/errors';
import { organizationColumns, organizationFromRow } from './organizations';
import { planColumns, planFromRow } from './plans';
import { parseToken, tokenMatches } from './tokens';

const refused = () => new AppError('unauthorized', 'The bearer token is missing, malformed, unknown, expired or revoked');

const lastTouched = new Map<string, number>();
const touchEveryMs = 60_000;

/** Keeps `last_used_at` to the minute without a write on every request. */
function noteUse(db: Queryable, table: 'api_keys' | 'personal_tokens', id: string): void {
  const now = Date.now();
  if (now - (lastTouched.get(id) ?? 0) < touchEveryMs) return;
  if (lastTouched.size > 10_000) lastTouched.clear();
  lastTouched.set(id, now);
  db.query(`UPDATE ${table} SET last_used_at = now() WHERE id = $1`, [id]).catch(() => lastTouched.delete(id));
}

/**
 * Resolves `Authorization: Bearer …` to an organization, its plan and an actor, or refuses with 401. One query,
 * nothing cached: a revoked token, a plan change or API access turned off counts from the next request.
 */
export async function authenticate(db: Queryable, authorization: string | undefined): Promise<Caller> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const parsed = match ? parseToken(match[1]!) : undefined;
  // Session cookies and password links are never bearer tokens.
  if (!match || !parsed || parsed.kind === 'session' || parsed.kind === 'password_link') throw refused();
  const token = match[1]!;

  if (parsed.kind === 'api_key') {
    const { rows } = await db.query(
      `SELECT k.id AS key_id, k.label, k.access, k.abilities, k.token_digest, k.revoked_at, k.expires_at <= now() AS expired, ${organizationColumns}, ${planColumns}
       FROM api_keys k JOIN organizations o ON o.id = k.org_id JOIN plans p ON p.name = o.plan WHERE k.id = $1`,
      [parsed.id],
    );
    const row = rows[0];
    if (!row || row.revoked_at || row.expired || !tokenMatches(token, row.token_digest as Buffer)) throw refused();
    noteUse(db, 'api_keys', parsed.id);
    return {
      organization: organizationFromRow(row),
      plan: planFromRow(row),
      actor: {
        kind: 'api_key',
        keyId: row.key_id,
        label: row.label,
        access: row.access as Access,
        abilities: row.abilities as Ability[],
      },
    };
  }

  const { rows } = await db.query(
    `SELECT t.id AS token_id, t.token_digest, t.revoked_at, u.id AS user_id, u.email, u.role, ${organizationColumns}, ${planColumns}
     FROM personal_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.id = t.org_id
     JOIN plans p ON p.name = o.plan WHERE t.id = $1 AND u.deactivated_at IS NULL`,
    [parsed.id],
  );
  const row = rows[0];
  if (!row || row.revoked_at || !tokenMatches(token, row.token_digest as Buffer)) throw refused();
  noteUse(db, 'personal_tokens', parsed.id);
  return {
    organization: organizationFromRow(row),
    plan: planFromRow(row),
    actor: {
      kind: 'person',
      userId: row.user_id,
      credential: { type: 'personal_token', id: row.token_id },
      email: row.email,
      role: row.role as Role,
    },
  };
}
