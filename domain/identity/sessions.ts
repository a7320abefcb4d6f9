import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import type { Caller, Role } from './actors';
import { organizationColumns, organizationFromRow } from './organizations';
import { planColumns, planFromRow } from './plans';
import { verifyPassword } from './passwords';
import { digestToken, issueToken, parseToken } from './tokens';

/** How long a console session lives: `idleMs` since its last request, `lifetimeMs` since sign-in, whichever ends first. */
export interface SessionRules {
  idleMs: number;
  lifetimeMs: number;
  /** How failed sign-ins are slowed and locked out; `signInThrottle` unless a test needs it quicker. */
  throttle?: SignInThrottle;
}

/**
 * Failed sign-ins: after `slowAfter` in a row each further one is answered more slowly (from `firstDelayMs`,
 * doubling, at most `maxDelayMs`), and at `lockAfter` the account is locked for `lockMs` (the right password
 * included). A success starts the count again.
 */
export interface SignInThrottle {
  slowAfter: number;
  lockAfter: number;
  lockMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const signInThrottle: SignInThrottle = { slowAfter: 3, lockAfter: 10, lockMs: 15 * 60 * 1000, firstDelayMs: 250, maxDelayMs: 4_000 };

export interface Session {
  id: string;
  /** The signed-in person's name, for the console's frame. */
  personName: string | null;
  /** Sent back in the X-CSRF-Token header with every state-changing console call. */
  csrfToken: string;
  expiresAt: string;
}

const wrongCredentials = () => new AppError('unauthorized', 'The organization, email or password is not right');

/**
 * Signs a person in with their organization's slug, email and password; answers the session's cookie token,
 * shown to the browser once. Unknown people, wrong passwords and deactivated accounts get the same answer, in
 * the same time, and are slowed and locked alike.
 */
export async function signIn(
  db: Database,
  input: { orgSlug: string; email: string; password: string; userAgent?: string },
  policy: SessionRules,
): Promise<{ token: string; session: Session; caller: Caller }> {
  const throttle = policy.throttle ?? signInThrottle;
  const orgSlug = input.orgSlug.trim().toLowerCase();
  const email = input.email.trim().toLowerCase();
  const { rows } = await db.query(
    `SELECT u.id AS user_id, u.org_id, u.password_hash, u.deactivated_at FROM users u JOIN organizations o ON o.id = u.org_id
     WHERE o.slug = $1 AND u.email = $2`,
    [orgSlug, email],
  );
  const person = rows[0] as { user_id: string; org_id: string; password_hash: string | null; deactivated_at: Date | null } | undefined;
  // Each attempt is counted before the password is checked, so that a burst of guesses cannot outrun the lock.
  const attempt = person ? await claimAttempt(db, person.user_id, throttle) : strangers.claim(`${orgSlug} ${email}`, throttle);
  if (attempt.lockedUntil) {
    await verifyPassword(input.password, null);
    throw lockedError(attempt.lockedUntil);
  }
  const matches = await verifyPassword(input.password, person?.password_hash ?? null);
  if (!person || !matches || person.deactivated_at) {
    if (person) await recordLock(db, { userId: person.user_id, orgId: person.org_id }, attempt, throttle);
    await sleep(failureDelayMs(attempt.failures, throttle));
    throw wrongCredentials();
  }

  return startSession(db, { userId: person.user_id, orgId: person.org_id, userAgent: input.userAgent }, policy);
}

/**
 * A session for a person who proved who they are (a password, a passkey): their failed sign-ins forgiven, the
 * session stored by its secret's digest, and `person.signed_in` recorded (with `audit`: how, when not a password).
 */
export async function startSession(
  db: Database,
  person: { userId: string; orgId: string; userAgent?: string },
  policy: SessionRules,
  audit: Record<string, unknown> = {},
): Promise<{ token: string; session: Session; caller: Caller }> {
  const id = newId('ses');
  const { token, digest } = issueToken('session', id);
  const csrfToken = randomBytes(32).toString('base64url');
  await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [person.userId]);
    await tx.query(
      `INSERT INTO sessions (id, user_id, org_id, secret_digest, csrf_token, expires_at, user_agent)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6 / 1000.0), $7)`,
      [id, person.userId, person.orgId, digest, csrfToken, policy.lifetimeMs, person.userAgent?.slice(0, 300) ?? null],
    );
    await recordAudit(tx, person.orgId, { type: 'person.signed_in', actor: { type: 'user', id: person.userId }, resourceId: person.userId, data: { session: id, ...audit } });
  });
  const resumed = await resumeSession(db, token, policy);
  if (!resumed) throw new AppError('unavailable', 'The session could not be started; try again');
  return { token, ...resumed };
}

