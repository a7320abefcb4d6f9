import { z } from 'zod';

/** PostgreSQL text cannot hold NUL; refusing it here keeps the write from failing after the policy said yes. */
export function text(options: { min?: number; max: number }) {
  return z
    .string()
    .min(options.min ?? 0)
    .max(options.max)
    .refine((value) => !value.includes('\u0000'), { message: 'must not contain NUL characters' });
}

/** A calendar day, YYYY-MM-DD, in the years PostgreSQL and people use (0001–9999). */
export const calendarDate = z.iso
  .date()
  .refine((value) => !value.startsWith('0000'), { message: 'year must be 0001 or later' });
