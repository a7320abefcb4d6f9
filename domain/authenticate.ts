import type { Queryable } from '../db/database';
import type { Ability, Access } from './abilities';
import type { Caller, Role } from './actors';
import { AppError } from './errors';
import { organizationColumns, organizationFromRow } from './organizations';
import { parseToken, tokenMatches } from './tokens';

const refused = () => new AppError('unauthorized', 'The bearer token is missing, malformed, unknown or revoked');

/** Resolves `Authorization: Bearer …` to an organization and an actor, or refuses with 401. */
export async function authenticate(db: Queryable, authorization: string | undefined): Promise<Caller> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const parsed = match ? parseToken(match[1]!) : undefined;
  if (!match || !parsed) throw refused();
  const token = match[1]!;

  if (parsed.kind === 'api_key') {
    const { rows } = await db.query(
      `SELECT k.id AS key_id, k.label, k.access, k.abilities, k.token_digest, k.revoked_at, ${organizationColumns}
       FROM api_keys k JOIN organizations o ON o.id = k.org_id WHERE k.id = $1`,
      [parsed.id],
    );
    const row = rows[0];
    if (!row || row.revoked_at || !tokenMatches(token, row.token_digest as Buffer)) throw refused();
    return {
      organization: organizationFromRow(row),
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
    `SELECT t.id AS token_id, t.token_digest, t.revoked_at, u.id AS user_id, u.email, u.role, ${organizationColumns}
     FROM personal_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.id = t.org_id WHERE t.id = $1`,
    [parsed.id],
  );
  const row = rows[0];
  if (!row || row.revoked_at || !tokenMatches(token, row.token_digest as Buffer)) throw refused();
  return {
    organization: organizationFromRow(row),
    actor: { kind: 'person', userId: row.user_id, tokenId: row.token_id, email: row.email, role: row.role as Role },
  };
}
