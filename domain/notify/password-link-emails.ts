import type { Database } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { passwordLinkUrl, voidPasswordLink, type PasswordLink } from '../identity/password-links';
import type { User } from '../identity/people';
import { mailFailureInWords, type Mailer } from './mailer';

// A set-password link sent to its person alone, when email is configured (SMTP_URL): the owner or admin who invited
// or reset them never sees it, so they cannot set the password, sign in as the person and approve as them. The api
// sends it itself, once the transaction that issued the link has committed (never while holding it: the embedded
// database runs one transaction at a time), and answers whether it went: a link that could not be sent is voided at
// once, so that no copy of it works, and the admin is told to send a new one.

/** Why a person gets a link: they were invited, or their password was reset. */
export type LinkOccasion = 'invited' | 'reset';

/** What the console's page or the api's answer tells of an emailed link: sent (until when it works), or not. */
export type EmailedLink = { sent: true; to: string; expiresAt: string } | { sent: false; to: string; problem: string };

export interface LinkEmailContext {
  mailer: Mailer;
  publicUrl: string;
  organization: { name: string; slug: string };
  /** Who asked (their email is named in the message) and as whom the audit trail records a failure. */
  by: { ref: ActorRef; email: string };
  /** Told of a send that failed, with the mail server's own words, for the operator (the person is told less). */
  log?: (error: unknown, message: string) => void;
}

/** Sends the link to the person; when it cannot be sent, voids it and records why. Never throws for the mail's sake. */
export async function emailPasswordLink(db: Database, issued: { user: User; link: PasswordLink }, occasion: LinkOccasion, context: LinkEmailContext): Promise<EmailedLink> {
  const { user, link } = issued;
  try {
    await context.mailer.send({ to: user.email, ...linkEmail(user, link, occasion, context) });
    return { sent: true, to: user.email, expiresAt: link.expiresAt };
  } catch (error) {
    context.log?.(error, 'a set-password link could not be emailed; it was voided');
    const problem = mailFailureInWords(error);
    await db.transaction(async (tx) => {
      await voidPasswordLink(tx, link.id);
      await recordAudit(tx, user.orgId, { type: 'person.password_link_unsent', actor: context.by.ref, resourceId: user.id, data: { occasion, problem } });
    });
    return { sent: false, to: user.email, problem };
  }
}

function linkEmail(user: User, link: PasswordLink, occasion: LinkOccasion, { publicUrl, organization, by }: LinkEmailContext): { subject: string; text: string } {
  const url = passwordLinkUrl(publicUrl, link);
  const works = `The link works once, until ${link.expiresAt} (UTC). Sign in afterwards with the organization "${organization.slug}" and ${user.email}.`;
  if (occasion === 'invited') {
    return {
      subject: `You are invited to ${organization.name} on Gatehouse`,
      text: [
        `${by.email} invited you to ${organization.name} on Gatehouse, as ${user.role}.`,
        '',
        `Set your password: ${url}`,
        works,
        'This link is yours alone: do not forward this email. If you did not expect it, ignore it.',
        '',
        `— Gatehouse, for ${organization.name}`,
      ].join('\n'),
    };
  }
  return {
    subject: `Your Gatehouse password for ${organization.name} was reset`,
    text: [
      `${by.email} reset your password for ${organization.name} on Gatehouse: the old one no longer works, and your sessions have ended.`,
      '',
      `Set a new password: ${url}`,
      works,
      `This link is yours alone: do not forward this email. If you did not ask for a reset, tell an owner of ${organization.name}.`,
      '',
      `— Gatehouse, for ${organization.name}`,
    ].join('\n'),
  };
}
