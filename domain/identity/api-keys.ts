import type { Database, Queryable } from '../../db/database';
import { defaultAbilities, isAbility, isWriteAbility, type Ability, type Access } from './abilities';
import { cliActor, recordAudit, type ActorRef } from '../gate/audit';
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
  /** The person who made it; null when the CLI did. */
  createdBy: { id: string; email: string } | null;
  /** When it stops working by itself; null: until revoked. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const keyColumns = `k.*, u.email AS created_by_email`;
const keyFrom = `api_keys k LEFT JOIN users u ON u.id = k.created_by`;

export async function createApiKey(
  db: Database,
  input: { orgId: string; label: string; access: Access; abilities?: string[]; expiresAt?: string | null },
  by: ActorRef = cliActor,
): Promise<{ key: ApiKey; token: string }> {
  if (!input.label.trim()) throw new AppError('validation_failed', 'label must not be empty');
  if (input.expiresAt && !(Date.parse(input.expiresAt) > Date.now())) {
    throw new AppError('validation_failed', 'expires_at must be in the future', { fields: [{ field: 'expires_at', message: 'must be in the future' }] });
  }
  const abilities = input.abilities ?? defaultAbilities(input.access);
  const unknown = abilities.filter((ability) => !isAbility(ability));
  if (unknown.length) throw new AppError('validation_failed', `unknown abilities: ${unknown.join(', ')}`);
  if (input.access === 'read' && abilities.some((ability) => isWriteAbility(ability as Ability))) {
    throw new AppError('validation_failed', 'a read-only key cannot carry write abilities');
  }
  const id = newId('key');
  const { token, digest } = issueToken('api_key', id);
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO api_keys (id, org_id, label, access, abilities, token_digest, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, input.orgId, input.label.trim(), input.access, [...new Set(abilities)], digest, by.type === 'user' ? by.id : null, input.expiresAt ?? null],
    );
    const key = await findApiKey(tx, input.orgId, id);
    await recordAudit(tx, input.orgId, {
      type: 'api_key.created',
      actor: by,
      resourceId: id,
      data: { label: key.label, access: key.access, abilities: key.abilities, expires_at: key.expiresAt },
    });
    return { key, token };
  });
}

export async function listApiKeys(db: Queryable, orgId: string): Promise<ApiKey[]> {
  const { rows } = await db.query(`SELECT ${keyColumns} FROM ${keyFrom} WHERE k.org_id = $1 ORDER BY k.created_at, k.id`, [orgId]);
  return rows.map(apiKeyFromRow);
}

export async function findApiKey(db: Queryable, orgId: string, keyId: string): Promise<ApiKey> {
  const { rows } = await db.query(`SELECT ${keyColumns} FROM ${keyFrom} WHERE k.org_id = $1 AND k.id = $2`, [orgId, keyId]);
  if (!rows[0]) throw new AppError('not_found', `The organization has no key ${keyId}`);
  return apiKeyFromRow(rows[0]);
}

/** Revocation counts from the next request; revoking a revoked key changes nothing and records nothing. */
export async function revokeApiKey(db: Database, orgId: string, keyId: string, by: ActorRef = cliActor): Promise<ApiKey> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND org_id = $2 AND revoked_at IS NULL RETURNING label`,
      [keyId, orgId],
    );
    const key = await findApiKey(tx, orgId, keyId);
    if (rows[0]) await recordAudit(tx, orgId, { type: 'api_key.revoked', actor: by, resourceId: keyId, data: { label: key.label } });
    return key;
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
    createdBy: row.created_by ? { id: row.created_by as string, email: row.created_by_email as string } : null,
    expiresAt: row.expires_at ? (row.expires_at as Date).toISOString() : null,
    lastUsedAt: row.last_used_at ? (row.last_used_at as Date).toISOString() : null,
    revokedAt: row.revoked_at ? (row.revoked_at as Date).toISOString() : null,
  };
}
