import { z } from 'zod';

/**
 * PostgreSQL text cannot hold NUL, nor jsonb half a UTF-16 surrogate pair; refusing them here keeps a write
 * from failing after the policy said yes.
 */
export function text(options: { min?: number; max: number }) {
  return z
    .string()
    .min(options.min ?? 0)
    .max(options.max)
    .refine((value) => !value.includes('\u0000'), { message: 'must not contain NUL characters' })
    .refine((value) => value.isWellFormed(), { message: 'must be well-formed Unicode (no lone surrogates)' });
}

/** A calendar day, YYYY-MM-DD, in the years PostgreSQL and people use (0001–9999). */
export const calendarDate = z.iso
  .date()
  .refine((value) => !value.startsWith('0000'), { message: 'year must be 0001 or later' });
