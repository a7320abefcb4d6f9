import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { AppError } from '../domain/kit/errors';
import {
  applyGatedWrite,
  recordApplyFailure,
  recordDecision,
  ReviewNotApprovedError,
  type DecisionWithSettings,
  type GatedWriteRequest,
} from '../domain/gate/decide';
import { gatedWrite } from '../domain/gate/writes';
import { loadCompiledPolicySet } from '../domain/gate/policies';
import { expireReview, readReviewStatus, type ReviewStatus } from '../domain/gate/reviews';
import { evaluatePolicy } from '../policy/engine';

export interface ActivityDependencies {
  db: Database;
  reviewExpiryMs: number;
  /** How often a held write re-reads its review, should a person's decision have reached it without a signal. */
  reviewRecheckMs?: number;
  clock?: () => Date;
}

/** The gated write's activities, built from their dependencies so tests can hand in their own. */
export function createActivities({ db, reviewExpiryMs, reviewRecheckMs = 15 * 60 * 1000, clock = () => new Date() }: ActivityDependencies) {
  return {
    /** Asks the organization's policy about the write and records the decision (and review) it gives. */
    async decideGatedWrite(request: GatedWriteRequest): Promise<DecisionWithSettings> {
      return asActivityErrors(async () => {
        const write = gatedWrite(request.operation);
        if (!write) throw new AppError('not_found', `no gated write is named ${request.operation}`);
        const input = write.input.parse(request.input);
        const proposal = await write.propose(db, request.orgId, input, { apiKeyId: request.apiKey.id });
        const { version, policySet } = await loadCompiledPolicySet(db, request.orgId);
        const context: Record<string, unknown> = { interface: request.interface, operation: request.operation };
        if (proposal.before) context.before = proposal.before;
        if (proposal.changes) context.changes = proposal.changes;
        Object.assign(context, proposal.context);
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
        const recorded = await recordDecision(db, {
          workflowId: currentWorkflowId(),
          request,
          decision: decided.decision,
          reason: decided.reason,
          policyIds: decided.policyIds,
          policyErrors: decided.errors,
          policyVersion: version,
          resource: proposal.resource,
          context,
          reviewExpiresAt: new Date(clock().getTime() + reviewExpiryMs),
        });
        return { ...recorded, reviewRecheckMs };
      });
    },

    async applyGatedWrite(request: GatedWriteRequest, reviewId?: string): Promise<unknown> {
      return asActivityErrors(() => applyGatedWrite(db, currentWorkflowId(), request, reviewId));
    },

    async recordApplyFailure(reviewId: string, failure: { code: string; message: string }): Promise<void> {
      return asActivityErrors(() => recordApplyFailure(db, currentWorkflowId(), reviewId, failure));
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
export async function asActivityErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toActivityFailure(error);
  }
}

/**
 * PostgreSQL's data exceptions (class 22) and constraint violations (class 23) say the write itself is
 * wrong: retrying cannot help. Connection and server trouble (every other class) is retried.
 */
export function toActivityFailure(error: unknown): unknown {
  if (error instanceof AppError) {
    return ApplicationFailure.create({
      message: error.message,
      type: `AppError:${error.code}`,
      nonRetryable: true,
      details: error.details ? [error.details] : [],
    });
  }
  if (error instanceof ReviewNotApprovedError) {
    return ApplicationFailure.create({ message: error.message, type: 'ReviewNotApproved', nonRetryable: true });
  }
  if (error instanceof Error && error.name === 'ZodError') {
    return ApplicationFailure.create({ message: error.message, type: 'AppError:validation_failed', nonRetryable: true });
  }
  const sqlState = (error as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^2[23][0-9A-Z]{3}$/.test(sqlState)) {
    const code = sqlState.startsWith('22') ? 'validation_failed' : 'conflict';
    const messages: Record<string, string> = {
      validation_failed: 'The database refused a value of this write',
      conflict:
        sqlState === '23503'
          ? 'The write conflicts with other records: the record is still referred to (by tasks or work logs, say), or refers to one that is gone'
          : 'The write conflicts with the data as it is now',
    };
    return ApplicationFailure.create({
      message: messages[code]!,
      type: `AppError:${code}`,
      nonRetryable: true,
    });
  }
  return error;
}
