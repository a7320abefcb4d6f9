import type { Queryable } from '../../db/database';
import type { Caller } from '../identity/actors';
import { AppError } from '../kit/errors';
import type { Interface } from '../gate/contract';

// The plan's limits, counted in PostgreSQL so that every api process shares one count and concurrent requests
// are counted exactly: each request adds one to its counters and learns the new counts in the same statement.

export type LimitName = 'per_minute' | 'daily';

export interface LimitState {
  name: LimitName;
  /** The ceiling of this window. */
  limit: number;
  /** Requests counted in this window so far, this one and refused ones included. */
  used: number;
  remaining: number;
  resetsAt: Date;
}

export interface RequestVerdict {
  admitted: boolean;
  /** The token's requests over this interface in the current UTC minute. */
  perMinute: LimitState;
  /** The organization's requests, REST and MCP together, in its current local day. */
  daily: LimitState;
  /** What the rate-limit headers tell: the limit that refused the request, else the one nearest exhaustion. */
  binding: LimitState;
  /** The organization's day as this request left it: what discovery reports, with no second look. */
  today: DailyUsage;
  /** Whole seconds until `binding` resets, at least 1. */
  resetSeconds: number;
}

export interface DailyUsage {
  /** The organization's local date, YYYY-MM-DD. */
  date: string;
  limit: number;
  used: number;
  left: number;
  /** The next midnight in the organization's time zone. */
  resetsAt: Date;
}

export interface RequestLimits {
  readonly enabled: boolean;
  /** Counts one request of the caller over an interface; undefined when limits are off. */
  count(caller: Caller, via: Interface): Promise<RequestVerdict | undefined>;
  /** The organization's budget today, as counted so far (this request included when it was counted). */
  dailyUsage(caller: Caller): Promise<DailyUsage>;
  /** Waits for a sweep of old counters that is under way. */
  close(): Promise<void>;
}

export interface RequestLimitsOptions {
  db: Queryable;
  /** Where "now" comes from: the minute and the local day are taken from it (tests move it). */
  clock?: () => Date;
  /** False only for the benchmark's comparison run: nothing is counted and nothing refused. */
  enabled?: boolean;
}

/** Expired counters are deleted at most this often per process; they are never read again, so this is housekeeping. */
const sweepEveryMs = 60_000;

// The local day and its end are computed by PostgreSQL from the organization's IANA zone, so a day of 23 or 25
// hours (a daylight-saving change) ends at its real midnight.
const localDate = (now: string, zone: string) => `to_char(${now}::timestamptz AT TIME ZONE ${zone}::text, 'YYYY-MM-DD')`;
const nextLocalMidnight = (now: string, zone: string) =>
  `(date_trunc('day', ${now}::timestamptz AT TIME ZONE ${zone}::text) + interval '1 day') AT TIME ZONE ${zone}::text`;

/**
 * One statement, both counters, committed without waiting for the WAL to reach the disk (synchronous_commit off
 * for this statement's own transaction, set by the statement itself: no second round trip). That wait was most of
 * the limits' cost on a read. The counts stay exact under concurrency (row locks, as before); a crash of the
 * PostgreSQL server (not a clean restart) may forget the counts of its last fraction of a second (up to three
 * times wal_writer_delay, 200 ms by default), so a few requests of that moment go uncounted. Nothing else is
 * written this way, and the statement must run on its own, never inside a transaction of the caller's.
 *
 * The counters are the token's minute (first, so concurrent statements lock rows in the same order) and the
 * organization's day. Each upsert returns the count after this request, so of 200 concurrent requests
 * against a ceiling of 60 exactly 60 see a count within it. A request refused by its token's minute ceiling
 * does not spend the organization's day: one runaway token cannot lock out its organization. A day row's end
 * follows the organization's zone as it is now (the zone may have changed since the row was made).
 */
const countStatement = `
  WITH minute AS (
    INSERT INTO usage_counters AS c (scope, period, count, expires_at)
    VALUES ($2, to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI'), 1, date_trunc('minute', $1::timestamptz, 'UTC') + interval '1 minute')
    ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1
    RETURNING c.scope, c.period, c.count, c.expires_at
  ), day AS (
    INSERT INTO usage_counters AS c (scope, period, count, expires_at)
    SELECT $3, ${localDate('$1', '$4')}, 1, ${nextLocalMidnight('$1', '$4')} FROM minute WHERE minute.count <= $5
    ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1, expires_at = GREATEST(c.expires_at, EXCLUDED.expires_at)
    RETURNING c.scope, c.period, c.count, c.expires_at
  ), unsynced AS (
    SELECT set_config('synchronous_commit', 'off', true)
  )
  SELECT scope, period, count, expires_at FROM minute CROSS JOIN unsynced
  UNION ALL SELECT scope, period, count, expires_at FROM day
  UNION ALL
  SELECT $3, ${localDate('$1', '$4')}, COALESCE((SELECT count FROM usage_counters WHERE scope = $3 AND period = ${localDate('$1', '$4')}), 0), ${nextLocalMidnight('$1', '$4')}
  WHERE NOT EXISTS (SELECT 1 FROM day)`;

