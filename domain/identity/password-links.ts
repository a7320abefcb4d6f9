import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { checkPasswordStrength, hashPassword } from './passwords';
import { endSessionsOf } from './sessions';
import { digestToken, issueToken, parseToken } from './tokens';

/** How long a set-password link works: long enough for an invitation to be read, short enough to go stale. */
export const passwordLinkTtlMs = 3 * 24 * 60 * 60 * 1000;

export interface PasswordLink {
  /** The link's id (pwl_…), which names it without its secret. */
  id: string;
  /** The secret, shown once: it goes in the link's fragment, so it never reaches a server log or a Referer. */
  token: string;
  expiresAt: string;
}

/** The console page a link opens. */
export function passwordLinkUrl(publicUrl: string, link: PasswordLink): string {
  return `${publicUrl}/set-password#${link.token}`;
}

/** A new one-time link for a person; links issued before it stop working. */
export async function issuePasswordLink(tx: Queryable, user: { id: string; orgId: string }, ttlMs = passwordLinkTtlMs): Promise<PasswordLink> {
  const id = newId('pwl');
  const { token, digest } = issueToken('password_link', id);
  await tx.query('UPDATE password_links SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [user.id]);
  const { rows } = await tx.query(
    `INSERT INTO password_links (id, user_id, org_id, secret_digest, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5 / 1000.0)) RETURNING expires_at`,
    [id, user.id, user.orgId, digest, ttlMs],
  );
  return { id, token, expiresAt: (rows[0].expires_at as Date).toISOString() };
}

/** Spends a link nobody received (its email could not be sent): it works for no one who may find it later. */
export async function voidPasswordLink(db: Queryable, linkId: string): Promise<void> {
  await db.query('UPDATE password_links SET used_at = now() WHERE id = $1 AND used_at IS NULL', [linkId]);
}

export interface LinkHolder {
  email: string;
  name: string | null;
  organization: { slug: string; name: string };
}

const invalid = () => new AppError('link_invalid', 'This link has expired or was used already; ask an admin of your organization for a new one');

/** Whom a link is for, so the page can say so before anything is set; refuses a used or expired link. */
export async function readPasswordLink(db: Queryable, token: string): Promise<LinkHolder> {
  const row = await findLink(db, token, false);
  return { email: row.email, name: row.name, organization: { slug: row.slug, name: row.org_name } };
}

/** Sets the person's password from a link, once: the link is spent, and their other sessions end. */
export async function setPasswordWithLink(db: Database, token: string, password: string): Promise<LinkHolder> {
  checkPasswordStrength(password);
  // A link that does not work costs no hashing.
  const { user_id: userId } = await findLink(db, token, false);
  const hash = await hashPassword(password);
  return db.transaction(async (tx) => {
    // The person, then the link: the order in which a reset takes them too.
    await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
    const row = await findLink(tx, token, true);
    await tx.query('UPDATE password_links SET used_at = now() WHERE id = $1', [row.link_id]);
    await tx.query(
      'UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1',
      [row.user_id, hash],
    );
    const ended = await endSessionsOf(tx, row.user_id);
    await recordAudit(tx, row.org_id, { type: 'person.password_set', actor: { type: 'user', id: row.user_id }, resourceId: row.user_id, data: { sessions_ended: ended } });
    return { email: row.email, name: row.name, organization: { slug: row.slug, name: row.org_name } };
  });
}

async function findLink(db: Queryable, token: string, lock: boolean) {
  const parsed = parseToken(token.trim());
  if (parsed?.kind !== 'password_link') throw invalid();
  const { rows } = await db.query(
    `SELECT l.id AS link_id, l.user_id, l.org_id, u.email, u.name, o.slug, o.name AS org_name
     FROM password_links l JOIN users u ON u.id = l.user_id JOIN organizations o ON o.id = l.org_id
     WHERE l.id = $1 AND l.secret_digest = $2 AND l.used_at IS NULL AND l.expires_at > now() AND u.deactivated_at IS NULL
     ${lock ? 'FOR UPDATE OF l' : ''}`,
    [parsed.id, digestToken(token.trim())],
  );
  if (!rows[0]) throw invalid();
  return rows[0] as { link_id: string; user_id: string; org_id: string; email: string; name: string | null; slug: string; org_name: string };
}
