import { createHash, randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { recordAudit } from '../audit/events';
import type { Role } from '../identity/actors';
import { AppError } from '../kit/errors';

// Which person a Slack user is: only what that person confirmed, signed in to the console, from a one-time link
// their own first press was answered with, naming that Slack user. Never a display name or an email: anyone can
// name themselves anything in a workspace. The offer is bound to the Slack user who pressed, and keeps the names
// Slack's signed press gave (the workspace's domain, the user's handle), so that the person sees whose press it
// was: an offer forwarded by someone else's Slack user is visibly someone else's.

/** How long an offer to link works. */
export const slackLinkOfferTtlMs = 15 * 60 * 1000;

/** A Slack user of a workspace. */
export interface SlackUser {
  teamId: string;
  userId: string;
}

/** The Slack user who pressed, with the names Slack's signed press gave them (absent when it gave none). */
export interface SlackPresser extends SlackUser {
  /** The workspace's domain (`team.domain`). */
  teamDomain?: string;
  /** The Slack user's name, their handle (`user.username`, or `user.name`). */
  userName?: string;
}

/** The person a Slack user is linked to, as a verdict needs them. */
export interface LinkedPerson {
  userId: string;
  email: string;
  role: Role;
}

/** The active person of the organization the Slack user is linked to, if any. */
export async function findLinkedPerson(db: Queryable, orgId: string, slack: SlackUser): Promise<LinkedPerson | undefined> {
  const { rows } = await db.query(
    `SELECT u.id, u.email, u.role FROM slack_links l JOIN users u ON u.id = l.user_id AND u.org_id = l.org_id
     WHERE l.org_id = $1 AND l.slack_team_id = $2 AND l.slack_user_id = $3 AND u.deactivated_at IS NULL`,
    [orgId, slack.teamId, slack.userId],
  );
  return rows[0] ? { userId: rows[0].id, email: rows[0].email, role: rows[0].role } : undefined;
}

const digestOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The console page where a person confirms a link. The secret is in the fragment, which the browser never sends:
 * the page keeps it through the way through sign-in (in the tab's session storage) and sends it in the bodies of
 * its calls. It is worth nothing without the person's session in the offer's organization.
 */
export function slackLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/slack/link#${token}`;
}

/** A name from a press as it is kept: printable, and short (Slack's handles and domains are). */
const keptName = (name: string | undefined) => {
  const trimmed = name?.replace(/[\p{C}]/gu, '').trim().slice(0, 80);
  return trimmed ? trimmed : null;
};

/**
 * A new one-time offer to link the Slack user who pressed (its team and user, from the signed press): its secret,
 * once. Only that Slack user can be linked by it; the person confirming chooses nothing but yes.
 */
export async function offerSlackLink(db: Queryable, orgId: string, slack: SlackPresser): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const { rows } = await db.query(
    `INSERT INTO slack_link_offers (token_digest, org_id, slack_team_id, slack_user_id, slack_team_domain, slack_user_name, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7 / 1000.0)) RETURNING expires_at`,
    [digestOf(token), orgId, slack.teamId, slack.userId, keptName(slack.teamDomain), keptName(slack.userName), slackLinkOfferTtlMs],
  );
  // Offers nobody took are swept as new ones are made.
  await db.query('DELETE FROM slack_link_offers WHERE org_id = $1 AND expires_at < now() - interval \'1 day\'', [orgId]);
  return { token, expiresAt: rows[0].expires_at };
}

/** What an offer shows the person before they confirm it. */
export interface SlackLinkOffer extends NamedSlackUser {
  expiresAt: Date;
}

/** A Slack user by Slack's ids, and by the names its press gave (null: none was kept). */
export interface NamedSlackUser {
  teamId: string;
  teamDomain: string | null;
  slackUserId: string;
  slackUserName: string | null;
}

const namedSlackUserOf = (row: Record<string, unknown>): NamedSlackUser => ({
  teamId: row.slack_team_id as string,
  teamDomain: (row.slack_team_domain as string | null) ?? null,
  slackUserId: row.slack_user_id as string,
  slackUserName: (row.slack_user_name as string | null) ?? null,
});

const spent = () => new AppError('link_invalid', 'This Slack link has expired or was used already; press Approve or Deny in Slack again for a new one');

/** An offer still open (`lock`: for confirming it in this transaction), whatever organization it was made in. */
async function openOffer(db: Queryable, token: string, lock: boolean) {
  const { rows } = await db.query(
    `SELECT token_digest, org_id, slack_team_id, slack_user_id, slack_team_domain, slack_user_name, expires_at
     FROM slack_link_offers WHERE token_digest = $1 AND used_at IS NULL AND expires_at > now() ${lock ? 'FOR UPDATE' : ''}`,
    [digestOf(token)],
  );
  return rows[0];
}

