import type { Database, Queryable } from '../../db/database';
import { cliActor, recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { assertOwned } from '../kit/references';
import { newId } from '../kit/ids';
import { roles, type Role } from './actors';
import { issuePasswordLink, type PasswordLink } from './password-links';
import { endSessionsOf } from './sessions';
import { recordPasswordReset, recordSetUp, type LinkRecipient } from './set-up';
import { issueToken } from './tokens';

export interface User {
  id: string;
  orgId: string;
  email: string;
  name: string | null;
  role: Role;
  active: boolean;
  /** Whether they have set a password (an invited person has not, until they open their link). */
  hasPassword: boolean;
  /** The team member they are: when it is inactive or out of office, they are not asked to review. */
  teamMemberId: string | null;
  /**
   * The owner or admin who was answered this person's last set-password link (no email was configured), and so
   * could have set their password: see ./set-up.ts. Null: only the person, or the server's operator, had it.
   */
  setUpBy: string | null;
  createdAt: string;
}

/** A person as the People page lists them. */
export interface Person extends User {
  lastSignInAt: string | null;
  openSessions: number;
}

/** Who changes the roster: a signed-in person with their role, or the CLI (the server's operator, as an owner). */
export interface RosterManager {
  ref: ActorRef;
  role: Role;
}

export const cliManager: RosterManager = { ref: cliActor, role: 'owner' };

export async function createUser(
  db: Queryable,
  input: { orgId: string; email: string; role: string; name?: string },
): Promise<User> {
  const email = normalizeEmail(input.email);
  if (!roles.includes(input.role as Role)) throw new AppError('validation_failed', `role must be one of ${roles.join(', ')}`);
  const { rows } = await db.query(
    `INSERT INTO users (id, org_id, email, name, role) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (org_id, email) DO NOTHING RETURNING *`,
    [newId('usr'), input.orgId, email, input.name?.trim() || null, input.role],
  );
  if (!rows[0]) throw new AppError('conflict', `${email} is already a member of this organization`);
  return userFromRow(rows[0]);
}

/**
 * Adds a person and answers the one-time link with which they set their password. `linkTo`: whom the caller gives
 * it to: the person (emailed to them), or the one who asked (answered to them; see ./set-up.ts).
 */
export async function invitePerson(
  db: Database,
  input: { orgId: string; email: string; role: Role; name?: string },
  by: RosterManager,
  { linkTo = 'requester' }: { linkTo?: LinkRecipient } = {},
): Promise<{ user: User; link: PasswordLink }> {
  return db.transaction(async (tx) => {
    await lockRoster(tx, input.orgId);
    assertMayGrant(await currentManager(tx, input.orgId, by), input.role);
    const user = await createUser(tx, input);
    const link = await issuePasswordLink(tx, user);
    const { setUpBy } = await recordSetUp(tx, user, by.ref, linkTo);
    await recordAudit(tx, input.orgId, {
      type: 'person.invited',
      actor: by.ref,
      resourceId: user.id,
      data: { email: user.email, role: user.role, link: linkTo === 'person' ? 'emailed' : 'answered', set_up_by: setUpBy },
    });
    return { user: { ...user, setUpBy }, link };
  });
}

export async function findUserByEmail(db: Queryable, orgId: string, email: string): Promise<User> {
  const { rows } = await db.query('SELECT * FROM users WHERE org_id = $1 AND email = $2', [orgId, normalizeEmail(email)]);
  if (!rows[0]) throw new AppError('not_found', `no user ${email} in this organization`);
  return userFromRow(rows[0]);
}

export async function listPeople(db: Queryable, orgId: string): Promise<Person[]> {
  const { rows } = await db.query(
    `SELECT u.*, s.last_sign_in_at, COALESCE(s.open_sessions, 0)::int AS open_sessions
     FROM users u LEFT JOIN LATERAL (
       SELECT max(created_at) AS last_sign_in_at,
              count(*) FILTER (WHERE ended_at IS NULL AND expires_at > now()) AS open_sessions
       FROM sessions WHERE user_id = u.id
     ) s ON true
     WHERE u.org_id = $1 ORDER BY u.deactivated_at IS NOT NULL, u.email`,
    [orgId],
  );
  return rows.map((row) => ({
    ...userFromRow(row),
    lastSignInAt: row.last_sign_in_at ? (row.last_sign_in_at as Date).toISOString() : null,
    openSessions: row.open_sessions as number,
  }));
}

/**
 * Changes a person's role or switches them off (their sessions and personal tokens stop at once) or on again.
 * An organization always keeps an active owner.
 */
export async function updatePerson(
  db: Database,
  target: { orgId: string; userId: string },
  change: { role?: Role; active?: boolean; teamMemberId?: string | null },
  by: RosterManager,
): Promise<User> {
  return db.transaction(async (tx) => {
    const before = await lockPerson(tx, target);
    await assertOwned(tx, target.orgId, [{ table: 'team_members', field: 'team_member_id', id: change.teamMemberId }]);
    by = await currentManager(tx, target.orgId, by);
    assertMayManage(by, before);
    if (change.role !== undefined) assertMayGrant(by, change.role);
    if (change.active === false && by.ref.type === 'user' && by.ref.id === before.id) {
      throw new AppError('conflict', 'You cannot deactivate yourself; ask another admin or owner');
    }
    const role = change.role ?? before.role;
    const active = change.active ?? before.active;
    if (before.role === 'owner' && before.active && (role !== 'owner' || !active)) await assertAnotherOwner(tx, before);
    const { rows } = await tx.query(
      `UPDATE users SET role = $2, deactivated_at = CASE WHEN $3 THEN NULL ELSE COALESCE(deactivated_at, now()) END,
         team_member_id = CASE WHEN $4 THEN $5 ELSE team_member_id END, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [before.id, role, active, change.teamMemberId !== undefined, change.teamMemberId ?? null],
    );
    const ended = active ? 0 : await endSessionsOf(tx, before.id);
    // A deactivated person's open set-password links die too: reactivation does not revive them.
    if (!active) await tx.query('UPDATE password_links SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [before.id]);
    const changed: Record<string, unknown> = {};
    if (role !== before.role) changed.role = { from: before.role, to: role };
    if (active !== before.active) changed.active = { from: before.active, to: active };
    if (change.teamMemberId !== undefined && change.teamMemberId !== before.teamMemberId) {
      changed.team_member_id = { from: before.teamMemberId, to: change.teamMemberId };
    }
    if (Object.keys(changed).length) {
      await recordAudit(tx, target.orgId, { type: 'person.updated', actor: by.ref, resourceId: before.id, data: { ...changed, sessions_ended: ended } });
    }
    return userFromRow(rows[0]);
  });
}

/**
 * The person's password stops working and their sessions end; the answer is a new link to set one, which the caller
 * gives to `linkTo` (see invitePerson).
 */
export async function resetPassword(
  db: Database,
  target: { orgId: string; userId: string },
  by: RosterManager,
  { linkTo = 'requester' }: { linkTo?: LinkRecipient } = {},
): Promise<{ user: User; link: PasswordLink }> {
  return db.transaction(async (tx) => {
    const user = await lockPerson(tx, target);
    by = await currentManager(tx, target.orgId, by);
    assertMayManage(by, user);
    // The link goes to whoever asked: an admin must not take over a fellow admin's account with it.
    const self = by.ref.type === 'user' && by.ref.id === user.id;
    if (by.role === 'admin' && user.role === 'admin' && !self) throw new AppError('insufficient_role', "Only an owner may reset an admin's password");
    if (!user.active) throw new AppError('conflict', `${user.email} is deactivated; activate them first`);
    await tx.query('UPDATE users SET password_hash = NULL, updated_at = now() WHERE id = $1', [user.id]);
    const ended = await endSessionsOf(tx, user.id);
    const link = await issuePasswordLink(tx, user);
    const setUp = await recordSetUp(tx, user, by.ref, linkTo);
    await recordPasswordReset(tx, user, by.ref);
    await recordAudit(tx, target.orgId, {
      type: 'person.password_reset',
      actor: by.ref,
      resourceId: user.id,
      data: {
        sessions_ended: ended,
        link: linkTo === 'person' ? 'emailed' : 'answered',
        set_up_by: setUp.setUpBy,
        ...(setUp.passkeysRemoved ? { passkeys_removed: setUp.passkeysRemoved } : {}),
        ...(setUp.slackLinksRemoved ? { slack_links_removed: setUp.slackLinksRemoved } : {}),
      },
    });
    return { user: { ...user, hasPassword: false, setUpBy: setUp.setUpBy }, link };
  });
}

/** Signs a person out everywhere. */
export async function endPersonSessions(db: Database, target: { orgId: string; userId: string }, by: RosterManager): Promise<number> {
  return db.transaction(async (tx) => {
    const user = await lockPerson(tx, target);
    if (!(by.ref.type === 'user' && by.ref.id === user.id)) assertMayManage(await currentManager(tx, target.orgId, by), user);
    const ended = await endSessionsOf(tx, user.id);
    await recordAudit(tx, target.orgId, { type: 'person.sessions_ended', actor: by.ref, resourceId: user.id, data: { sessions_ended: ended } });
    return ended;
  });
}

/** A personal access token for a person to use the API (deciding reviews, say); shown once. */
export async function createPersonalToken(db: Database, user: User): Promise<{ id: string; token: string }> {
  const id = newId('pat');
  const { token, digest } = issueToken('personal', id);
  await db.query('INSERT INTO personal_tokens (id, user_id, org_id, token_digest) VALUES ($1, $2, $3, $4)', [
    id,
    user.id,
    user.orgId,
    digest,
  ]);
  return { id, token };
}

export async function revokePersonalToken(db: Queryable, orgId: string, tokenId: string): Promise<void> {
  const { rowCount } = await db.query(
    'UPDATE personal_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND org_id = $2',
    [tokenId, orgId],
  );
  if (!rowCount) throw new AppError('not_found', `the organization has no personal token ${tokenId}`);
}

/** Owners manage everyone; admins manage everyone but owners. */
function assertMayManage(by: RosterManager, target: User): void {
  if (by.role === 'owner') return;
  if (by.role === 'admin' && target.role !== 'owner') return;
  throw new AppError('insufficient_role', by.role === 'admin' ? 'Only an owner may change an owner' : 'Only owners and admins manage people');
}

function assertMayGrant(by: RosterManager, role: Role): void {
  if (by.role === 'owner' || (by.role === 'admin' && role !== 'owner')) return;
  throw new AppError('insufficient_role', by.role === 'admin' ? 'Only an owner may make someone an owner' : 'Only owners and admins manage people');
}

async function assertAnotherOwner(tx: Queryable, owner: User): Promise<void> {
  const { rows } = await tx.query(
    `SELECT id FROM users WHERE org_id = $1 AND role = 'owner' AND deactivated_at IS NULL AND id <> $2`,
    [owner.orgId, owner.id],
  );
  if (!rows.length) throw new AppError('conflict', 'An organization needs at least one active owner; make someone else an owner first');
}

/**
 * Roster changes of one organization take turns, so two admins cannot each remove "the other" last owner. NO KEY
 * UPDATE: rows that merely reference the organization (a session, an audit event) do not wait for it.
 */
async function lockRoster(tx: Queryable, orgId: string): Promise<void> {
  await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
}

/** The manager's role as it is now, inside the roster's turn: a person demoted a moment ago has lost their say. */
async function currentManager(tx: Queryable, orgId: string, by: RosterManager): Promise<RosterManager> {
  if (by.ref.type !== 'user') return by;
  const { rows } = await tx.query('SELECT role FROM users WHERE id = $1 AND org_id = $2 AND deactivated_at IS NULL', [by.ref.id, orgId]);
  if (!rows[0]) throw new AppError('insufficient_role', 'Only active owners and admins manage people');
  return { ref: by.ref, role: rows[0].role as Role };
}

async function lockPerson(tx: Queryable, target: { orgId: string; userId: string }): Promise<User> {
  await lockRoster(tx, target.orgId);
  const { rows } = await tx.query('SELECT * FROM users WHERE id = $1 AND org_id = $2 FOR NO KEY UPDATE', [target.userId, target.orgId]);
  if (!rows[0]) throw new AppError('not_found', `The organization has no person ${target.userId}`);
  return userFromRow(rows[0]);
}

function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized) || normalized.length > 254) {
    throw new AppError('validation_failed', `"${email}" is not an email address`, { fields: [{ field: 'email', message: 'must be an email address' }] });
  }
  return normalized;
}

function userFromRow(row: Record<string, unknown>): User {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    email: row.email as string,
    name: (row.name as string | null) ?? null,
    role: row.role as Role,
    active: row.deactivated_at === null || row.deactivated_at === undefined,
    hasPassword: typeof row.password_hash === 'string',
    teamMemberId: (row.team_member_id as string | null | undefined) ?? null,
    setUpBy: (row.set_up_by as string | null | undefined) ?? null,
    createdAt: (row.created_at as Date).toISOString(),
  };
}
