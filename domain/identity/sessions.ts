import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import type { Caller, Role } from './actors';
import { organizationColumns, organizationFromRow } from './organizations';
import { planColumns, planFromRow } from './plans';
import { verifyPassword } from './passwords';
import { claimAttempt, forgiveAttempt, signInThrottle, sweepThrottles, throttledError, throttleKeys, type Claim, type SignInThrottle } from './sign-in-throttle';
import { digestToken, issueToken, parseToken } from './tokens';

/** How long a console session lives: `idleMs` since its last request, `lifetimeMs` since sign-in, whichever ends first. */
export interface SessionRules {
  idleMs: number;
  lifetimeMs: number;
  /** How failed password attempts are slowed (domain/identity/sign-in-throttle.ts); `signInThrottle` unless a test needs it quicker. */
  throttle?: SignInThrottle;
}

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
 * Signs a person in with their organization's slug, email and password, from the client's `address`; answers the
 * session's cookie token, shown to the browser once. Unknown people, wrong passwords and deactivated accounts get
 * the same answer in the same time, and are throttled alike by the name typed (sign-in-throttle.ts): an attempt
 * during a wait is refused unheard, the same way whoever the name is.
 */
export async function signIn(
  db: Database,
  input: { orgSlug: string; email: string; password: string; address: string; userAgent?: string },
  policy: SessionRules,
): Promise<{ token: string; session: Session; caller: Caller }> {
  const throttle = policy.throttle ?? signInThrottle;
  const orgSlug = input.orgSlug.trim().toLowerCase();
  const email = input.email.trim().toLowerCase();
  const keys = throttleKeys({ orgSlug, email }, input.address);
  // Counted before the password is checked, so that a burst of guesses cannot outrun the throttle; refused unheard
  // (no hashing) during a wait.
  const attempt = await claimAttempt(db, keys, throttle, { accountWait: true });
  sweepThrottles(db);
  if (!attempt.heard) throw throttledError(attempt.retryAfterMs);
  const { rows } = await db.query(
    `SELECT u.id AS user_id, u.org_id, u.password_hash, u.deactivated_at FROM users u JOIN organizations o ON o.id = u.org_id
     WHERE o.slug = $1 AND u.email = $2`,
    [orgSlug, email],
  );
  const person = rows[0] as { user_id: string; org_id: string; password_hash: string | null; deactivated_at: Date | null } | undefined;
  const matches = await verifyPassword(input.password, person?.password_hash ?? null);
  if (!person || !matches || person.deactivated_at) {
    if (person) await recordThrottled(db, { userId: person.user_id, orgId: person.org_id }, attempt, input.address);
    throw wrongCredentials();
  }
  await forgiveAttempt(db, keys, throttle);
  return startSession(db, { userId: person.user_id, orgId: person.org_id, userAgent: input.userAgent }, policy);
}

/**
 * A session for a person who proved who they are (a password, a passkey): stored by its secret's digest, and
 * `person.signed_in` recorded (with `audit`: how, when not a password).
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
 * approvals as the person). Throttled as a sign-in with their name from the same address is (the same rows), so
 * that a stolen session cannot guess at the password any faster than a stranger at the sign-in page; the account's
 * wait over every address (meant for strangers) does not apply to a signed-in person. The right password forgives.
 */
export async function confirmPassword(
  db: Database,
  person: { userId: string; orgId: string },
  password: string,
  policy: SessionRules,
  address: string,
): Promise<void> {
  const throttle = policy.throttle ?? signInThrottle;
  const { rows } = await db.query(
    'SELECT u.password_hash, u.email, o.slug FROM users u JOIN organizations o ON o.id = u.org_id WHERE u.id = $1 AND u.org_id = $2',
    [person.userId, person.orgId],
  );
  const found = rows[0] as { password_hash: string | null; email: string; slug: string } | undefined;
  const keys = throttleKeys({ orgSlug: found?.slug ?? person.orgId, email: found?.email ?? person.userId }, address);
  const attempt = await claimAttempt(db, keys, throttle, { accountWait: false });
  if (!attempt.heard) throw throttledError(attempt.retryAfterMs);
  if (!(await verifyPassword(password, found?.password_hash ?? null))) {
    await recordThrottled(db, person, attempt, address);
    throw new AppError('validation_failed', 'That is not your current password: nothing was changed', {
      fields: [{ field: 'password', message: 'is not your current password' }],
    });
  }
  await forgiveAttempt(db, keys, throttle);
}

/**
 * The failed attempt that started a wait, on an account that exists: the audit trail tells its owners (never the
 * caller) that someone is guessing, from which address, or from many.
 */
async function recordThrottled(db: Queryable, person: { userId: string; orgId: string }, attempt: Claim, address: string): Promise<void> {
  if (!attempt.heard) return;
  for (const scope of ['address', 'account'] as const) {
    if (!attempt.waitStarted[scope === 'address' ? 'pair' : 'account']) continue;
    await recordAudit(db, person.orgId, {
      type: 'person.sign_in_throttled',
      actor: { type: 'system', id: 'sign-in' },
      resourceId: person.userId,
      data: { scope, failed_attempts: attempt.failures[scope === 'address' ? 'pair' : 'account'], address },
    });
  }
}

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
