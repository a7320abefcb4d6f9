import { z } from 'zod';
import type { Database } from '../../db/database';
import { changesetNoun } from '../gate/changesets/in-words';
import { recordVerdict, type VerdictPorts } from '../gate/reviews/verdicts';
import { reviewerRoles } from '../identity/actors';
import { AppError } from '../kit/errors';
import { parseButtonValue, slackActions, slackNotice, type SlackMessage } from './slack';
import { findLinkedPerson, offerSlackLink, slackLinkUrl } from './slack-links';

// A verified press of a held write's Approve or Deny button in Slack: by the person the Slack user is linked to,
// under the same rules as the console (roles, self-approval, quorum, edits, a passkey where the organization needs
// one), through the one way to give a verdict (recordVerdict).

const slackId = z.string().regex(/^[A-Z0-9]{2,30}$/);
/** A name Slack gives (a handle, a workspace's domain): shown, never trusted for who someone is; an odd one is dropped. */
const slackName = z.string().max(200).optional().catch(undefined);

/** The fields of Slack's `block_actions` payload a press needs; the rest is ignored. */
export const blockActionsPayload = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: slackId, team_id: slackId.optional(), username: slackName, name: slackName }),
  team: z.object({ id: slackId, domain: slackName }).nullable().optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).min(1),
  response_url: z.string().url().optional(),
});
export type BlockActions = z.infer<typeof blockActionsPayload>;

/** A press, with the workspace it was made in and the one its Slack user belongs to (different for Slack Connect). */
export type Press = BlockActions & { teamId: string; userTeamId: string };

/** Reads the form's `payload` field: refused (400) when it is missing, not JSON, or not a button press. */
export function parseInteraction(rawBody: string): Press {
  const payload = new URLSearchParams(rawBody).get('payload');
  if (payload === null) throw new AppError('bad_request', 'A Slack interaction is a form with a payload field');
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    throw new AppError('bad_request', 'The payload field is not JSON');
  }
  if ((parsed as { type?: unknown })?.type !== 'block_actions') {
    throw new AppError('bad_request', `Only button presses (block_actions) are taken here, not ${JSON.stringify((parsed as { type?: unknown })?.type ?? null)}`);
  }
  const checked = blockActionsPayload.safeParse(parsed);
  if (!checked.success) throw new AppError('bad_request', `The payload is not a button press Gatehouse sent: ${checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  const teamId = checked.data.team?.id ?? checked.data.user.team_id;
  if (!teamId) throw new AppError('bad_request', 'The payload names no Slack workspace (team.id)');
  return { ...checked.data, teamId, userTeamId: checked.data.user.team_id ?? teamId };
}

/** What to do about a press: say it to the one who pressed, or replace the held write's message for everyone. */
export interface PressAnswer {
  message: SlackMessage;
  /** Replace the message the buttons were on (a decision, or a review that no longer waits); else ephemeral. */
  replace: boolean;
}

/** What a press needs from outside: the verdict's ports (the roles that decide are the identity's own), and links. */
export interface PressPorts extends Omit<VerdictPorts, 'decidingRoles'> {
  publicUrl: string;
  /** The review's page in the console. */
  reviewUrl(reviewId: string): string;
}

/**
 * Decides a press: an Approve or Deny by a linked reviewer becomes their verdict; an unlinked Slack user is
 * offered a one-time link to confirm in the console; everything else is refused with why, changing nothing.
 * Undefined for a press that asks nothing (the "Open the review" link button).
 */
export async function answerPress(db: Database, orgId: string, press: Press, ports: PressPorts): Promise<PressAnswer | undefined> {
  const action = press.actions[0]!;
  if (action.action_id === slackActions.open) return undefined;
  const verdict = action.action_id === slackActions.approve ? 'approved' : action.action_id === slackActions.deny ? 'denied' : undefined;
  if (!verdict) throw new AppError('bad_request', `Unknown action ${JSON.stringify(action.action_id)}: Gatehouse's buttons are ${slackActions.approve} and ${slackActions.deny}`);
  const bound = parseButtonValue(action.value ?? '');
  if (!bound) throw new AppError('bad_request', "The button's value does not name a review and a payload digest");
  const reviewUrl = ports.reviewUrl(bound.reviewId);
  const tell = (text: string, replace = false): PressAnswer => ({ message: slackNotice(text, reviewUrl), replace });

  const slackUser = { teamId: press.teamId, userId: press.user.id };
  const person = await findLinkedPerson(db, orgId, slackUser);
  if (!person) {
    // Bound to the Slack user who pressed, named as the signed press names them, for the person to recognize.
    const offer = await offerSlackLink(db, orgId, { ...slackUser, teamDomain: press.team?.domain, userName: press.user.username ?? press.user.name });
    return tell(
      `Your Slack user is not linked to a person of this organization yet, so nothing was decided. Link it once, signed in to Gatehouse (the link works once, for 15 minutes): ${slackLinkUrl(ports.publicUrl, offer.token)} — then press again.`,
    );
  }
  if (!reviewerRoles.includes(person.role)) {
    return tell(`${person.email} is a ${person.role}; only reviewers, admins and owners decide reviews. Nothing was decided.`);
  }
  try {
    const review = await recordVerdict(
      db,
      { orgId, reviewId: bound.reviewId, person: { userId: person.userId, role: person.role }, verdict, via: 'slack', expectedDigest: bound.digest },
      { ...ports, decidingRoles: reviewerRoles },
    );
    // A changeset is named by what it holds; it was decided whole (items are rejected on the review's page).
    const what = review.changeset ? `the ${changesetNoun(review.changeset.items.length)}` : review.operation;
    const writes = review.changeset ? `its ${review.changeset.items.length} writes run` : 'the write runs';
    if (review.status === 'pending') {
      return tell(`Your approval counts (${review.approvals.given.length} of ${review.approvals.required}); ${writes} once enough people approve.`);
    }
    if (review.status === 'denied') return tell(`Denied by ${person.email} — nothing was written (${what}).`, true);
    const outcome = review.failure
      ? `${what} could not be applied: ${review.failure.message}`
      : review.applied_at
        ? `${what} applied`
        : `${what} is being applied`;
    return tell(`Approved by ${person.email} — ${outcome}.`, true);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // The review no longer waits for this message's payload: its buttons go, for everyone.
    const stale = error.code === 'payload_changed' || error.code === 'not_found' || (error.code === 'conflict' && error.details?.status !== 'pending');
    if (error.code === 'passkey_required') {
      const finishUrl = typeof error.details?.finish_url === 'string' ? error.details.finish_url : reviewUrl;
      return { message: slackNotice(`Nothing was decided: this organization needs every approval signed with a passkey, which a Slack button cannot carry. Approve it on its page: ${finishUrl}`, finishUrl), replace: false };
    }
    return tell(`Nothing was decided: ${error.message}`, stale);
  }
}
