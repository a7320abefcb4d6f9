import {
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { Activities } from '../activities';
import {
  reviewNotApprovedFailure,
  type DecisionWithSettings,
  type GateAnswer,
  type GatedWriteResult,
  type GatedWriteRequest,
  type ReviewResolution,
  type ReviewVerdict,
} from '../domain/gate/contract';
import { failedAnswer as answerOfFailure, failureTypeOf, refusalIn } from './refusal';
import { persistently, quickly } from './activity-options';
import { gateAnswerUpdate, reviewDecidedSignal, searchAttributes } from './messages';

/**
 * Deciding and applying take milliseconds; a worker that dies in the middle of one is noticed when the attempt
 * times out, so the timeout is short enough for the retry to answer the caller within its 30 s wait.
 */
const quick = proxyActivities<Activities>(quickly);

/**
 * Deciding and, for an Allow, applying in one transaction, run by the worker that runs the workflow task: no
 * activity task goes through Temporal, so the first answer costs one workflow task. A local activity runs at
 * least once; the transaction is keyed on the workflow id, so a retry after a crash finds it done or not at all.
 */
const local = proxyLocalActivities<Activities>(quickly);

/** The patch that made the first decision (and an Allow's write) one local activity (issue 12). */
export const decidedInOneStep = 'decided-in-one-step';

/** Once a person approved, the write must happen: outages are retried for as long as it takes. */
const persistent = proxyActivities<Activities>(persistently);

/** The patch that made a refused write complete its workflow rather than fail it (issue 11). */
export const refusalsComplete = 'refusals-complete';

/**
 * The patch that ends a run whose review was withdrawn (its key revoked while the write waited), in every workflow
 * type. Code before it read `withdrawn` as still waiting and waited on: a run it kept waiting replays so, and ends
 * at its next read on this code (test/histories/*-kept-waiting*). Called only when `withdrawn` is read, so that other
 * runs record no marker.
 */
export const withdrawalsEnd = 'withdrawals-end';

/**
 * What the gated write does differently by the version that started it. Each choice is made at the point where
 * the code branches, so that a run replays the way it first ran.
 */
interface Version {
  /** Whether the first step decides (and, for an Allow, applies) in one local activity. */
  decidesInOneStep(): boolean;
  /** Whether a write refused by an activity completes the run with the refusal (else the run fails). */
  completesRefusals(): boolean;
  /** Whether a signal that says "approved" goes straight to applying (the activity checks the review in the database). */
  appliesOnApprovalSignal: boolean;
  /** Whether the run keeps its decision and its review's status in search attributes, for operators to find it by. */
  recordsSearchAttributes: boolean;
}

/**
 * The workflow type the api starts: the first step in one local activity, and the decision and the review's
 * status kept in search attributes (the api sets the others when it starts the run). A new type rather than a
 * patch, as for gatedWriteV2: runs of the older types finish on their own code, below.
 */
export async function gatedWriteV3(request: GatedWriteRequest): Promise<GatedWriteResult> {
  return runGatedWrite(request, { decidesInOneStep: () => true, completesRefusals: () => true, appliesOnApprovalSignal: true, recordsSearchAttributes: true });
}

/**
 * The workflow type the api started since the gated write's first step became one local activity, until its runs
 * kept search attributes (gatedWriteV3). A new type rather than a third patch: a patch records a marker and a
 * search-attribute update in every run's history (two of an Allow's ten events), and runs of the older type
 * finish on its own code, below.
 */
export async function gatedWriteV2(request: GatedWriteRequest): Promise<GatedWriteResult> {
  return runGatedWrite(request, { decidesInOneStep: () => true, completesRefusals: () => true, appliesOnApprovalSignal: true, recordsSearchAttributes: false });
}

/**
 * The workflow type of runs started before gatedWriteV2 (held writes wait up to 30 days): every version of it
 * replays through its patches. The api no longer starts it.
 */
export async function gatedWrite(request: GatedWriteRequest): Promise<GatedWriteResult> {
  return runGatedWrite(request, {
    decidesInOneStep: () => patched(decidedInOneStep),
    completesRefusals: () => patched(refusalsComplete),
    appliesOnApprovalSignal: false,
    recordsSearchAttributes: false,
  });
}

async function runGatedWrite(request: GatedWriteRequest, version: Version): Promise<GatedWriteResult> {
  let answer: GateAnswer | undefined;
  // What the last signal said a person decided; 'nudged' when it did not say (older api processes).
  let told: ReviewVerdict | 'nudged' | undefined;
  setHandler(gateAnswerUpdate, async () => {
    await condition(() => answer !== undefined);
    return answer!;
  });
  setHandler(reviewDecidedSignal, (verdict?: ReviewVerdict) => {
    told = verdict === 'approved' || verdict === 'denied' ? verdict : 'nudged';
  });

  const record = (...pairs: SearchAttributeUpdatePair[]) => {
    if (version.recordsSearchAttributes) upsertSearchAttributes(pairs);
  };

  const finish = async (outcome: GatedWriteResult) => {
    await condition(allHandlersFinished);
    return outcome;
  };

  let decision: DecisionWithSettings;
  try {
    if (version.decidesInOneStep()) {
      const decided = await local.decideAndApplyGatedWrite(request);
      decision = decided;
      record(
        { key: searchAttributes.decision, value: decided.decision },
        ...(decided.decision === 'review' ? [{ key: searchAttributes.reviewStatus, value: 'pending' }] : []),
      );
      if (decided.applied) {
        const { decisionId, reason, policyIds } = decided;
        answer =
          'result' in decided.applied
            ? { outcome: 'applied', decisionId, reason, policyIds, result: decided.applied.result }
            : { outcome: 'failed', ...decided.applied.refusal };
        return await finish({ answer });
      }
    } else {
      decision = await quick.decideGatedWrite(request);
    }
    if (decision.decision === 'deny') {
      answer = { outcome: 'denied', decisionId: decision.decisionId, reason: decision.reason, policyIds: decision.policyIds };
      return await finish({ answer });
    }
    if (decision.decision === 'refused') {
      // The key was revoked before the write was decided, or Review was due but the organization's review queue
      // is at its cap: nothing is held, nothing written. (Decisions recorded before refusals named a cause were all
      // of a full queue.)
      answer = {
        outcome: 'failed',
        code: decision.refusal ?? 'review_queue_full',
        message: decision.reason,
        details: { decision_id: decision.decisionId, policy_ids: decision.policyIds },
      };
      return await finish({ answer });
    }
    if (decision.decision === 'allow') {
      // Runs started before decidedInOneStep: the write applied by an activity of its own.
      const result = await quick.applyGatedWrite(request);
      answer = { outcome: 'applied', decisionId: decision.decisionId, reason: decision.reason, policyIds: decision.policyIds, result };
      return await finish({ answer });
    }
  } catch (error) {
    answer = failedAnswer(error);
    // A refusal (an unknown id, a stale If-Match) is an answer like a Deny: the run completes with it, and Failed
    // is left to what is broken. Runs started before this change failed with it, and still do on replay.
    if (refusalIn(error) && version.completesRefusals()) return await finish({ answer });
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
      await condition(() => told !== undefined, Math.min(remaining, decision.reviewRecheckMs));
      const said = told;
      told = undefined;
      if (said === 'approved' && version.appliesOnApprovalSignal) {
        // Straight to the write: the activity applies it only if the review is approved in the database, so a
        // signal can never approve a write; one that was wrong is followed by a re-read.
        resolution = await applyApproved(request, review.id, { unlessNotApproved: true });
        if (resolution) break;
      }
      status = await persistent.readReviewStatus(review.id);
    }
    // Withdrawn (the key revoked while the write waited) ends the run as a deny does, read at the next re-read or at
    // once when nudged (reviewDecidedSignal); a run that older code kept waiting past it replays as it ran.
    if (status === 'approved') resolution = await applyApproved(request, review.id);
    else if (status === 'denied' || status === 'expired' || (status === 'withdrawn' && patched(withdrawalsEnd))) resolution = { status };
  }
  record({ key: searchAttributes.reviewStatus, value: resolution.status });
  return finish({ answer, resolution: resolution! });
}

