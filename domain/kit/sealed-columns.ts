import type { Queryable } from '../../db/database';
import { isSealed, sealedPrefix, type SecretBox } from './secret-box';

// Where sealed secrets live, column by column, and the routine that keeps them sealed with the first key: run at
// every api's and worker's start and by `gatehouse secrets reseal`. It seals what is still plain (stored before
// the key was set, or by an older version during an upgrade) and reseals what an older key sealed (a rotation).
// Each value is replaced only if it is still what was read (a conditional update), so processes starting together
// do the work once between them, without a lock, and a value changed meanwhile is left to its writer.

export interface SealedColumn {
  table: string;
  column: string;
  /** The column naming the row: bound into each sealed value, with the table and column. */
  rowKey: string;
  /** A jsonb column: its plain value is a JSON document, its sealed one a JSON string. */
  json?: boolean;
}

/** Where a value lives, as the seal binds it: `webhook_endpoints.secret:whk_01…`. */
export function placeOf(where: SealedColumn, rowId: string): string {
  return `${where.table}.${where.column}:${rowId}`;
}

/** A JSON document sealed as a string, for a jsonb column (stored as a JSON string). */
export function sealJson(box: SecretBox, value: unknown, place: string): string {
  return JSON.stringify(box.seal(JSON.stringify(value), place));
}

/** What a jsonb column holds, opened: a sealed string, or a plain document as an older version stored it. */
export function openJson<T>(box: SecretBox, stored: unknown, place: string): T {
  return (typeof stored === 'string' ? JSON.parse(box.open(stored, place)) : stored) as T;
}

/** The stored text of the column, in SQL: a jsonb column's string as it is, its document as JSON text. */
const storedText = (where: SealedColumn) =>
  where.json ? `(CASE WHEN jsonb_typeof(${where.column}) = 'string' THEN ${where.column} #>> '{}' ELSE ${where.column}::text END)` : where.column;

const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface ColumnSealing {
  table: string;
  column: string;
  /** Plain values sealed. */
  sealed: number;
  /** Values an older key sealed, sealed again with the first. */
  resealed: number;
  /** Values that do not open with the keys held (each named by its place; never its value). */
  unreadable: string[];
}

/** Seals every value of the column that is not sealed with the box's first key. */
export async function sealColumn(db: Queryable, box: SecretBox, where: SealedColumn): Promise<ColumnSealing> {
  const text = storedText(where);
  const { rows } = await db.query<{ row_id: string; stored: string }>(
    `SELECT ${where.rowKey}::text AS row_id, ${text} AS stored FROM ${where.table} WHERE ${where.column} IS NOT NULL AND ${text} NOT LIKE $1`,
    [likePrefix(sealedPrefix(box.sealingKeyId))],
  );
  const done: ColumnSealing = { table: where.table, column: where.column, sealed: 0, resealed: 0, unreadable: [] };
  for (const { row_id: rowId, stored } of rows) {
    const place = placeOf(where, rowId);
    let plain: string;
    try {
      plain = box.open(stored, place);
    } catch (error) {
      done.unreadable.push((error as Error).message);
      continue;
    }
    const { rowCount } = await db.query(
      `UPDATE ${where.table} SET ${where.column} = ${where.json ? 'to_jsonb($1::text)' : '$1'} WHERE ${where.rowKey}::text = $2 AND ${text} = $3`,
      [box.seal(plain, place), rowId, stored],
    );
    if (rowCount === 1) done[isSealed(stored) ? 'resealed' : 'sealed'] += 1;
  }
  return done;
}

/** How many values of the column each key seals, and how many are not sealed. */
export async function countSealedByKey(db: Queryable, where: SealedColumn): Promise<{ plain: number; byKey: Record<string, number> }> {
  const text = storedText(where);
  const { rows } = await db.query<{ key_id: string | null; n: number }>(
    `SELECT CASE WHEN ${text} LIKE 'sealed:%' THEN split_part(${text}, ':', 3) END AS key_id, count(*)::int AS n
     FROM ${where.table} WHERE ${where.column} IS NOT NULL GROUP BY 1 ORDER BY 1`,
  );
  const byKey: Record<string, number> = {};
  let plain = 0;
  for (const { key_id: keyId, n } of rows) {
    if (keyId === null) plain = n;
    else byKey[keyId] = n;
  }
  return { plain, byKey };
}
