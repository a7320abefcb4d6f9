import { z } from 'zod';
import { reviewerRoles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { text, instantField } from '../../domain/kit/fields';
import { findSlackAppSettings, slackRequestUrl, updateSlackAppSettings, type SlackAppSettings } from '../../domain/notify/slack-app';
import { confirmSlackLink, listSlackLinks, readSlackLinkOffer, removeSlackLink, type NamedSlackUser, type SlackLink } from '../../domain/notify/slack-links';
import { defineOperation, type OperationContext } from './operation';

// Slack's Approve and Deny buttons: the organization's Slack app (owners and admins: its signing secret and
// workspace, and the Request URL to give it), and each person's own Slack links, confirmed from the one-time link a
// first press answers with. The console's Settings → Notifications and its "Link Slack" page.

const consoleOnly = ['console'] as const;
// Slack's own ids (T…, U…) are named without the _id the catalog keeps for Gatehouse's records.
const slackIdField = (what: string) => z.string().regex(/^[A-Z0-9]{2,30}$/, 'a Slack id such as T0123ABCD').describe(what);

const appSchema = z.object({
  request_url: z.string().describe("The interactivity Request URL to paste into the Slack app (Interactivity & Shortcuts)"),
  signing_secret: z.enum(['set']).nullable().describe("Whether the Slack app's signing secret is set: 'set', or null; it is never shown"),
  workspace: z.string().nullable().describe('The Slack workspace (T…) presses must come from; null: bound by the first verified press'),
});

const wireOfApp = (settings: SlackAppSettings, { caller, publicUrl }: OperationContext): z.infer<typeof appSchema> => ({
  request_url: slackRequestUrl(publicUrl, caller.organization.id),
  signing_secret: settings.signingSecretSet ? 'set' : null,
  workspace: settings.teamId,
});

const appAccess = { person: { roles: rolesThat.manageWebhooks } };

export const slackAppOperation = defineOperation({
  kind: 'read',
  name: 'notifications.slack_app',
  family: 'notifications',
  summary: "The organization's Slack app",
  description: "Where the Slack app sends button presses (the Request URL), whether its signing secret is set, and the workspace it is bound to.",
  method: 'GET',
  path: '/notifications/slack-app',
  list: false,
  input: z.strictObject({}),
  output: appSchema,
  access: appAccess,
  interfaces: consoleOnly,
  handler: async (_input, context) => wireOfApp(await findSlackAppSettings(context.db, context.caller.organization.id), context),
});

export const updateSlackAppOperation = defineOperation({
  kind: 'person_action',
  name: 'notifications.update_slack_app',
  family: 'notifications',
  summary: "Set the organization's Slack app",
  description:
    "Set the Slack app's signing secret (Basic Information → App Credentials; null removes it and presses are refused) and the workspace presses must come from (null: the next verified press binds it). Changing or removing the secret unlinks every Slack user of the organization: each person links theirs again.",
  method: 'PATCH',
  path: '/notifications/slack-app',
  input: z.strictObject({
    signing_secret: text({ min: 1, max: 200 }).nullable().optional().describe("The Slack app's Signing Secret; write-only"),
    workspace: slackIdField('The Slack workspace id, e.g. T0123ABCD').nullable().optional(),
  }),
  output: appSchema,
  access: appAccess,
  interfaces: consoleOnly,
  handler: async (input, context) =>
    wireOfApp(
      await updateSlackAppSettings(
        context.db,
        context.secrets,
        context.caller.organization.id,
        { signingSecret: input.signing_secret, teamId: input.workspace },
        { type: 'user', id: (context.caller.actor as PersonActor).userId },
      ),
      context,
    ),
});

/** A Slack user by Slack's ids, and by the names the signed press that offered it gave. */
const namedSlackUserFields = {
  workspace: z.string().describe('The Slack workspace (T…)'),
  workspace_name: z.string().nullable().describe("The workspace's domain as Slack's signed press gave it (null: it gave none, or the link is older than names)"),
  slack_user: z.string().describe('The Slack user, as Slack names them (U…)'),
  slack_user_name: z.string().nullable().describe("The Slack user's name (their handle) as Slack's signed press gave it (null: none)"),
};
const namedSlackUserOf = (slack: NamedSlackUser) => ({
  workspace: slack.teamId,
  workspace_name: slack.teamDomain,
  slack_user: slack.slackUserId,
  slack_user_name: slack.slackUserName,
});

const linkSchema = z.object({ ...namedSlackUserFields, linked_at: instantField('When the person confirmed the link') });
const wireOfLink = (link: SlackLink): z.infer<typeof linkSchema> => ({ ...namedSlackUserOf(link), linked_at: link.linkedAt.toISOString() });
const personOf = (context: OperationContext) => ({ orgId: context.caller.organization.id, userId: (context.caller.actor as PersonActor).userId });
// Those who decide reviews link their Slack user; one who is a member later is refused at the press all the same.
const ownAccess = { person: { roles: reviewerRoles } };

export const slackLinksOperation = defineOperation({
  kind: 'read',
  name: 'notifications.slack_links',
  family: 'notifications',
  summary: 'Your Slack links',
  description: "The Slack users linked to the signed-in person: their presses of a held write's Approve or Deny count as this person's.",
  method: 'GET',
  path: '/notifications/slack-links',
  list: false,
  input: z.strictObject({}),
  output: z.object({ links: z.array(linkSchema).describe('Oldest first') }),
  access: ownAccess,
  interfaces: consoleOnly,
  handler: async (_input, context) => ({ links: (await listSlackLinks(context.db, personOf(context))).map(wireOfLink) }),
});

export const removeSlackLinkOperation = defineOperation({
  kind: 'person_action',
  name: 'notifications.remove_slack_link',
  family: 'notifications',
  summary: 'Remove one of your Slack links',
  description: "Unlinks a Slack user from the signed-in person: that user's presses no longer count as theirs. Answers whether there was such a link.",
  method: 'DELETE',
  path: '/notifications/slack-links',
  input: z.strictObject({ workspace: text({ min: 1, max: 40 }).describe('The Slack workspace (T…)'), slack_user: text({ min: 1, max: 40 }).describe('The Slack user (U…)') }),
  output: z.object({ removed: z.boolean().describe('True when the link was there and is gone; false when there was none') }),
  access: ownAccess,
  interfaces: consoleOnly,
  handler: async (input, context) => ({ removed: await removeSlackLink(context.db, personOf(context), { teamId: input.workspace, userId: input.slack_user }) }),
});

const offerToken = text({ min: 20, max: 100 }).describe('The secret of the link a Slack press answered with (the fragment of its address)');

export const slackLinkOfferOperation = defineOperation({
  kind: 'read',
  name: 'notifications.slack_link_offer',
  family: 'notifications',
  summary: 'An offer to link a Slack user',
  description:
    "What a one-time Slack link would link to the signed-in person: the Slack user who pressed and their workspace, by Slack's ids and by the names the press gave; null when the link was used, expired, or is for another organization. A POST, though it changes nothing: the link's secret travels in the body.",
  method: 'POST',
  secretInBody: true,
  path: '/notifications/slack-link-offer',
  list: false,
  input: z.strictObject({ token: offerToken }),
  output: z.object({
    offer: z
      .object({ ...namedSlackUserFields, expires_at: instantField('When the offer stops working') })
      .nullable()
      .describe('The offer; null when it cannot be confirmed by this person'),
  }),
  access: ownAccess,
  interfaces: consoleOnly,
  handler: async (input, context) => {
    const offer = await readSlackLinkOffer(context.db, context.caller.organization.id, input.token);
    return { offer: offer ? { ...namedSlackUserOf(offer), expires_at: offer.expiresAt.toISOString() } : null };
  },
});

export const confirmSlackLinkOperation = defineOperation({
  kind: 'person_action',
  name: 'notifications.confirm_slack_link',
  family: 'notifications',
  summary: 'Link a Slack user to yourself',
  description:
    "Confirms a one-time Slack link, naming the Slack user the person confirms is them (the one the offer shows; another is refused with 422): from now on that Slack user's presses of Approve or Deny are the signed-in person's verdicts, and the Slack user the person linked before in that workspace is unlinked. The link works once, for 15 minutes, for a person of the organization whose Slack it came from (410 link_invalid otherwise; 404 for another organization's).",
  method: 'POST',
  path: '/notifications/slack-links',
  input: z.strictObject({ token: offerToken, slack_user: slackIdField('The Slack user the person confirms is them: the one the offer shows (U…)') }),
  refusals: ['link_invalid'],
  output: linkSchema,
  access: ownAccess,
  interfaces: consoleOnly,
  handler: async (input, context) => wireOfLink(await confirmSlackLink(context.db, personOf(context), input.token, input.slack_user)),
});

export const slackOperations = [slackAppOperation, updateSlackAppOperation, slackLinksOperation, removeSlackLinkOperation, slackLinkOfferOperation, confirmSlackLinkOperation];