/**
 * An approved write that cannot be applied (it conflicts with the data now, say) is recorded, not retried
 * forever. `unlessNotApproved`: nothing when the review turns out not to be approved (the caller re-reads it).
 */
async function applyApproved(request: GatedWriteRequest, reviewId: string): Promise<ReviewResolution>;
async function applyApproved(request: GatedWriteRequest, reviewId: string, options: { unlessNotApproved: true }): Promise<ReviewResolution | undefined>;
async function applyApproved(request: GatedWriteRequest, reviewId: string, options?: { unlessNotApproved: true }): Promise<ReviewResolution | undefined> {
  try {
    return { status: 'approved', result: await persistent.applyGatedWrite(request, reviewId) };
  } catch (error) {
    if (options?.unlessNotApproved && failureTypeOf(error) === reviewNotApprovedFailure) return undefined;
    const { code, message } = failedAnswer(error);
    const failure = { code, message };
    await persistent.recordApplyFailure(reviewId, failure);
    return { status: 'approved', failure };
  }
}

/** What the caller is told of an activity that failed: the refusal it raised, or that the write could not be done. */
function failedAnswer(error: unknown) {
  return answerOfFailure(error, `The write could not be completed (workflow ${workflowInfo().workflowId}); it was not applied. Try again later.`);
}
