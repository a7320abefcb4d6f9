import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { reviewNotApprovedFailure } from '../domain/gate/contract';

// How the gated write and the changeset run their activities: the same timeouts and retries for both.

/**
 * Deciding (and, for an Allow, applying) in one local activity takes milliseconds; a worker that dies in the middle
 * of one is noticed when the attempt times out, so the timeout is short enough for the retry to answer the caller
 * within its 30 s wait.
 */
export const quickly: ActivityOptions & LocalActivityOptions = {
  startToCloseTimeout: '8 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 8 },
};

/** Once a person approved, the write must happen: outages are retried for as long as it takes. */
export const persistently: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: [reviewNotApprovedFailure] },
};
