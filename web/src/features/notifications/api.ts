import { api } from '../../lib/api';

/** How the organization's held writes are escalated and announced (owners and admins). */
export interface ReviewNotificationSettings {
  /** A wait as people write it (30m, 2h, 45s); null: a review never escalates. */
  review_escalation: string | null;
  /** A Slack-compatible incoming webhook told of each held write and escalation; null: none. */
  slack_webhook_url: string | null;
}

export interface AvailableNotification {
  kind: string;
  description: string;
}

/** The signed-in person's email notifications, and every one they could pick. */
export interface NotificationPreferences {
  email: string[];
  available: AvailableNotification[];
}

export const notificationsApi = {
  settings: () => api.get<ReviewNotificationSettings>('/v1/notifications/settings'),
  updateSettings: (change: Partial<ReviewNotificationSettings>) => api.patch<ReviewNotificationSettings>('/v1/notifications/settings', change),
  preferences: () => api.get<NotificationPreferences>('/v1/notifications/preferences'),
  updatePreferences: (email: string[]) => api.patch<NotificationPreferences>('/v1/notifications/preferences', { email }),
};
