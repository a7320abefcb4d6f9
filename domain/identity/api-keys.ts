import type { Database, Queryable } from '../../db/database';
import { defaultAbilities, isAbility, isWriteAbility, type Ability, type Access } from './abilities';
import { cliActor, recordAudit } from '../gate/audit';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { issueToken } from './tokens';

export interface ApiKey {
  id: string;
  orgId: string;
  label: string;
  access: Access;
  abilities: Ability[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export async function createApiKey(
  db: Database,
  input: { orgId: string; label: string; access: Access; abilities?: string[] },
): Promise<{ key: ApiKey; token: string }> {
  if (!input.label.trim()) throw new AppError('validation_failed', 'label must not be empty');
  const abilities = input.abilities ?? defaultAbilities(input.access);
  const unknown = abilities.filter((ability) => !isAbility(ability));
  if (unknown.length) throw new AppError('validation_failed', `unknown abilities: ${unknown.join(', ')}`);
  if (input.access === 'read' && abilities.some((ability) => isWriteAbility(ability as Ability))) {
    throw new AppError('validation_failed', 'a read-only key cannot carry write abilities');
  }
  const id = newId('key');
  const { token, digest } = issueToken('api_key', id);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `INSERT INTO api_keys (id, org_id, label, access, abilities, token_digest)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [id, input.orgId, input.label.trim(), input.access, [...new Set(abilities)], digest],
    );
    await recordAudit(tx, input.orgId, { type: 'api_key.created', actor: cliActor, resourceId: id, data: { label: input.label } });
    return { key: apiKeyFromRow(rows[0]), token };
  });
}

export async function listApiKeys(db: Queryable, orgId: string): Promise<ApiKey[]> {
  const { rows } = await db.query('SELECT * FROM api_keys WHERE org_id = $1 ORDER BY created_at, id', [orgId]);
  return rows.map(apiKeyFromRow);
}

export async function revokeApiKey(db: Database, orgId: string, keyId: string): Promise<ApiKey> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND org_id = $2 RETURNING *`,
      [keyId, orgId],
    );
    if (!rows[0]) throw new AppError('not_found', `the organization has no key ${keyId}`);
    await recordAudit(tx, orgId, { type: 'api_key.revoked', actor: cliActor, resourceId: keyId, data: { label: rows[0].label } });
    return apiKeyFromRow(rows[0]);
  });
}

function apiKeyFromRow(row: Record<string, unknown>): ApiKey {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    label: row.label as string,
    access: row.access as Access,
    abilities: row.abilities as Ability[],
    createdAt: (row.created_at as Date).toISOString(),
    lastUsedAt: row.last_used_at ? (row.last_used_at as Date).toISOString() : null,
    revokedAt: row.revoked_at ? (row.revoked_at as Date).toISOString() : null,
  };
}