/**
 * What an open offer would link, for a person of the organization it was made in; undefined when it is used,
 * expired, made up, or another organization's (whose person learns nothing of it).
 */
export async function readSlackLinkOffer(db: Queryable, orgId: string, token: string): Promise<SlackLinkOffer | undefined> {
  const row = await openOffer(db, token, false);
  if (!row || row.org_id !== orgId) return undefined;
  return { ...namedSlackUserOf(row), expiresAt: row.expires_at };
}

/** A Slack user linked to a person. */
export interface SlackLink extends NamedSlackUser {
  linkedAt: Date;
}

/**
 * The signed-in person confirms an offer, naming the Slack user they confirm is them (`slackUserId`, the one the
 * offer shows): that Slack user is theirs from now on, the offer is spent, and the audit trail keeps it. A person has
 * one Slack user per workspace: the one they linked before in that workspace is unlinked, and so is the Slack user's
 * link to someone else before (each `slack.unlinked`, saying why).
 */
export async function confirmSlackLink(db: Database, person: { orgId: string; userId: string }, token: string, slackUserId: string): Promise<SlackLink> {
  return db.transaction(async (tx) => {
    const offer = await openOffer(tx, token, true);
    if (!offer) throw spent();
    if (offer.org_id !== person.orgId) {
      throw new AppError('not_found', "This Slack link is for another organization's Slack app: sign in to the organization whose Slack you pressed in");
    }
    if (offer.slack_user_id !== slackUserId) {
      const message = `is not the Slack user this link offers (${offer.slack_user_id}): confirm only the Slack user who pressed`;
      throw new AppError('validation_failed', `slack_user ${message}`, { fields: [{ field: 'slack_user', message }] });
    }
    await tx.query('UPDATE slack_link_offers SET used_at = now(), used_by = $2 WHERE token_digest = $1', [offer.token_digest, person.userId]);
    const replaced = await tx.query(
      `DELETE FROM slack_links WHERE org_id = $1 AND slack_team_id = $2 AND (user_id = $3 OR slack_user_id = $4)
       RETURNING user_id, slack_user_id`,
      [person.orgId, offer.slack_team_id, person.userId, offer.slack_user_id],
    );
    const { rows } = await tx.query(
      `INSERT INTO slack_links (org_id, slack_team_id, slack_user_id, user_id, slack_team_domain, slack_user_name)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING linked_at`,
      [person.orgId, offer.slack_team_id, offer.slack_user_id, person.userId, offer.slack_team_domain, offer.slack_user_name],
    );
    for (const old of replaced.rows) {
      // The same link confirmed again is not a replacement.
      if (old.user_id === person.userId && old.slack_user_id === offer.slack_user_id) continue;
      await recordAudit(tx, person.orgId, {
        type: 'slack.unlinked',
        actor: { type: 'user', id: person.userId },
        resourceId: old.user_id,
        data: { slack_team_id: offer.slack_team_id, slack_user_id: old.slack_user_id, reason: 'replaced by a newer link' },
      });
    }
    await recordAudit(tx, person.orgId, {
      type: 'slack.linked',
      actor: { type: 'user', id: person.userId },
      resourceId: person.userId,
      data: { slack_team_id: offer.slack_team_id, slack_user_id: offer.slack_user_id, slack_team_domain: offer.slack_team_domain, slack_user_name: offer.slack_user_name },
    });
    return { ...namedSlackUserOf(offer), linkedAt: rows[0].linked_at };
  });
}

/** The Slack users linked to a person. */
export async function listSlackLinks(db: Queryable, person: { orgId: string; userId: string }): Promise<SlackLink[]> {
  const { rows } = await db.query(
    'SELECT slack_team_id, slack_user_id, slack_team_domain, slack_user_name, linked_at FROM slack_links WHERE org_id = $1 AND user_id = $2 ORDER BY linked_at',
    [person.orgId, person.userId],
  );
  return rows.map((row) => ({ ...namedSlackUserOf(row), linkedAt: row.linked_at }));
}

/** A person removes one of their own Slack links: presses by that Slack user no longer count as theirs. False: there was none. */
export async function removeSlackLink(db: Database, person: { orgId: string; userId: string }, slack: SlackUser): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await tx.query('DELETE FROM slack_links WHERE org_id = $1 AND user_id = $2 AND slack_team_id = $3 AND slack_user_id = $4', [
      person.orgId,
      person.userId,
      slack.teamId,
      slack.userId,
    ]);
    if (!removed.rowCount) return false;
    await recordAudit(tx, person.orgId, {
      type: 'slack.unlinked',
      actor: { type: 'user', id: person.userId },
      resourceId: person.userId,
      data: { slack_team_id: slack.teamId, slack_user_id: slack.userId, reason: 'removed by the person' },
    });
    return true;
  });
}
