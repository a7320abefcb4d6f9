import { ActivityFailure, ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { reviewPeopleWorkflowId, webhookDeliveryWorkflowId } from './messages';
import { superviseReview } from './notifications';

/** How long a delivery keeps trying: Temporal's retry policy for its attempts (WEBHOOK_RETRY_* settings). */
export interface DeliveryRetry {
  initialIntervalMs: number;
  maximumIntervalMs: number;
  backoffCoefficient: number;
  maximumAttempts: number;
}

/** Bookkeeping in the database: retried until the database answers. */
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * An outbox event, relayed: one delivery for each endpoint that asks for it, each a workflow of its own that
 * outlives this one; for a held write, its reviewers' supervision (telling them, then escalating), a workflow of its
 * own too. The outbox relay (runtime/outbox-relay.ts) started one run per event until 2026-11-27; it now plans and
 * starts the same children itself. Kept for the runs started before (and their histories' replay).
 */
export async function relayWebhookEvent(eventId: string, retry: DeliveryRetry): Promise<{ deliveries: string[] }> {
  const planned = await bookkeeping.planWebhookEvent(eventId);
  for (const deliveryId of planned.deliveryIds) {
    await startChild(deliverWebhook, {
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      args: [deliveryId, retry],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  }
  if (planned.type === 'review.created' && planned.reviewId) {
    await startChild(superviseReview, {
      workflowId: reviewPeopleWorkflowId(planned.reviewId),
      args: [planned.reviewId],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  }
  return { deliveries: planned.deliveryIds };
}

/**
 * One delivery: attempts with backoff (each attempt recorded in the delivery log) until the receiver accepts it
 * or the attempts run out; then it is recorded as failed, which switches off an endpoint that keeps failing.
 */
export async function deliverWebhook(deliveryId: string, retry: DeliveryRetry): Promise<'delivered' | 'failed'> {
  const attempts = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: retry.initialIntervalMs,
      maximumInterval: retry.maximumIntervalMs,
      backoffCoefficient: retry.backoffCoefficient,
      maximumAttempts: retry.maximumAttempts,
    },
  });
  try {
    const status = await attempts.attemptWebhookDelivery(deliveryId);
    if (status === 'delivered') return 'delivered';
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
  }
  await bookkeeping.recordWebhookDeliveryFailed(deliveryId);
  return 'failed';
}
