import { allHandlersFinished, condition, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  reviewNotApprovedFailure,
  type DecisionWithSettings,
  type GateAnswer,
  type GatedWriteOutcome,
  type GatedWriteRequest,
  type ReviewResolution,
} from '../domain/gate/contract';
import { refusalOf } from './refusal';
import { gateAnswerUpdate, reviewDecidedSignal } from './messages';

/**
 * Deciding and applying take milliseconds; a worker that dies in the middle of one is noticed when the attempt
 * times out, so the timeout is short enough for the retry to answer the caller within its 30 s wait.
 */
const quick = proxyActivities<Activities>({
  startToCloseTimeout: '8 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', maximumAttempts: 8 },
});

/** Once a person approved, the write must happen: outages are retried for as long as it takes. */
const persistent = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: [reviewNotApprovedFailure] },
});

/** The patch that made a refused write complete its workflow rather than fail it (issue 11). */
export const refusalsComplete = 'refusals-complete';

export async function gatedWrite(request: GatedWriteRequest): Promise<GatedWriteOutcome> {
  let answer: GateAnswer | undefined;
  let reviewNudged = false;
  setHandler(gateAnswerUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  setHandler(reviewDecidedSignal, () => {
    reviewNudged = true;
  });

  const finish = async (outcome: GatedWriteOutcome) => {
    await condition(allHandlersFinished);
    return outcome;
  };

  let decision: DecisionWithSettings;
  try {
    decision = await quick.decideGatedWrite(request);
    if (decision.decision === 'deny') {
      answer = { outcome: 'denied', decisionId: decision.decisionId, reason: decision.reason, policyIds: decision.policyIds };
      return await finish({ answer });
    }
    if (decision.decision === 'refused') {
      // Review was due but the organization's review queue is at its cap: nothing is held, nothing written.
      answer = {
        outcome: 'failed',
        code: 'review_queue_full',
        message: decision.reason,
        details: { decision_id: decision.decisionId, policy_ids: decision.policyIds },
      };
      return await finish({ answer });
    }
    if (decision.decision === 'allow') {
      const result = await quick.applyGatedWrite(request);
      answer = { outcome: 'applied', decisionId: decision.decisionId, reason: decision.reason, policyIds: decision.policyIds, result };
      return await finish({ answer });
    }
  } catch (error) {
    answer = failedAnswer(error);
    // A refusal (an unknown id, a stale If-Match) is an answer like a Deny: the run completes with it, and Failed
    // is left to what is broken. Runs started before this change failed with it, and still do on replay.
    if (refusalOf((error as { cause?: unknown }).cause) && patched(refusalsComplete)) return await finish({ answer });
    await condition(allHandlersFinished);
    throw error;
  }

  const review = decision.review!;
  answer = {
    outcome: 'pending_review',
    decisionId: decision.decisionId,
    reason: decision.reason,
    policyIds: decision.policyIds,
    review,
  };
  const deadline = Date.parse(review.expiresAt);
  let resolution: ReviewResolution | undefined;
  while (!resolution) {
    const remaining = deadline - Date.now();
    let status;
    if (remaining <= 0) {
      status = await persistent.expireReview(review.id);
    } else {
      // A signal wakes the wait at once; the periodic re-read covers a decision whose signal was lost.
      await condition(() => reviewNudged, Math.min(remaining, decision.reviewRecheckMs));
      reviewNudged = false;
      status = await persistent.readReviewStatus(review.id);
    }
    if (status === 'approved') resolution = await applyApproved(request, review.id);
    else if (status === 'denied' || status === 'expired') resolution = { status };
  }
  return finish({ answer, resolution });
}

/** An approved write that cannot be applied (it conflicts with the data now, say) is recorded, not retried forever. */
async function applyApproved(request: GatedWriteRequest, reviewId: string): Promise<ReviewResolution> {
  try {
    return { status: 'approved', result: await persistent.applyGatedWrite(request, reviewId) };
  } catch (error) {
    const { code, message } = failedAnswer(error);
    const failure = { code, message };
    await persistent.recordApplyFailure(reviewId, failure);
    return { status: 'approved', failure };
  }
}

/** What the caller is told of an activity that failed: the refusal it raised, or that the write could not be done. */
function failedAnswer(error: unknown): Extract<GateAnswer, { outcome: 'failed' }> {
  const refusal = refusalOf((error as { cause?: unknown }).cause);
  if (refusal) return { outcome: 'failed', code: refusal.code, message: refusal.message, details: refusal.details };
  return {
    outcome: 'failed',
    code: 'unavailable',
    message: `The write could not be completed (workflow ${workflowInfo().workflowId}); it was not applied. Try again later.`,
  };
}
