import type { Queryable } from '../../db/database';
import { decodeCursor, toPage, type Page } from './pagination';
import { plainRecord } from './rows';

/** Builds a WHERE clause from the filters that are set; values go in as parameters, never into the text. */
export class Filters {
  private readonly clauses: string[] = [];
  readonly values: unknown[] = [];

  constructor(orgId: string) {
    this.add('org_id = $?', orgId);
  }

  /** `$?` in the clause stands for the value; skipped when the value is undefined. */
  add(clause: string, value: unknown): this {
    if (value === undefined) return this;
    this.values.push(value);
    this.clauses.push(clause.replaceAll('$?', `$${this.values.length}`));
    return this;
  }

  /** A parameter for use elsewhere in the statement (LIMIT, say). */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  get where(): string {
    return `WHERE ${this.clauses.join(' AND ')}`;
  }
}

/** A search term as an ILIKE pattern matching it anywhere, its own % and _ taken literally. */
export function containsPattern(term: string | undefined): string | undefined {
  return term ? `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
}

/** A page of an organization's table, newest first: ids sort by creation time, so the cursor is the last id shown. */
export async function listPage<T>(db: Queryable, table: string, filters: Filters, input: { limit: number; cursor?: string }): Promise<Page<T>> {
  filters.add('id < $?', decodeCursor(input.cursor));
  const { rows } = await db.query(`SELECT * FROM ${table} ${filters.where} ORDER BY id DESC LIMIT ${filters.param(input.limit + 1)}`, filters.values);
  return toPage(rows.map((row) => plainRecord(row) as T & { id: string }), input.limit);
}
