import type { Queryable } from '../../db/database';
import { housekeeping } from '../kit/housekeeping';

// The per-address limits' counts, in PostgreSQL so that every api process shares them (N apis behind a proxy
// allow what one does): a hit adds one to its limit's row and learns the new count in the same statement, so that
// concurrent hits are counted exactly. A window begins with the first request after the last one ended and lasts its
// length, as @fastify/rate-limit's own stores count; it is measured by the database's clock, which every api shares.

export interface AddressHit {
  /** Hits in this window, this one included. */
  count: number;
  /** Milliseconds until the window ends. */
  ttlMs: number;
}

export interface AddressCounters {
  /** Counts a hit on `key` (the limit and the address) in its current window, or a new one of `windowMs`. */
  hit(key: string, windowMs: number): Promise<AddressHit>;
  /** Waits for a sweep of old counters that is under way. */
  close(): Promise<void>;
}

/**
 * Upserts the limit's row: a window that ended starts again at 1. It commits without waiting for the WAL to reach
 * the disk, as the plan's limits do (domain/usage/limits.ts): a crash of the server may forget the counts of its
 * last fraction of a second.
 */
const hitStatement = `
  WITH hit AS (
    INSERT INTO address_counters AS c (key, count, expires_at)
    VALUES ($1, 1, now() + make_interval(secs => $2::bigint / 1000.0))
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN c.expires_at <= now() THEN 1 ELSE c.count + 1 END,
      expires_at = CASE WHEN c.expires_at <= now() THEN EXCLUDED.expires_at ELSE c.expires_at END
    RETURNING c.count, c.expires_at
  ), unsynced AS (
    SELECT set_config('synchronous_commit', 'off', true)
  )
  SELECT hit.count, GREATEST(0, ceil(extract(epoch FROM hit.expires_at - now()) * 1000))::int AS ttl_ms FROM hit CROSS JOIN unsynced`;

/** A window that ended is never counted in again (the next request starts a new one): its row can go. */
const sweepStatement = `DELETE FROM address_counters WHERE expires_at < now()`;

/** Expired counters are deleted at most this often per process: housekeeping, nothing reads them. */
const sweepEveryMs = 60_000;

export function createAddressCounters(db: Queryable): AddressCounters {
  const sweeps = housekeeping(sweepEveryMs, () => db.query(sweepStatement));
  return {
    async hit(key, windowMs) {
      const { rows } = await db.query(hitStatement, [key, Math.max(1, Math.round(windowMs))]);
      sweeps.poke();
      return { count: rows[0].count as number, ttlMs: rows[0].ttl_ms as number };
    },
    close: () => sweeps.settled(),
  };
}
