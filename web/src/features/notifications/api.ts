import { api } from '../../lib/api';
import type { Body, Data } from '../../lib/api-types';

/** How the organization's held writes are escalated and announced (owners and admins). */
export type ReviewNotificationSettings = Data<'notifications_settings'>;
/** A notification a person can pick: the service lists only those it takes (the list's schema says only string). */
type EmailChoice = Body<'notifications_update_preferences'>['email'][number];
type Available = Data<'notifications_preferences'>['available'][number] & { kind: EmailChoice };
/** The signed-in person's email notifications, and every one they could pick. */
export type NotificationPreferences = Omit<Data<'notifications_preferences'>, 'email' | 'available'> & { email: EmailChoice[]; available: Available[] };

export const notificationsApi = {
  settings: () => api.get<ReviewNotificationSettings>('/v1/notifications/settings'),
  updateSettings: (change: Body<'notifications_update_settings'>) => api.patch<Data<'notifications_update_settings'>>('/v1/notifications/settings', change),
  preferences: () => api.get<NotificationPreferences>('/v1/notifications/preferences'),
  updatePreferences: (email: EmailChoice[]) =>
    api.patch<NotificationPreferences>('/v1/notifications/preferences', { email } satisfies Body<'notifications_update_preferences'>),
};
