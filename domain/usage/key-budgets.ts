import type { Queryable } from '../../db/database';
import type { Caller } from '../identity/actors';
import { AppError } from '../kit/errors';
import { localDate, nextLocalMidnight } from './limits';

// Budgets per key: an organization may give a key its own daily request budget (counted by the request limits'
// statement, see limits.ts) and its own daily caps of writes submitted, per gated-write operation (counted here).
// Both count in usage_counters by the organization's local day, exactly under concurrency, like its own budget.

/** The counter of a key's writes of one operation in the organization's local day. */
export const keyOperationScope = (keyId: string, operation: string) => `keyop:${keyId}:${operation}`;

/**
 * Counts one write and answers the count after it: of 200 writes submitted at once against a cap of 20, exactly 20
 * see a count within it (the row lock orders them). Refused writes count too, as refused requests do.
 */
const countWriteStatement = `
  INSERT INTO usage_counters AS c (scope, period, count, expires_at)
  VALUES ($1, ${localDate('$2', '$3')}, 1, ${nextLocalMidnight('$2', '$3')})
  ON CONFLICT (scope, period) DO UPDATE SET count = c.count + 1, expires_at = GREATEST(c.expires_at, EXCLUDED.expires_at)
  RETURNING c.count, c.expires_at`;

/**
 * Counts a write an API key submits against its cap for the operation, whatever the policy will decide; the
 * refusal when the count passes the cap (429 rate_limited, `key_operation_daily`), else undefined. A key without a
 * cap for the operation is counted nowhere.
 */
export async function spendWriteCap(db: Queryable, caller: Caller, operation: string, now: Date): Promise<AppError | undefined> {
  if (caller.actor.kind !== 'api_key') return undefined;
  const cap = caller.actor.writeCaps[operation];
  if (cap === undefined) return undefined;
  const { organization } = caller;
  const { rows } = await db.query(countWriteStatement, [keyOperationScope(caller.actor.keyId, operation), now, organization.timezone]);
  const used = rows[0].count as number;
  if (used <= cap) return undefined;
  const resetsAt = (rows[0].expires_at as Date).toISOString();
  const retryAfter = Math.max(1, Math.ceil((Date.parse(resetsAt) - now.getTime()) / 1000));
  return new AppError(
    'rate_limited',
    `This key has used its daily cap of ${cap} ${operation} writes (set by the organization); nothing was submitted. It resets at midnight in ${organization.timezone}, ${resetsAt}, in ${retryAfter} s`,
    { limit: 'key_operation_daily', operation, cap, retry_after_seconds: retryAfter, resets_at: resetsAt },
  );
}

/** A key's budgets and what it has used of them today. */
export interface KeyBudgetUse {
  /** Requests counted today (refused ones included) against the key's own budget; null: it has none. */
  requests: { used: number; budget: number } | null;
  /** Writes submitted today, by capped operation (refused ones included). */
  writes: { operation: string; used: number; cap: number }[];
}

/**
 * The organization's keys that have budgets, each with its use today (the scopes of `keyDayScope` and
 * `keyOperationScope`); keys without one are not listed.
 */
export async function keyBudgetsToday(db: Queryable, organization: { id: string; timezone: string }, now: Date): Promise<Map<string, KeyBudgetUse>> {
  const { rows } = await db.query(
    `SELECT k.id, k.daily_request_budget,
            (SELECT u.count FROM usage_counters u WHERE u.scope = 'keyday:' || k.id AND u.period = ${localDate('$2', '$3')}) AS requests,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('operation', cap.key, 'cap', cap.value, 'used', COALESCE(u.count, 0)) ORDER BY cap.key)
                      FROM jsonb_each(k.write_caps) cap
                      LEFT JOIN usage_counters u ON u.scope = 'keyop:' || k.id || ':' || cap.key AND u.period = ${localDate('$2', '$3')}), '[]') AS writes
     FROM api_keys k
     WHERE k.org_id = $1 AND (k.daily_request_budget IS NOT NULL OR k.write_caps <> '{}'::jsonb)`,
    [organization.id, now, organization.timezone],
  );
  return new Map(
    rows.map((row) => [
      row.id as string,
      {
        requests: row.daily_request_budget === null ? null : { used: (row.requests as number | null) ?? 0, budget: row.daily_request_budget as number },
        writes: row.writes as KeyBudgetUse['writes'],
      },
    ]),
  );
}
