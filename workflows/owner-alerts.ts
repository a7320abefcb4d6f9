import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AlertOutcome } from '../domain/notify/owner-alerts';

/**
 * Telling owners: an SMTP server away is retried; from its fifth attempt the activity answers what it could not
 * send rather than failing again (activities/index.ts), as a review's supervision does.
 */
const telling = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

/**
 * An alert to the organization's owners (domain/notify/owner-alerts.ts: an approval soon after a password reset by
 * someone else), emailed once. The outbox relay starts it for the alert's event (runtime/outbox-relay.ts).
 */
export async function alertOwners(eventId: string): Promise<AlertOutcome> {
  return telling.alertOwners(eventId);
}
