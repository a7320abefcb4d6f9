import { z } from 'zod';
import { AppError } from './errors';

/** A query string carries numbers as digits; JSON (a body, MCP arguments) carries them as numbers. Nothing else is one. */
const digitsAsNumber = (value: unknown) => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value);

export const pageInput = {
  limit: z.preprocess(digitsAsNumber, z.number().int().min(1).max(200).default(50)).describe('How many items to return, 1 to 200 (default 50)'),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe('The next_cursor of the previous page; leave it out for the first page'),
};

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Cursors are opaque to callers; inside they carry the sort key of the last item shown. */
export function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const value = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9a-z]{26}$/.test(value)) {
    throw new AppError('validation_failed', 'cursor is not one this API gave out', {
      fields: [{ field: 'cursor', message: 'not a cursor from a previous page' }],
    });
  }
  return value;
}

/** Rows fetched with `limit + 1`: the extra row only tells that another page exists. */
export function toPage<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? encodeCursor(items.at(-1)!.id) : null };
}

/** Where a page ordered by an instant and the id ends (the calendar feed, customers' sync). */
export interface TimeCursor {
  /** The instant in microseconds since the epoch, as PostgreSQL stores it: many rows of one import share a millisecond. */
  micros: number;
  id: string;
}

/**
 * A page of rows ordered by (instant, id), fetched with `limit + 1`; each row carries its instant as
 * `cursor_micros`, which the items leave out.
 */
export function toTimePage<T>(rows: Record<string, unknown>[], limit: number, item: (row: Record<string, unknown>) => T): Page<T> {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    items: shown.map(({ cursor_micros: _, ...row }) => item(row)),
    nextCursor: rows.length > limit && last ? encodeCursor(`${String(last.cursor_micros)}|${String(last.id)}`) : null,
  };
}

export function decodeTimeCursor(cursor: string | undefined): TimeCursor | undefined {
  if (cursor === undefined) return undefined;
  const [micros, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!micros || !/^-?\d{1,17}$/.test(micros) || !id || !/^[a-z]+_[0-9a-z]{26}$/.test(id)) {
    throw new AppError('validation_failed', 'cursor is not one this API gave out', {
      fields: [{ field: 'cursor', message: 'not a cursor from a previous page of this list' }],
    });
  }
  return { micros: Number(micros), id };
}
