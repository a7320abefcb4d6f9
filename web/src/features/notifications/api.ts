import { api, queryString } from '../../lib/api';
import type { Body, Data } from '../../lib/api-types';

/** How the organization's held writes are escalated and announced (owners and admins). */
export type ReviewNotificationSettings = Data<'notifications_settings'>;
/** A notification a person can pick: the service lists only those it takes (the list's schema says only string). */
type EmailChoice = Body<'notifications_update_preferences'>['email'][number];
type Available = Data<'notifications_preferences'>['available'][number] & { kind: EmailChoice };
/** The signed-in person's email notifications, and every one they could pick. */
export type NotificationPreferences = Omit<Data<'notifications_preferences'>, 'email' | 'available'> & { email: EmailChoice[]; available: Available[] };

/** The organization's Slack app: its Request URL, whether the signing secret is set, the bound workspace. */
export type SlackApp = Data<'notifications_slack_app'>;
/** A Slack user linked to the signed-in person. */
export type SlackLink = Data<'notifications_slack_links'>['links'][number];
/** What a one-time Slack link would link; null when it cannot be confirmed (used, expired, another organization's). */
export type SlackLinkOffer = Data<'notifications_slack_link_offer'>['offer'];

export const notificationsApi = {
  settings: () => api.get<ReviewNotificationSettings>('/v1/notifications/settings'),
  updateSettings: (change: Body<'notifications_update_settings'>) => api.patch<Data<'notifications_update_settings'>>('/v1/notifications/settings', change),
  preferences: () => api.get<NotificationPreferences>('/v1/notifications/preferences'),
  updatePreferences: (email: EmailChoice[]) =>
    api.patch<NotificationPreferences>('/v1/notifications/preferences', { email } satisfies Body<'notifications_update_preferences'>),
  slackApp: () => api.get<SlackApp>('/v1/notifications/slack-app'),
  updateSlackApp: (change: Body<'notifications_update_slack_app'>) => api.patch<SlackApp>('/v1/notifications/slack-app', change),
  slackLinks: () => api.get<Data<'notifications_slack_links'>>('/v1/notifications/slack-links'),
  removeSlackLink: (link: SlackLink) =>
    api.delete<Data<'notifications_remove_slack_link'>>(`/v1/notifications/slack-links?${queryString({ workspace: link.workspace, slack_user: link.slack_user })}`),
  /** A POST, though it changes nothing: the link's secret travels in the body, never in an address. */
  slackLinkOffer: async (token: string) =>
    (await api.post<Data<'notifications_slack_link_offer'>>('/v1/notifications/slack-link-offer', { token } satisfies Body<'notifications_slack_link_offer'>)).offer,
  /** Links the Slack user the offer shows, named: the one the person confirms is them. */
  confirmSlackLink: (token: string, slackUser: string) =>
    api.post<SlackLink>('/v1/notifications/slack-links', { token, slack_user: slackUser } satisfies Body<'notifications_confirm_slack_link'>),
};
