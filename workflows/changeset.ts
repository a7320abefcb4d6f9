import { allHandlersFinished, condition, patched, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  reviewNotApprovedFailure,
  type GateAnswer,
  type GatedWriteRequest,
  type GatedWriteResult,
  type ReviewResolution,
  type ReviewVerdict,
} from '../domain/gate/contract';
import { failedAnswer as answerOfFailure, failureTypeOf, refusalIn } from './refusal';
import { persistently, quickly } from './activity-options';
import { gateAnswerUpdate, reviewDecidedSignal, searchAttributes } from './messages';
import { withdrawalsEnd } from './gated-write';

// One workflow per changeset (domain/gate/changesets): its first step decides every item and, when all are
// allowed, applies them, in one local activity (one transaction); a held changeset waits for its one review as a
// held write does, and once approved is applied in one transaction by an activity retried until it is done.

const local = proxyLocalActivities<Activities>(quickly);

const persistent = proxyActivities<Activities>(persistently);

/** The changeset's workflow type (the api starts it with update-with-start, answered by gateAnswerUpdate). */
export async function changesetV1(request: GatedWriteRequest): Promise<GatedWriteResult> {
  let answer: GateAnswer | undefined;
  let told: ReviewVerdict | 'nudged' | undefined;
  setHandler(gateAnswerUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  setHandler(reviewDecidedSignal, (verdict?: ReviewVerdict) => {
    told = verdict === 'approved' || verdict === 'denied' ? verdict : 'nudged';
  });
  const finish = async (outcome: GatedWriteResult) => {
    await condition(allHandlersFinished);
    return outcome;
  };

  let decided;
  try {
    decided = await local.decideAndApplyChangeset(request);
  } catch (error) {
    answer = failedAnswer(error);
    if (refusalIn(error)) return await finish({ answer });
    await condition(allHandlersFinished);
    throw error;
  }
  upsertSearchAttributes([
    { key: searchAttributes.decision, value: decided.decision },
    ...(decided.decision === 'review' ? [{ key: searchAttributes.reviewStatus, value: 'pending' }] : []),
  ]);
  const { decisionId, reason, policyIds, items } = decided;
  if (decided.applied) {
    answer = { outcome: 'applied', decisionId, reason, policyIds, result: decided.applied.result };
    return await finish({ answer });
  }
  if (decided.decision === 'deny') {
    answer = { outcome: 'denied', decisionId, reason, policyIds, items };
    return await finish({ answer });
  }
  if (decided.decision === 'refused') {
    // Its key revoked before it was decided, or the review queue full: nothing is held, nothing written.
    const code = decided.refusal ?? 'review_queue_full';
    answer = { outcome: 'failed', code, message: reason, details: { decision_id: decisionId, policy_ids: policyIds, items } };
    return await finish({ answer });
  }

  const review = decided.review!;
  answer = { outcome: 'pending_review', decisionId, reason, policyIds, review, items };
  const deadline = Date.parse(review.expiresAt);
  let resolution: ReviewResolution | undefined;
  while (!resolution) {
    const remaining = deadline - Date.now();
    let status;
    if (remaining <= 0) {
      status = await persistent.expireReview(review.id);
    } else {
      await condition(() => told !== undefined, Math.min(remaining, decided.reviewRecheckMs));
      const said = told;
      told = undefined;
      if (said === 'approved') {
        resolution = await applyApproved(request, review.id, true);
        if (resolution) break;
      }
      status = await persistent.readReviewStatus(review.id);
    }
    // Withdrawn (the key revoked while the changeset waited) ends the run as a deny does; a run that older code kept
    // waiting past it replays as it ran (see withdrawalsEnd in ./gated-write.ts).
    if (status === 'approved') resolution = await applyApproved(request, review.id, false);
    else if (status === 'denied' || status === 'expired' || (status === 'withdrawn' && patched(withdrawalsEnd))) resolution = { status };
  }
  upsertSearchAttributes([{ key: searchAttributes.reviewStatus, value: resolution.status }]);
  return finish({ answer, resolution });
}

/** The approved changeset applied; one that cannot be (an item conflicts with the data now) is recorded as failed, whole. */
async function applyApproved(request: GatedWriteRequest, reviewId: string, unlessNotApproved: boolean): Promise<ReviewResolution | undefined> {
  try {
    return { status: 'approved', result: await persistent.applyChangeset(request, reviewId) };
  } catch (error) {
    if (unlessNotApproved && failureTypeOf(error) === reviewNotApprovedFailure) return undefined;
    const { code, message } = failedAnswer(error);
    await persistent.recordApplyFailure(reviewId, { code, message });
    return { status: 'approved', failure: { code, message } };
  }
}

function failedAnswer(error: unknown) {
  return answerOfFailure(error, `The changeset could not be completed (workflow ${workflowInfo().workflowId}); nothing of it was applied. Try again later.`);
}
