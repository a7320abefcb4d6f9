import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { SupervisionStep } from '../domain/notify/notifications';

/**
 * Telling people: an SMTP server or Slack away is retried; from its fifth attempt the step records what it could
 * not send and goes on (activities/index.ts), so that the next tier is still told at its time.
 */
const telling = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute' },
});

/**
 * A held write's people: its reviewers are told at once; while it waits, each escalation tier (admins, then
 * owners) is told after the organization's wait, on a durable timer. Ends when the review is decided or expires,
 * or no tier is left. The relay starts it beside the review's event (workflows/webhooks.ts).
 */
export async function superviseReview(reviewId: string): Promise<{ told: string[] }> {
  const told: string[] = [];
  let tier = 0;
  for (;;) {
    const step: SupervisionStep = await telling.superviseReviewStep(reviewId, tier);
    if (step.told) told.push(step.told);
    if (step.status !== 'pending' || step.nextTier === null || step.escalateAfterMs === null) return { told };
    await sleep(step.escalateAfterMs);
    tier = step.nextTier;
  }
}
