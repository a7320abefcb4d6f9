import type { Queryable } from '../../db/database';
import type { Caller } from '../identity/actors';
import { AppError } from '../kit/errors';
import { authenticate, bearerLookup, noteUse, unauthorized } from '../identity/authenticate';
import type { Interface } from '../gate/contract';

// The plan's limits, counted in PostgreSQL so that every api process shares one count and concurrent requests
// are counted exactly: each request adds one to its counters and learns the new counts in the same statement.

export type LimitName = 'per_minute' | 'daily' | 'key_daily';

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
  /** The key's own requests in the organization's local day, when the organization gave it a budget. */
  keyDaily?: LimitState;
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
  /**
   * Authenticates a bearer token (401 when it does not) and counts its request over an interface, in one
   * statement; the verdict is undefined when limits are off. `audience` is the resource the request is for (an
   * OAuth access token must have been issued for it).
   */
  admit(authorization: string | undefined, via: Interface, audience?: string): Promise<{ caller: Caller; verdict: RequestVerdict | undefined }>;
  /** The organization's budget today, as counted so far (this request included when it was counted). */
  dailyUsage(caller: Caller): Promise<DailyUsage>;
  /** Waits for a sweep of old counters that is under way. */
  close(): Promise<void>;
  /** Where "now" comes from: what else is counted by the organization's day (a key's write caps) takes it from here. */
  readonly clock: () => Date;
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

/** The counter of a key's requests in the organization's local day (its period is the local date). */
const keyDayScopePrefix = 'keyday:';

// The local day and its end are computed by PostgreSQL from the organization's IANA zone, so a day of 23 or 25
// hours (a daylight-saving change) ends at its real midnight.
export const localDate = (now: string, zone: string) => `to_char(${now}::timestamptz AT TIME ZONE ${zone}::text, 'YYYY-MM-DD')`;
export const nextLocalMidnight = (now: string, zone: string) =>
  `(date_trunc('day', ${now}::timestamptz AT TIME ZONE ${zone}::text) + interval '1 day') AT TIME ZONE ${zone}::text`;

/**
 * One statement authenticates the request and counts it: the bearer token's lookup (`bearerLookup`) is its first
 * CTE, and the counters are written only for a caller it found, so a request that does not authenticate (401) is
 * counted nowhere. One round trip to PostgreSQL for both, where there were two.
 *
 * It commits without waiting for the WAL to reach the disk (synchronous_commit off for this statement's own
 * transaction, set by the statement itself: no extra round trip). That wait was most of the limits' cost on a
 * read. The counts stay exact under concurrency (row locks, as before); a crash of the PostgreSQL server (not a
 * clean restart) may forget the counts of its last fraction of a second (up to three times wal_writer_delay,
 * 200 ms by default), so a few requests of that moment go uncounted. Nothing else is written this way, and the
 * statement must run on its own, never inside a transaction of the caller's.
 *
 * The counters are the token's minute (first, so concurrent statements lock rows in the same order), the key's
 * own day (only for a key the organization gave a budget: nothing is written for the others) and the
 * organization's day. Each upsert returns the count after this request, so of 200 concurrent requests
 * against a ceiling of 60 exactly 60 see a count within it. A request refused by its token's minute ceiling
 * spends neither day, and one refused by its key's budget does not spend the organization's day (the rows it
 * does not count read the day as it stands): one runaway token cannot lock out its organization. A day row's end
 * follows the organization's zone as it is now (the zone may have changed since the row was made).
 *
 * Parameters: the lookup's $1 and $2, then $3 the request's time, and the prefixes of the scopes of the minute's
 * counter ($4, the interface's: `rest:`) and the key's day ($5, `keyday:`), which end with the caller's
 * `credential_id` (a key, whatever token a connected client holds now, or a personal token).
 */
const buildAdmitStatement = (lookup: string, perMinuteCeiling: 'rest_per_minute' | 'mcp_per_minute') => `
  WITH caller AS MATERIALIZED (${lookup}), minute AS (
    INSERT INTO usage_counters AS c (scope, period, count, expires_at)
    SELECT $4 || caller.credential_id, to_char($3::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI'), 1, date_trunc('minute', $3::timestamptz, 'UTC') + interval '1 minute' FROM caller
    ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1
    RETURNING c.count, c.expires_at
  ), keyday AS (
    INSERT INTO usage_counters AS c (scope, period, count, expires_at)
    SELECT $5 || caller.credential_id, ${localDate('$3', 'caller.timezone')}, 1, ${nextLocalMidnight('$3', 'caller.timezone')}
    FROM caller CROSS JOIN minute WHERE caller.daily_request_budget IS NOT NULL AND minute.count <= caller.${perMinuteCeiling}
    ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1, expires_at = GREATEST(c.expires_at, EXCLUDED.expires_at)
    RETURNING c.count, c.expires_at
  ), day AS (
    INSERT INTO usage_counters AS c (scope, period, count, expires_at)
    SELECT 'day:' || caller.id, ${localDate('$3', 'caller.timezone')}, 1, ${nextLocalMidnight('$3', 'caller.timezone')}
    FROM caller CROSS JOIN minute LEFT JOIN keyday ON true
    WHERE minute.count <= caller.${perMinuteCeiling} AND (keyday.count IS NULL OR keyday.count <= caller.daily_request_budget)
    ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1, expires_at = GREATEST(c.expires_at, EXCLUDED.expires_at)
    RETURNING c.count, c.expires_at
  ), unsynced AS (
    SELECT set_config('synchronous_commit', 'off', true)
  )
  SELECT caller.*, minute.count AS minute_used, minute.expires_at AS minute_resets_at,
    ${localDate('$3', 'caller.timezone')} AS day_period,
    COALESCE(day.count, (SELECT u.count FROM usage_counters u WHERE u.scope = 'day:' || caller.id AND u.period = ${localDate('$3', 'caller.timezone')}), 0) AS day_used,
    COALESCE(day.expires_at, ${nextLocalMidnight('$3', 'caller.timezone')}) AS day_resets_at,
    CASE WHEN caller.daily_request_budget IS NOT NULL THEN
      COALESCE(keyday.count, (SELECT u.count FROM usage_counters u WHERE u.scope = $5 || caller.credential_id AND u.period = ${localDate('$3', 'caller.timezone')}), 0) END AS key_day_used,
    CASE WHEN caller.daily_request_budget IS NOT NULL THEN
      COALESCE(keyday.expires_at, ${nextLocalMidnight('$3', 'caller.timezone')}) END AS key_day_resets_at
  FROM caller CROSS JOIN minute CROSS JOIN unsynced LEFT JOIN day ON true LEFT JOIN keyday ON true`;