/**
 * A signed-in person proving themselves again with their password, for a change a session alone must not make
 * (adding or removing a passkey: else a script holding a stolen cookie could register its own key and sign
 * approvals as the person). Counted, slowed and locked with their sign-ins, so that a stolen session cannot guess
 * at the password any faster than a stranger at the sign-in page; the right password starts the count again.
 */
export async function confirmPassword(db: Database, person: { userId: string; orgId: string }, password: string, policy: SessionRules): Promise<void> {
  const throttle = policy.throttle ?? signInThrottle;
  const attempt = await claimAttempt(db, person.userId, throttle);
  if (attempt.lockedUntil) {
    await verifyPassword(password, null);
    throw lockedError(attempt.lockedUntil);
  }
  const { rows } = await db.query('SELECT password_hash FROM users WHERE id = $1 AND org_id = $2', [person.userId, person.orgId]);
  if (!(await verifyPassword(password, (rows[0]?.password_hash as string | null | undefined) ?? null))) {
    await recordLock(db, person, attempt, throttle);
    await sleep(failureDelayMs(attempt.failures, throttle));
    throw new AppError('validation_failed', 'That is not your current password: nothing was changed', {
      fields: [{ field: 'password', message: 'is not your current password' }],
    });
  }
  await db.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [person.userId]);
}

/** The failed attempt that reached the limit locked the account: the audit trail says so. */
async function recordLock(db: Queryable, person: { userId: string; orgId: string }, attempt: Attempt, throttle: SignInThrottle): Promise<void> {
  if (attempt.failures < throttle.lockAfter) return;
  await recordAudit(db, person.orgId, {
    type: 'person.locked',
    actor: { type: 'system', id: 'sign-in' },
    resourceId: person.userId,
    data: { failed_sign_ins: attempt.failures, lock_minutes: Math.round(throttle.lockMs / 60_000) },
  });
}

interface Attempt {
  /** Failures in a row, this attempt included (counted as one until it succeeds). */
  failures: number;
  /** Set when the account is locked: this attempt is refused unheard. */
  lockedUntil?: Date;
}

/** Counts an attempt on a known account, atomically; the attempt that reaches the limit locks it. */
async function claimAttempt(db: Queryable, userId: string, throttle: SignInThrottle): Promise<Attempt> {
  const { rows } = await db.query(
    `UPDATE users SET failed_sign_ins = failed_sign_ins + 1,
       locked_until = CASE WHEN failed_sign_ins + 1 >= $2 THEN now() + make_interval(secs => $3 / 1000.0) ELSE NULL END
     WHERE id = $1 AND (locked_until IS NULL OR locked_until <= now())
     RETURNING failed_sign_ins`,
    [userId, throttle.lockAfter, throttle.lockMs],
  );
  if (rows[0]) return { failures: rows[0].failed_sign_ins as number };
  const locked = await db.query('SELECT locked_until FROM users WHERE id = $1', [userId]);
  return { failures: throttle.lockAfter, lockedUntil: (locked.rows[0]?.locked_until as Date | undefined) ?? new Date() };
}

