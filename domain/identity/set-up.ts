import type { Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';

// Who could have set a person's password besides them. A set-password link shown to an owner or admin (no email is
// configured) lets that one set the password, sign in as the person and approve as them: such a person is recorded
// as set up by that one, who then cannot make approvals count twice (domain/gate/reviews/verdicts.ts). A link
// emailed to the person, or printed by the operator's CLI, was seen by nobody else of the organization.

/**
 * Who holds the account of a key's creator as the key is made (SQL, of the creator's id): the owner or admin who
 * could have made it signed in as them. They stay tied to the key (api_keys.created_while_held_by) after the
 * account changes hands, and cannot approve its writes.
 */
export const heldBy = (creator: string) => `(SELECT set_up_by FROM users WHERE id = ${creator})`;

/** Where a new set-password link goes: to the person (emailed), or to whoever asked for it (answered to them). */
export type LinkRecipient = 'person' | 'requester';

/** What recording a new link's set-up changed: who holds the account now, and what was taken from the one before. */
export interface SetUpChange {
  setUpBy: string | null;
  passkeysRemoved: number;
  slackLinksRemoved: number;
}

/**
 * Records who was given a person's new set-password link (in the transaction that issues it, the person locked).
 * When it was someone other than the person themselves, that one is recorded; a link emailed to the person, or
 * given by the CLI (the server's operator, outside the organization), clears it. When the account changes hands
 * (it was held by someone else, and the new link is not theirs), the passkeys registered and the Slack users
 * linked since it was set up are removed: the one before may have added them while signed in as the person.
 */
export async function recordSetUp(tx: Queryable, person: { id: string; orgId: string }, by: ActorRef, recipient: LinkRecipient): Promise<SetUpChange> {
  const { rows } = await tx.query<{ set_up_by: string | null; set_up_at: Date | null }>('SELECT set_up_by, set_up_at FROM users WHERE id = $1', [person.id]);
  const before = rows[0];
  // A link the person asked for and was answered changes nothing: whoever holds the account could have asked.
  const self = by.type === 'user' && by.id === person.id;
  if (self && recipient === 'requester') return { setUpBy: before?.set_up_by ?? null, passkeysRemoved: 0, slackLinksRemoved: 0 };
  const holder = recipient === 'requester' && by.type === 'user' && !self ? by.id : null;
  if (before?.set_up_by === holder) return { setUpBy: holder, passkeysRemoved: 0, slackLinksRemoved: 0 };
  let passkeysRemoved = 0;
  let slackLinksRemoved = 0;
  if (before?.set_up_by && before.set_up_at) {
    const passkeys = await tx.query('DELETE FROM passkeys WHERE user_id = $1 AND created_at >= $2 RETURNING credential_id, name', [person.id, before.set_up_at]);
    for (const removed of passkeys.rows) {
      await recordAudit(tx, person.orgId, { type: 'person.passkey_removed', actor: by, resourceId: person.id, data: { credential_id: removed.credential_id, name: removed.name } });
    }
    const slack = await tx.query('DELETE FROM slack_links WHERE user_id = $1 AND linked_at >= $2 RETURNING slack_team_id, slack_user_id', [person.id, before.set_up_at]);
    for (const removed of slack.rows) {
      await recordAudit(tx, person.orgId, {
        type: 'slack.unlinked',
        actor: by,
        resourceId: person.id,
        data: { slack_team_id: removed.slack_team_id, slack_user_id: removed.slack_user_id, reason: 'password reset of an account someone else set up' },
      });
    }
    passkeysRemoved = passkeys.rowCount ?? 0;
    slackLinksRemoved = slack.rowCount ?? 0;
  }
  await tx.query('UPDATE users SET set_up_by = $2, set_up_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END WHERE id = $1', [person.id, holder]);
  return { setUpBy: holder, passkeysRemoved, slackLinksRemoved };
}

/**
 * Records a reset of a person's password by someone else (an owner or admin), for the owners to be told when it is
 * followed by an approval within a day; a reset by the CLI clears the mark, and one by the person themselves leaves
 * it as it was (whoever holds the account could have asked for it).
 */
export async function recordPasswordReset(tx: Queryable, person: { id: string }, by: ActorRef): Promise<void> {
  if (by.type === 'user' && by.id === person.id) return;
  const resetter = by.type === 'user' ? by.id : null;
  await tx.query('UPDATE users SET password_reset_by = $2, password_reset_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END WHERE id = $1', [person.id, resetter]);
}
