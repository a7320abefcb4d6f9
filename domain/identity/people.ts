import type { Database, Queryable } from '../../db/database';
import { roles, type Role } from './actors';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { issueToken } from './tokens';

export interface User {
  id: string;
  orgId: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: string;
}

export async function createUser(
  db: Queryable,
  input: { orgId: string; email: string; role: string; name?: string },
): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new AppError('validation_failed', `"${input.email}" is not an email address`);
  if (!roles.includes(input.role as Role)) throw new AppError('validation_failed', `role must be one of ${roles.join(', ')}`);
  const { rows } = await db.query(
    `INSERT INTO users (id, org_id, email, name, role) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (org_id, email) DO NOTHING RETURNING *`,
    [newId('usr'), input.orgId, email, input.name ?? null, input.role],
  );
  if (!rows[0]) throw new AppError('conflict', `${email} is already a member of this organization`);
  return userFromRow(rows[0]);
}

export async function findUserByEmail(db: Queryable, orgId: string, email: string): Promise<User> {
  const { rows } = await db.query('SELECT * FROM users WHERE org_id = $1 AND email = $2', [orgId, email.trim().toLowerCase()]);
  if (!rows[0]) throw new AppError('not_found', `no user ${email} in this organization`);
  return userFromRow(rows[0]);
}

export async function listUsers(db: Queryable, orgId: string): Promise<User[]> {
  const { rows } = await db.query('SELECT * FROM users WHERE org_id = $1 ORDER BY email', [orgId]);
  return rows.map(userFromRow);
}

/** A personal access token for a person to use the API (deciding reviews, say); shown once. */
export async function createPersonalToken(db: Database, user: User): Promise<{ id: string; token: string }> {
  const id = newId('pat');
  const { token, digest } = issueToken('personal', id);
  await db.query('INSERT INTO personal_tokens (id, user_id, org_id, token_digest) VALUES ($1, $2, $3, $4)', [
    id,
    user.id,
    user.orgId,
    digest,
  ]);
  return { id, token };
}

export async function revokePersonalToken(db: Queryable, orgId: string, tokenId: string): Promise<void> {
  const { rowCount } = await db.query(
    'UPDATE personal_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND org_id = $2',
    [tokenId, orgId],
  );
  if (!rowCount) throw new AppError('not_found', `the organization has no personal token ${tokenId}`);
}

function userFromRow(row: Record<string, unknown>): User {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    email: row.email as string,
    name: (row.name as string | null) ?? null,
    role: row.role as Role,
    createdAt: (row.created_at as Date).toISOString(),
  };
}
