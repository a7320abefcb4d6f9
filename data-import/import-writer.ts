import type { Queryable } from '../db/database';

export type ColumnType = 'text' | 'text[]' | 'date' | 'timestamptz' | 'bigint' | 'integer' | 'boolean' | 'jsonb';

/** Rows per INSERT: large enough that a big import is a few hundred statements, small enough for PGlite's memory. */
export const rowsPerStatement = 1_000;

/**
 * Inserts rows into an organization's table, a batch per statement: the rows travel as one JSON array and
 * PostgreSQL unpacks them (jsonb_to_recordset), so arrays and JSON columns need no special encoding. A
 * property left undefined becomes NULL. `clockStamps` sets created_at and updated_at with clock_timestamp(),
 * row by row, as customer writes must (see lockCustomerChanges).
 */
export async function insertRows(
  tx: Queryable,
  table: string,
  orgId: string,
  columns: Record<string, ColumnType>,
  rows: Record<string, unknown>[],
  options: { clockStamps?: boolean } = {},
): Promise<void> {
  const names = Object.keys(columns);
  const stamps = options.clockStamps ? ['created_at', 'updated_at'] : [];
  const sql = `INSERT INTO ${table} (org_id, ${[...names, ...stamps].join(', ')})
    SELECT $1, ${[...names.map((name) => `r.${name}`), ...stamps.map(() => 'clock_timestamp()')].join(', ')}
    FROM jsonb_to_recordset($2::jsonb) AS r(${names.map((name) => `${name} ${columns[name]}`).join(', ')})`;
  for (let start = 0; start < rows.length; start += rowsPerStatement) {
    await tx.query(sql, [orgId, JSON.stringify(rows.slice(start, start + rowsPerStatement))]);
  }
}