/** The statements by lookup and interface, built once: two lookups, two ceilings. */
const admitStatements = new Map<string, string>();
function admitStatement(lookup: string, perMinuteCeiling: 'rest_per_minute' | 'mcp_per_minute'): string {
  const key = `${perMinuteCeiling}:${lookup}`;
  let statement = admitStatements.get(key);
  if (!statement) admitStatements.set(key, (statement = buildAdmitStatement(lookup, perMinuteCeiling)));
  return statement;
}

const usageStatement = `
  SELECT ${localDate('$1', '$2')} AS period, ${nextLocalMidnight('$1', '$2')} AS resets_at,
         COALESCE((SELECT count FROM usage_counters WHERE scope = $3 AND period = ${localDate('$1', '$2')}), 0) AS used`;

/**
 * Counters past their window are never read again. Neither the request's clock nor the database's may still be
 * inside the window (tests move the clock; api hosts' clocks drift), hence the earlier of the two and a margin.
 */
const sweepStatement = `DELETE FROM usage_counters WHERE expires_at < LEAST($1::timestamptz, now()) - interval '5 minutes'`;

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

    async admit(authorization, via, audience) {
      if (!enabled) return { caller: await authenticate(db, authorization, audience), verdict: undefined };
      const lookup = bearerLookup(authorization, audience);
      const now = clock();
      const statement = admitStatement(lookup.sql, via === 'rest' ? 'rest_per_minute' : 'mcp_per_minute');
      const { rows } = await db.query(statement, [...lookup.params, now, `${via}:`, keyDayScopePrefix]);
      const row = rows[0];
      if (!row) throw unauthorized();
      noteUse(db, lookup, row);
      sweepNow(now);
      const caller = lookup.callerOf(row);
      const perMinuteCeiling = via === 'rest' ? caller.plan.restPerMinute : caller.plan.mcpPerMinute;
      const limit = caller.plan.dailyBudget;
      const day = { used: row.day_used as number, resetsAt: row.day_resets_at as Date };
      const today: DailyUsage = { date: row.day_period as string, limit, used: day.used, left: Math.max(0, limit - day.used), resetsAt: day.resetsAt };
      const perMinute = state('per_minute', perMinuteCeiling, { used: row.minute_used as number, resetsAt: row.minute_resets_at as Date });
      const keyBudget = row.daily_request_budget as number | null;
      const keyDaily = keyBudget === null ? undefined : state('key_daily', keyBudget, { used: row.key_day_used as number, resetsAt: row.key_day_resets_at as Date });
      return { caller, verdict: verdict(now, perMinute, state('daily', limit, day), keyDaily, today) };
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

    clock,
  };
}

function state(name: LimitName, limit: number, counted: { used: number; resetsAt: Date }): LimitState {
  return { name, limit, used: counted.used, remaining: Math.max(0, limit - counted.used), resetsAt: counted.resetsAt };
}

function verdict(now: Date, perMinute: LimitState, daily: LimitState, keyDaily: LimitState | undefined, today: DailyUsage): RequestVerdict {
  const key = keyDaily ? [keyDaily] : [];
  const exceeded = [perMinute, ...key, daily].filter((limit) => limit.used > limit.limit);
  // Refused: the limit to wait for is the one that resets last (of two days, the key's). Admitted: the one with the
  // fewest requests left (on a tie, the key's day, then the organization's).
  const binding = exceeded.length
    ? exceeded.reduce((a, b) => (b.resetsAt > a.resetsAt ? b : a))
    : [...key, daily, perMinute].reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const resetSeconds = Math.max(1, Math.ceil((binding.resetsAt.getTime() - now.getTime()) / 1000));
  return { admitted: exceeded.length === 0, perMinute, daily, keyDaily, binding, today, resetSeconds };
}

/** The refusal of a request over a limit: which limit, its ceiling, and when to retry, in words and in `details`. */
export function rateLimitedError(caller: Caller, via: Interface, refused: RequestVerdict): AppError {
  const { binding, resetSeconds } = refused;
  const resetsAt = binding.resetsAt.toISOString();
  const plan = caller.plan.name;
  const message =
    binding.name === 'per_minute'
      ? `This token has used its ${binding.limit} ${via === 'rest' ? 'REST' : 'MCP'} requests for this minute (the ${plan} plan's ceiling); retry in ${resetSeconds} s, at ${resetsAt}`
      : binding.name === 'key_daily'
        ? `This key has used its own daily budget of ${binding.limit} requests (REST and MCP together, set by the organization); it resets at midnight in ${caller.organization.timezone}, ${resetsAt}, in ${resetSeconds} s`
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
