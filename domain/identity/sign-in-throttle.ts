import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { housekeeping } from '../kit/housekeeping';
import { AppError } from '../kit/errors';

// Password guessing is slowed per account and address, not stopped per account: a stranger's failures make that
// stranger wait, never the person signing in from their own address. Each attempt is counted before its password is
// checked (a burst of parallel guesses cannot outrun the count), an attempt during a wait is refused before any
// hashing, and failures are forgotten with time. Over every address together an account's failures grow a wait of
// their own, more slowly, bounding guesses spread over many addresses; it spares addresses that signed the account in
// before, and a success forgives it. Passkeys are never throttled by passwords.
//
// The rows are named by digests of the organization's slug and the email as typed (and the address), so a name that
// matches nobody is throttled exactly as one that does: neither the answers nor their timing tell who exists.

/** How failures turn into waits: `free` failures cost nothing, then each waits twice the last, up to `maxWaitMs`. */
export interface Backoff {
  free: number;
  firstWaitMs: number;
  maxWaitMs: number;
  /** One failure is forgotten each time this passes without another. */
  forgetOneEveryMs: number;
}

export interface SignInThrottle {
  /** Failed attempts at one account from one address. */
  perAddress: Backoff;
  /** Failed attempts at one account from every address together, which addresses the account signed in from skip. */
  perAccount: Backoff;
  /** How long an address that signed the account in is spared the account's wait. */
  knownAddressMs: number;
}

const minute = 60_000;

/**
 * From one address: 5 failures free, then a wait of 1 s doubling up to 15 minutes (about a hundred guesses a day
 * once it is reached), one failure forgotten every 15 minutes. From every address together: 20 free, then 1 s
 * doubling up to 2 minutes, one forgotten every 5 minutes. An address that signed in is spared the latter for 30 days.
 */
export const signInThrottle: SignInThrottle = {
  perAddress: { free: 5, firstWaitMs: 1000, maxWaitMs: 15 * minute, forgetOneEveryMs: 15 * minute },
  perAccount: { free: 20, firstWaitMs: 1000, maxWaitMs: 2 * minute, forgetOneEveryMs: 5 * minute },
  knownAddressMs: 30 * 24 * 60 * minute,
};

/** The rows of one attempt: its account and address, and its account over every address. */
export interface ThrottleKeys {
  account: Buffer;
  pair: Buffer;
}

/** An account is the organization's slug and the email as typed (trimmed, lower-case), whether or not it exists. */
export function throttleKeys(account: { orgSlug: string; email: string }, address: string): ThrottleKeys {
  const name = `${account.orgSlug.trim().toLowerCase()}\n${account.email.trim().toLowerCase()}`;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return { account: digest(`account\n${name}`), pair: digest(`address\n${name}\n${address}`) };
}

export type Claim =
  /** Heard: the failures counted with it, and whether it is the one that started a wait (the audit trail says so). */
  | { heard: true; failures: { pair: number; account: number }; waitStarted: { pair: boolean; account: boolean } }
  | { heard: false; retryAfterMs: number };

interface Row {
  key: Buffer;
  failures: number;
  last_failure_at: Date | null;
  wait_until: Date | null;
  known_until: Date | null;
  expires_at: Date;
  now: Date;
}

/** Failures still remembered at `now`, one forgotten each `forgetOneEveryMs` since the last. */
export function remembered(row: { failures: number; last_failure_at: Date | null }, backoff: Backoff, now: Date): number {
  if (!row.last_failure_at) return 0;
  const forgotten = Math.floor((now.getTime() - row.last_failure_at.getTime()) / backoff.forgetOneEveryMs);
  return Math.max(0, row.failures - Math.max(0, forgotten));
}

/** The wait after `failures` failures: none while they are free, then the first wait doubling, at most the longest. */
export function waitAfter(failures: number, backoff: Backoff): number {
  if (failures <= backoff.free) return 0;
  return Math.min(backoff.firstWaitMs * 2 ** (failures - backoff.free - 1), backoff.maxWaitMs);
}

const waiting = (row: Row) => (row.wait_until && row.wait_until > row.now ? row.wait_until.getTime() - row.now.getTime() : 0);

/**
 * Counts an attempt as a failure before its password is checked, unless a wait refuses it unheard. The account's
 * wait is skipped for an address that signed the account in, and when `accountWait` is false (a signed-in person
 * proving their password again: no stranger). Both rows are locked for the moment it takes, account first.
 */
