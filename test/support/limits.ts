import type { LightMyRequestResponse } from 'fastify';
import type { Queryable } from '../../db/database';

// What the tests of the request limits and the keys' budgets share: a clock they move, and how they read what was
// counted (the answers' statuses, the rate-limit headers, the counters in PostgreSQL).

/**
 * A clock for the app's limits (the minute, the organization's day) that a test moves with `at`. Start it in the
 * future: a counter is swept once its window has passed by the real clock too, so a window in the past could be
 * swept by another test file's app while the test still counts in it.
 */
export function movableClock(start: string): { clock: () => Date; at: (instant: string) => void } {
  let now = new Date(start);
  return {
    clock: () => now,
    at: (instant) => {
      now = new Date(instant);
    },
  };
}

/** How many answers had each status: `{200: 20, 429: 180}`. */
export const statuses = (responses: LightMyRequestResponse[]) =>
  responses.reduce<Record<number, number>>((counted, r) => ({ ...counted, [r.statusCode]: (counted[r.statusCode] ?? 0) + 1 }), {});

export function limitHeaders(response: LightMyRequestResponse) {
  return {
    limit: Number(response.headers['x-ratelimit-limit']),
    remaining: Number(response.headers['x-ratelimit-remaining']),
    reset: Number(response.headers['x-ratelimit-reset']),
  };
}

/** A counter's count over all its periods; undefined when nothing was ever counted in it. */
export async function counter(db: Queryable, scope: string): Promise<number | undefined> {
  const { rows } = await db.query('SELECT sum(count)::int AS n FROM usage_counters WHERE scope = $1', [scope]);
  return rows[0].n ?? undefined;
}