const usageStatement = `
  SELECT ${localDate('$1', '$2')} AS period, ${nextLocalMidnight('$1', '$2')} AS resets_at,
         COALESCE((SELECT count FROM usage_counters WHERE scope = $3 AND period = ${localDate('$1', '$2')}), 0) AS used`;

/**
 * Counters past their window are never read again. Neither the request's clock nor the database's may still be
 * inside the window (tests move the clock; api hosts' clocks drift), hence the earlier of the two and a margin.
 */
const sweepStatement = `DELETE FROM usage_counters WHERE expires_at < LEAST($1::timestamptz, now()) - interval '5 minutes'`;

const tokenIdOf = (caller: Caller) => (caller.actor.kind === 'api_key' ? caller.actor.keyId : caller.actor.credential.id);

export function createRequestLimits({ db, clock = () => new Date(), enabled = true }: RequestLimitsOptions): RequestLimits {
  let lastSweep = 0;
  let sweeping: Promise<void> | undefined;

  const sweepNow = (now: Date) => {
    if (sweeping || Date.now() - lastSweep < sweepEveryMs) return;
    lastSweep = Date.now();
    sweeping = db
      .query(sweepStatement, [now])
      .then(() => undefined, () => undefined)
      .finally(() => {
        sweeping = undefined;
      });
  };

  return {
    enabled,

    async count(caller, via) {
      if (!enabled) return undefined;
      const now = clock();
      const minuteScope = `${via}:${tokenIdOf(caller)}`;
      const dayScope = `day:${caller.organization.id}`;
      const perMinuteCeiling = via === 'rest' ? caller.plan.restPerMinute : caller.plan.mcpPerMinute;
      const { rows } = await db.query(countStatement, [now, minuteScope, dayScope, caller.organization.timezone, perMinuteCeiling]);
      sweepNow(now);
      const row = (scope: string) => {
        const found = rows.find((r) => r.scope === scope);
        if (!found) throw new Error(`the usage counter ${scope} was not returned`);
        return { used: found.count as number, resetsAt: found.expires_at as Date, period: found.period as string };
      };
      const day = row(dayScope);
      const limit = caller.plan.dailyBudget;
      const today: DailyUsage = { date: day.period, limit, used: day.used, left: Math.max(0, limit - day.used), resetsAt: day.resetsAt };
      return verdict(now, state('per_minute', perMinuteCeiling, row(minuteScope)), state('daily', limit, day), today);
    },

    async dailyUsage(caller) {
      const { rows } = await db.query(usageStatement, [clock(), caller.organization.timezone, `day:${caller.organization.id}`]);
      const { period, resets_at, used } = rows[0];
      const limit = caller.plan.dailyBudget;
      return { date: period, limit, used, left: Math.max(0, limit - used), resetsAt: resets_at };
    },

    async close() {
      await sweeping;
    },
  };
}

function state(name: LimitName, limit: number, counted: { used: number; resetsAt: Date }): LimitState {
  return { name, limit, used: counted.used, remaining: Math.max(0, limit - counted.used), resetsAt: counted.resetsAt };
}

function verdict(now: Date, perMinute: LimitState, daily: LimitState, today: DailyUsage): RequestVerdict {
  const exceeded = [perMinute, daily].filter((limit) => limit.used > limit.limit);
  // Refused: the limit to wait for is the one that resets last. Admitted: the one with the fewest requests left.
  const binding = exceeded.length
    ? exceeded.reduce((a, b) => (b.resetsAt > a.resetsAt ? b : a))
    : daily.remaining <= perMinute.remaining
      ? daily
      : perMinute;
  const resetSeconds = Math.max(1, Math.ceil((binding.resetsAt.getTime() - now.getTime()) / 1000));
  return { admitted: exceeded.length === 0, perMinute, daily, binding, today, resetSeconds };
}

/** The refusal of a request over a limit: which limit, its ceiling, and when to retry, in words and in `details`. */
export function rateLimitedError(caller: Caller, via: Interface, refused: RequestVerdict): AppError {
  const { binding, resetSeconds } = refused;
  const resetsAt = binding.resetsAt.toISOString();
  const plan = caller.plan.name;
  const message =
    binding.name === 'per_minute'
      ? `This token has used its ${binding.limit} ${via === 'rest' ? 'REST' : 'MCP'} requests for this minute (the ${plan} plan's ceiling); retry in ${resetSeconds} s, at ${resetsAt}`
      : `The organization has used its daily budget of ${binding.limit} requests (REST and MCP together, ${plan} plan); it resets at midnight in ${caller.organization.timezone}, ${resetsAt}, in ${resetSeconds} s`;
  return new AppError('rate_limited', message, {
    limit: binding.name,
    ceiling: binding.limit,
    interface: via,
    plan,
    retry_after_seconds: resetSeconds,
    resets_at: resetsAt,
  });
}
