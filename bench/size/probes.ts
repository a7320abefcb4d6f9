import type { Queryable } from '../../db/database';
import { encodeCursor } from '../../domain/kit/pagination';
import { exchange, WrongAnswerError, type Operation } from '../measure';

// The size phases' timed requests: each answer is compared with what the database says it must be, worked out
// before timing by a query of the bench's own (plainer than the service's, so that it checks the service).

export const sizePageSize = 50;

/** The page a list must answer: its ids in order, and whether a next page exists. */
export interface ExpectedPage {
  ids: string[];
  more: boolean;
}

/**
 * The ids of the page the bench's query gives: `sql` selects the ids of the organization's rows that pass the
 * filter ($1 the organization, its own parameters from $2), newest first, from `after` (an id) on when given.
 */
export async function expectedPage(db: Queryable, sql: string, params: unknown[], after?: string): Promise<ExpectedPage> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM (${sql}) ids WHERE ($${params.length + 1}::text IS NULL OR id < $${params.length + 1}) ORDER BY id DESC LIMIT ${sizePageSize + 1}`,
    [...params, after ?? null],
  );
  return { ids: rows.slice(0, sizePageSize).map((row) => row.id), more: rows.length > sizePageSize };
}

/** The cursor that starts a page `depth` rows down the list `sql` selects (the id of the row just before it). */
export async function cursorAt(db: Queryable, sql: string, params: unknown[], depth: number): Promise<{ cursor: string; after: string }> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM (${sql}) ids ORDER BY id DESC OFFSET $${params.length + 1} LIMIT 1`, [...params, depth - 1]);
  if (!rows[0]) throw new Error(`the list has fewer than ${depth} rows`);
  return { cursor: encodeCursor(rows[0].id), after: rows[0].id };
}

/**
 * GET `url`, checked to answer 200 with exactly the expected page; `check` may add a condition on each item
 * (its status, its organization) and returns what is wrong, if anything.
 */
export function pageRequest(url: string, headers: Record<string, string>, label: string, expected: ExpectedPage, check?: (item: any) => string | undefined): Operation {
  if (expected.ids.length === 0) throw new Error(`${label}: the expected page is empty, so it would prove nothing`);
  return async (sequence) => {
    const { response, text, body } = await exchange(url, { headers });
    const items = body?.data;
    if (response.status !== 200 || body?.success !== true || !Array.isArray(items)) {
      throw new WrongAnswerError(`${label} #${sequence}: expected 200 with a page, got ${response.status}: ${text.slice(0, 500)}`);
    }
    const ids = items.map((item: { id: string }) => item.id);
    if (ids.length !== expected.ids.length || ids.some((id: string, index: number) => id !== expected.ids[index])) {
      throw new WrongAnswerError(`${label} #${sequence}: ${ids.length} items ${ids.slice(0, 3).join(', ')}…, expected ${expected.ids.length}: ${expected.ids.slice(0, 3).join(', ')}…`);
    }
    if ((typeof body.page?.next_cursor === 'string') !== expected.more) {
      throw new WrongAnswerError(`${label} #${sequence}: next_cursor ${String(body.page?.next_cursor)}, expected ${expected.more ? 'one' : 'none'}`);
    }
    for (const item of items) {
      const wrong = check?.(item);
      if (wrong) throw new WrongAnswerError(`${label} #${sequence}: item ${item.id}: ${wrong}`);
    }
  };
}

/** GET `url`, checked to answer 200 with data that `check` finds right (it returns what is wrong, if anything). */
export function dataRequest(url: string, headers: Record<string, string>, label: string, check: (data: any) => string | undefined): Operation {
  return async (sequence) => {
    const { response, text, body } = await exchange(url, { headers });
    if (response.status !== 200 || body?.success !== true) {
      throw new WrongAnswerError(`${label} #${sequence}: expected 200, got ${response.status}: ${text.slice(0, 500)}`);
    }
    const wrong = check(body.data);
    if (wrong) throw new WrongAnswerError(`${label} #${sequence}: ${wrong}`);
  };
}

/** A query string of the values given (undefined ones left out). */
export function query(values: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) search.set(name, String(value));
  return search.toString();
}
