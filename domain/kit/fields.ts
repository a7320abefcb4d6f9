import { z } from 'zod';

/**
 * PostgreSQL text cannot hold NUL, nor jsonb half a UTF-16 surrogate pair; refusing them here keeps a write
 * from failing after the policy said yes.
 */
export function text(options: { min?: number; max: number }) {
  const base = options.min === undefined ? z.string() : z.string().min(options.min);
  return base
    .max(options.max)
    .refine((value) => !value.includes('\u0000'), { message: 'must not contain NUL characters' })
    .refine((value) => value.isWellFormed(), { message: 'must be well-formed Unicode (no lone surrogates)' });
}

/** A calendar day, YYYY-MM-DD, in the years PostgreSQL and people use (0001–9999). */
export const calendarDate = z.iso
  .date()
  .refine((value) => !value.startsWith('0000'), { message: 'year must be 0001 or later' });

// Output fields that recur across records, described once. Every instant the API writes is RFC 3339 in UTC
// (toISOString: 2026-03-02T09:30:00.000Z); every id is a prefix, an underscore and 26 characters.

/** A record's own id; `use` says where an agent passes it next. */
export function recordId(what: string, prefix: string, use: string) {
  return z.string().describe(`The ${what} id (${prefix}_…); ${use}`);
}

export const createdAt = z.iso.datetime().describe('When the record was created (RFC 3339, UTC)');

export const updatedAt = z.iso.datetime().describe('When the record last changed (RFC 3339, UTC)');

export const recordVersion = z
  .number()
  .int()
  .describe('Starts at 1 and increases with every change; the ETag is this number quoted (e.g. "3"): send it as If-Match to update or delete safely');

/** An instant written by the API: what it is, then anything more an agent should know. */
export function instantField(what: string, more?: string) {
  return z.iso.datetime().describe(`${what} (RFC 3339, UTC)${more ? `; ${more}` : ''}`);
}

/** A calendar day written by the API, with what it is. */
export function dayField(what: string) {
  return z.iso.date().describe(`${what} (YYYY-MM-DD)`);
}

export const currencyCode = z.string().length(3).describe('ISO 4217 currency code, e.g. EUR; the *_cents amounts are in its minor unit');

/** An amount of money: an integer in the currency's minor unit. */
export function cents(what: string) {
  return z.number().int().describe(`${what}, an integer in the currency's minor unit (cents: 1999 is 19.99)`);
}

/**
 * An instant in RFC 3339 with any offset, read as the UTC instant it names: what reaches SQL is always
 * a plain UTC timestamp (PostgreSQL refuses offsets past ±15:59, which RFC 3339 allows).
 */
export const utcInstant = z.iso
  .datetime({ offset: true })
  .transform((value) => new Date(value).toISOString());

/** A write's precondition: the record's version as last read, sent by REST clients as the If-Match header. */
export const ifMatch = z
  .string()
  .max(100)
  .optional()
  .describe('The ETag of the record as you last read it (the version, quoted, e.g. "3"); the write is refused with 409 if it changed since');

/** The input of an operation that reads one record: its id, described for the caller. */
export function idInput(description: string) {
  return z.strictObject({ id: text({ max: 100 }).describe(description) });
}
