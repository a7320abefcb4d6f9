import { z } from 'zod';
import { reviewerRoles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { personalNotifications } from '../../domain/notify/notifications';
import {
  findPersonalNotifications,
  findReviewNotificationSettings,
  parseWait,
  shownWait,
  updatePersonalNotifications,
  updateReviewNotificationSettings,
  type ReviewNotificationSettings,
} from '../../domain/notify/settings';
import { text } from '../../domain/kit/fields';
import { defineOperation } from './operation';

// Who is told of held writes, and how: the organization's escalation and Slack channel (owners and admins), and
// each person's own email notifications. The console's Settings → Notifications.

const consoleOnly = ['console'] as const;
/** A wait such as 30m, 2h or 45s, in milliseconds. */
const waitField = z.string().transform((value, ctx) => {
  const ms = parseWait(value);
  if (ms === undefined) ctx.addIssue({ code: 'custom', message: 'a wait such as 30m, 2h or 45s' });
  return ms ?? z.NEVER;
});

const settingsSchema = z.object({
  review_escalation: z
    .string()
    .nullable()
    .describe('How long a review waits before the next tier (admins, then owners) is told, e.g. 30m; null: it never escalates'),
  slack_webhook_url: z.string().nullable().describe('A Slack-compatible incoming webhook told of each held write and escalation; null: none'),
});

const wireOfSettings = (settings: ReviewNotificationSettings): z.infer<typeof settingsSchema> => ({
  review_escalation: settings.reviewEscalationMs === null ? null : shownWait(settings.reviewEscalationMs),
  slack_webhook_url: settings.slackWebhookUrl,
});

const settingsAccess = { person: { roles: rolesThat.manageWebhooks } };

export const reviewNotificationSettingsOperation = defineOperation({
  kind: 'read',
  name: 'notifications.settings',
  family: 'notifications',
  summary: 'How held writes are escalated and announced',
  description: "The organization's escalation wait and its Slack-compatible webhook.",
  method: 'GET',
  path: '/notifications/settings',
  list: false,
  input: z.strictObject({}),
  output: settingsSchema,
  access: settingsAccess,
  interfaces: consoleOnly,
  handler: async (_input, { db, secrets, caller }) => wireOfSettings(await findReviewNotificationSettings(db, secrets, caller.organization.id)),
});

export const updateReviewNotificationSettingsOperation = defineOperation({
  kind: 'person_action',
  name: 'notifications.update_settings',
  family: 'notifications',
  summary: 'Change how held writes are escalated and announced',
  description: 'Set the escalation wait (null: never escalate) and the Slack-compatible webhook (null: none; https, a public address).',
  method: 'PATCH',
  path: '/notifications/settings',
  input: z.strictObject({
    review_escalation: waitField.nullable().optional().describe('e.g. 30m; null: never escalate'),
    slack_webhook_url: text({ min: 1, max: 2000 }).nullable().optional().describe('https://hooks.slack.com/services/…; null: none'),
  }),
  output: settingsSchema,
  access: settingsAccess,
  interfaces: consoleOnly,
  handler: async (input, { db, secrets, caller, outbound }) =>
    wireOfSettings(
      await updateReviewNotificationSettings(
        db,
        secrets,
        caller.organization.id,
        { reviewEscalationMs: input.review_escalation, slackWebhookUrl: input.slack_webhook_url },
        outbound,
        { type: 'user', id: (caller.actor as PersonActor).userId },
      ),
    ),
});

const preferencesSchema = z.object({
  email: z.array(z.string()).describe('The notifications this person gets by email'),
  available: z
    .array(z.object({ kind: z.string().describe('The notification'), description: z.string().describe('When it is sent') }))
    .describe('Every notification a person can pick'),
});

const wireOfPreferences = (email: string[]): z.infer<typeof preferencesSchema> => ({
  email,
  available: Object.entries(personalNotifications).map(([kind, description]) => ({ kind, description })),
});

export const notificationPreferencesOperation = defineOperation({
  kind: 'read',
  name: 'notifications.preferences',
  family: 'notifications',
  summary: 'Your email notifications',
  description: 'Which notifications the signed-in person gets by email.',
  method: 'GET',
  path: '/notifications/preferences',
  list: false,
  input: z.strictObject({}),
  output: preferencesSchema,
  access: { person: { roles: reviewerRoles } },
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => wireOfPreferences(await findPersonalNotifications(db, (caller.actor as PersonActor).userId)),
});

export const updateNotificationPreferencesOperation = defineOperation({
  kind: 'person_action',
  name: 'notifications.update_preferences',
  family: 'notifications',
  summary: 'Choose your email notifications',
  description: 'The notifications the signed-in person gets by email; the rest are not sent to them.',
  method: 'PATCH',
  path: '/notifications/preferences',
  input: z.strictObject({
    email: z.array(z.enum(Object.keys(personalNotifications) as [string, ...string[]])).max(10).describe('The notifications to get by email'),
  }),
  output: preferencesSchema,
  access: { person: { roles: reviewerRoles } },
  interfaces: consoleOnly,
  handler: async (input, { db, caller }) => wireOfPreferences(await updatePersonalNotifications(db, (caller.actor as PersonActor).userId, input.email)),
});

export const notificationOperations = [
  reviewNotificationSettingsOperation,
  updateReviewNotificationSettingsOperation,
  notificationPreferencesOperation,
  updateNotificationPreferencesOperation,
];