export async function claimAttempt(db: Database, keys: ThrottleKeys, throttle: SignInThrottle, options: { accountWait: boolean }): Promise<Claim> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `INSERT INTO sign_in_throttles (key, expires_at) VALUES ($1, now() + interval '1 day'), ($2, now() + interval '1 day')
       ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key
       RETURNING key, failures, last_failure_at, wait_until, known_until, expires_at, clock_timestamp() AS now`,
      [keys.account, keys.pair],
    );
    const account = (rows as Row[]).find((row) => row.key.equals(keys.account))!;
    const pair = (rows as Row[]).find((row) => row.key.equals(keys.pair))!;
    // The time once both rows are ours, not the transaction's start: an attempt that waited for another's locks
    // must see that one's failure as past, never as a moment still to come.
    const now = pair.now > account.now ? pair.now : account.now;
    const spared = !options.accountWait || (pair.known_until !== null && pair.known_until > now);
    const retryAfterMs = Math.max(waiting(pair), spared ? 0 : waiting(account));
    if (retryAfterMs > 0) return { heard: false, retryAfterMs };

    const counted: { failures: number; waitStarted: boolean }[] = [];
    for (const [row, backoff] of [
      [pair, throttle.perAddress],
      [account, throttle.perAccount],
    ] as const) {
      const failures = remembered(row, backoff, now) + 1;
      const waitMs = waitAfter(failures, backoff);
      // Kept until every failure would be forgotten (and an address's standing, while it lasts).
      const keepMs = failures * backoff.forgetOneEveryMs + waitMs;
      await tx.query(
        `UPDATE sign_in_throttles SET failures = $2, last_failure_at = $5,
           wait_until = CASE WHEN $3::float8 > 0 THEN $5::timestamptz + make_interval(secs => $3::float8 / 1000) END,
           expires_at = GREATEST($5::timestamptz + make_interval(secs => $4::float8 / 1000), known_until)
         WHERE key = $1`,
        [row.key, failures, waitMs, keepMs, now],
      );
      counted.push({ failures, waitStarted: waitMs > 0 && waitAfter(failures - 1, backoff) === 0 });
    }
    const [pairCount, accountCount] = counted as [(typeof counted)[0], (typeof counted)[0]];
    return {
      heard: true,
      failures: { pair: pairCount.failures, account: accountCount.failures },
      waitStarted: { pair: pairCount.waitStarted, account: accountCount.waitStarted },
    };
  });
}

/**
 * The right password: the attempt was no failure. The address's failures and the account's are forgiven, and the
 * address is spared the account's wait for a while (it signed the account in). One row per statement, so that it
 * never holds one row's lock while it waits for the other's: claimAttempt takes both (account first), and a sign-in
 * forgiven while another one of the same name and address is claimed must not deadlock with it.
 */
export async function forgiveAttempt(db: Queryable, keys: ThrottleKeys, throttle: SignInThrottle): Promise<void> {
  await db.query(`UPDATE sign_in_throttles SET failures = 0, last_failure_at = NULL, wait_until = NULL, expires_at = GREATEST(expires_at, known_until, now()) WHERE key = $1`, [
    keys.account,
  ]);
  await db.query(
    `UPDATE sign_in_throttles SET failures = 0, last_failure_at = NULL, wait_until = NULL,
       known_until = now() + make_interval(secs => $2::float8 / 1000), expires_at = now() + make_interval(secs => $2::float8 / 1000)
     WHERE key = $1`,
    [keys.pair, throttle.knownAddressMs],
  );
}

/** Rows whose failures are all forgotten and whose address standing ended. */
const sweepStatement = `DELETE FROM sign_in_throttles WHERE expires_at < now()`;
let sweepDb: Queryable | undefined;
const sweeps = housekeeping(60_000, async () => sweepDb?.query(sweepStatement));

/** Deletes rows nothing remembers any more, at most once a minute per process, without holding up the sign-in. */
export function sweepThrottles(db: Queryable): void {
  sweepDb = db;
  sweeps.poke();
}

/**
 * The refusal of an attempt during a wait, the same whoever the name is (or is not): it says when to try again, and
 * nothing of a lock or an account.
 */
export function throttledError(retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError('rate_limited', `Too many failed sign-ins with this name from this address; try again in ${seconds} s`, { retry_after_seconds: seconds });
}