/**
 * The same count for names that match nobody, kept in this process (bounded): guessing at an unknown account is
 * slowed and locked like guessing at a known one, so neither timing nor a lock tells who exists.
 */
const strangers = {
  attempts: new Map<string, { failures: number; lockedUntil: number }>(),
  claim(key: string, throttle: SignInThrottle): Attempt {
    const now = Date.now();
    const seen = this.attempts.get(key) ?? { failures: 0, lockedUntil: 0 };
    if (seen.lockedUntil > now) return { failures: seen.failures, lockedUntil: new Date(seen.lockedUntil) };
    seen.failures += 1;
    if (seen.failures >= throttle.lockAfter) seen.lockedUntil = now + throttle.lockMs;
    this.attempts.delete(key);
    this.attempts.set(key, seen);
    if (this.attempts.size > 10_000) this.attempts.delete(this.attempts.keys().next().value!);
    return { failures: seen.failures };
  },
};

/**
 * The person behind a session cookie, or undefined when it is unknown, ended, idle too long or too old. A
 * request the person made counts as activity (`touch`); what a page does by itself (a live refresh, the live
 * stream's heartbeat) does not, so an open tab still goes idle.
 */
export async function resumeSession(
  db: Queryable,
  token: string | undefined,
  policy: SessionRules,
  options: { touch?: boolean } = {},
): Promise<{ session: Session; caller: Caller } | undefined> {
  const parsed = token ? parseToken(token) : undefined;
  if (!token || parsed?.kind !== 'session') return undefined;
  const conditions = `s.id = $1 AND s.secret_digest = $2 AND u.id = s.user_id AND o.id = s.org_id AND p.name = o.plan
       AND s.ended_at IS NULL AND s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => $3 / 1000.0)
       AND u.deactivated_at IS NULL`;
  const columns = `s.id AS session_id, s.csrf_token, s.expires_at, u.id AS user_id, u.email, u.role, u.name AS person_name, ${organizationColumns}, ${planColumns}`;
  const { rows } = await db.query(
    (options.touch ?? true)
      ? `UPDATE sessions s SET last_seen_at = now() FROM users u, organizations o, plans p WHERE ${conditions} RETURNING ${columns}`
      : `SELECT ${columns} FROM sessions s, users u, organizations o, plans p WHERE ${conditions}`,
    [parsed.id, digestToken(token), policy.idleMs],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    session: { id: row.session_id, personName: row.person_name, csrfToken: row.csrf_token, expiresAt: (row.expires_at as Date).toISOString() },
    caller: {
      organization: organizationFromRow(row),
      plan: planFromRow(row),
      actor: { kind: 'person', userId: row.user_id, credential: { type: 'session', id: row.session_id }, email: row.email, role: row.role as Role },
    },
  };
}

/** Sign-out: the session ends at once, whatever its cookie still says. */
export async function endSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('UPDATE sessions SET ended_at = COALESCE(ended_at, now()) WHERE id = $1', [sessionId]);
}

/** Ends every open session of a person (deactivated, password reset, or on request); answers how many. */
export async function endSessionsOf(tx: Queryable, userId: string): Promise<number> {
  const { rowCount } = await tx.query('UPDATE sessions SET ended_at = now() WHERE user_id = $1 AND ended_at IS NULL', [userId]);
  return rowCount ?? 0;
}

function failureDelayMs(failures: number, throttle: SignInThrottle): number {
  if (failures <= throttle.slowAfter) return 0;
  return Math.min(throttle.firstDelayMs * 2 ** (failures - throttle.slowAfter - 1), throttle.maxDelayMs);
}

export function lockedError(until: Date): AppError {
  const minutes = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 60_000));
  return new AppError('account_locked', `Too many failed sign-ins: this account is locked for ${minutes} more minute${minutes === 1 ? '' : 's'}`, {
    locked_until: until.toISOString(),
  });
}
