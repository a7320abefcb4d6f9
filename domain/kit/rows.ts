import type { Queryable } from '../../db/database';
import { AppError } from './errors';

/** A database row as the API shows it: timestamps in RFC 3339, the organization left out. */
export function plainRecord(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key === 'org_id') continue;
    out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

export async function loadRecord(db: Queryable, table: string, what: string, orgId: string, id: string): Promise<Record<string, unknown>> {
  const { rows } = await db.query(`SELECT * FROM ${table} WHERE org_id = $1 AND id = $2`, [orgId, id]);
  if (!rows[0]) throw new AppError('not_found', `${what} ${id} was not found`);
  return plainRecord(rows[0]);
}

/** The fields of a patch whose values differ from the record's. */
export function changedFields(before: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (JSON.stringify(before[key] ?? null) !== JSON.stringify(value ?? null)) changes[key] = value;
  }
  return changes;
}

/** ETags are the record's version, quoted; a client sends one back in If-Match. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

export function versionFromEtag(etag: string | undefined): number | undefined {
  if (etag === undefined) return undefined;
  const match = /^(?:W\/)?"(\d+)"$/.exec(etag.trim());
  if (!match) {
    throw new AppError('validation_failed', 'If-Match must be an ETag from a previous read, such as "3"', {
      fields: [{ field: 'If-Match', message: 'not an ETag this API gave out' }],
    });
  }
  return Number(match[1]);
}

/** Refuses an update based on a stale read: 409 rather than a lost change. */
export function assertVersion(what: string, record: Record<string, unknown>, ifMatch: string | undefined): void {
  const expected = versionFromEtag(ifMatch);
  if (expected !== undefined && record.version !== expected) {
    throw new AppError('conflict', `${what} changed since it was read (version ${String(record.version)}, If-Match said ${expected}); read it again`, {
      current_version: record.version,
    });
  }
}

/**
 * Updates the fields of a patch, only if the record is still at the version the policy saw, so that an
 * approved change never lands on a record that changed while it waited.
 */
export async function updateRecord(
  tx: Queryable,
  table: string,
  what: string,
  orgId: string,
  id: string,
  patch: Record<string, unknown>,
  seenVersion: number,
): Promise<Record<string, unknown>> {
  const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
  const sets = entries.map(([column], index) => `${column} = $${index + 4}`);
  const { rows } = await tx.query(
    `UPDATE ${table} SET ${[...sets, 'version = version + 1', 'updated_at = clock_timestamp()'].join(', ')}
     WHERE org_id = $1 AND id = $2 AND version = $3 RETURNING *`,
    [orgId, id, seenVersion, ...entries.map(([, value]) => value)],
  );
  if (!rows[0]) await staleOrMissing(tx, table, what, orgId, id);
  return plainRecord(rows[0]);
}

export async function deleteRecord(tx: Queryable, table: string, what: string, orgId: string, id: string, seenVersion: number): Promise<Record<string, unknown>> {
  const { rows } = await tx.query(`DELETE FROM ${table} WHERE org_id = $1 AND id = $2 AND version = $3 RETURNING *`, [orgId, id, seenVersion]);
  if (!rows[0]) await staleOrMissing(tx, table, what, orgId, id);
  return plainRecord(rows[0]);
}

async function staleOrMissing(tx: Queryable, table: string, what: string, orgId: string, id: string): Promise<never> {
  const { rowCount } = await tx.query(`SELECT 1 FROM ${table} WHERE org_id = $1 AND id = $2`, [orgId, id]);
  if (!rowCount) throw new AppError('not_found', `${what} ${id} was not found`);
  throw new AppError('conflict', `${what} ${id} changed after the policy decided on it; nothing was written`);
}
