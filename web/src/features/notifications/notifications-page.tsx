import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { EmailPreferences } from './email-preferences';
import { EscalationSettings } from './escalation-settings';
import { SlackAppSettings } from './slack-app-settings';
import { SlackLinks } from './slack-links';

/** Settings → Notifications: each reviewer's own email, and (owners and admins) how held writes escalate and reach Slack. */
export function NotificationsPage() {
  useDocumentTitle('Notifications');
  const { can } = useSignedIn();
  return (
    <>
      <p className="breadcrumbs">Settings</p>
      <h1>Notifications</h1>
      <p className="lede">
        Who is told when an agent's write is held for review, and how. Every review also has its own page in the review queue, whatever is sent.
      </p>
      <EmailPreferences />
      <SlackLinks />
      {can('manageWebhooks') && <EscalationSettings />}
      {can('manageWebhooks') && <SlackAppSettings />}
    </>
  );
}
