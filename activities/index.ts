import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { AppError } from '../domain/errors';
import { applyGatedWrite, recordDecision, ReviewNotApprovedError, type GatedWriteRequest, type RecordedDecision } from '../domain/gate';
import { gatedWrite } from '../domain/gated-writes';
import { loadCompiledPolicySet } from '../domain/policies';
import { expireReview, readReviewStatus, type ReviewStatus } from '../domain/reviews';
import { evaluatePolicy } from '../policy/engine';

export interface ActivityDependencies {
  db: Database;
  reviewExpiryMs: number;
  clock?: () => Date;
}

/** The gated write's activities, built from their dependencies so tests can hand in their own. */
export function createActivities({ db, reviewExpiryMs, clock = () => new Date() }: ActivityDependencies) {
  return {
    /** Asks the organization's policy about the write and records the decision (and review) it gives. */
    async decideGatedWrite(request: GatedWriteRequest): Promise<RecordedDecision> {
      return asActivityErrors(async () => {
        const write = gatedWrite(request.operation);
        if (!write) throw new AppError('not_found', `no gated write is named ${request.operation}`);
        const input = write.input.parse(request.input);
        const proposal = await write.propose(db, request.orgId, input);
        const { version, policySet } = await loadCompiledPolicySet(db, request.orgId);
        const context: Record<string, unknown> = { interface: request.interface, operation: request.operation };
        if (proposal.before) context.before = proposal.before;
        if (proposal.changes) context.changes = proposal.changes;
        const decided = evaluatePolicy(policySet, {
          principal: {
            type: 'ApiKey',
            id: request.apiKey.id,
            attrs: { label: request.apiKey.label, access: request.apiKey.access, abilities: request.apiKey.abilities },
          },
          action: request.operation,
          resource: { type: write.resourceType, id: proposal.resourceId, attrs: proposal.resource },
          context,
        });
        return recordDecision(db, {
          workflowId: currentWorkflowId(),
          request,
          decision: decided.decision,
          reason: decided.reason,
          policyIds: decided.policyIds,
          policyVersion: version,
          resource: proposal.resource,
          context,
          reviewExpiresAt: new Date(clock().getTime() + reviewExpiryMs),
        });
      });
    },

    async applyGatedWrite(request: GatedWriteRequest, reviewId?: string): Promise<unknown> {
      return asActivityErrors(() =>
        applyGatedWrite(db, currentWorkflowId(), request, reviewId),
      );
    },

    async readReviewStatus(reviewId: string): Promise<ReviewStatus> {
      return asActivityErrors(() => readReviewStatus(db, reviewId));
    },

    async expireReview(reviewId: string): Promise<ReviewStatus> {
      return asActivityErrors(() => expireReview(db, reviewId));
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Decisions and writes are keyed on the workflow that runs them. */
function currentWorkflowId(): string {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!workflowId) throw ApplicationFailure.nonRetryable('gated-write activities run only inside a workflow');
  return workflowId;
}

/** Refusals are final (no retry) and keep their code; anything else is retried by Temporal. */
async function asActivityErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) {
      throw ApplicationFailure.create({
        message: error.message,
        type: `AppError:${error.code}`,
        nonRetryable: true,
        details: error.details ? [error.details] : [],
      });
    }
    if (error instanceof ReviewNotApprovedError) {
      throw ApplicationFailure.create({ message: error.message, type: 'ReviewNotApproved', nonRetryable: true });
    }
    if (error instanceof Error && error.name === 'ZodError') {
      throw ApplicationFailure.create({ message: error.message, type: 'AppError:validation_failed', nonRetryable: true });
    }
    throw error;
  }
}
