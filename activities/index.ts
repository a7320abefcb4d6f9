import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { applyGatedWrite, recordApplyFailure, ReviewNotApprovedError } from '../domain/gate/apply';
import {
  reviewNotApprovedFailure,
  writeRefusedFailure,
  type DecidedChangeset,
  type DecidedWrite,
  type DecisionWithSettings,
  type GatedWriteRequest,
  type WriteRefusal,
} from '../domain/gate/contract';
import { decideGatedWrite } from '../domain/gate/decide';
import { decideAndApply } from '../domain/gate/decide-and-apply';
import { applyHeldChangeset, decideAndApplyChangeset } from '../domain/gate/changesets/decide';
import { expireReview, readReviewStatus } from '../domain/gate/reviews/verdicts';
import type { ReviewStatus } from '../domain/gate/reviews/state';
import type { GatedWrite } from '../domain/gate/writes';
import { AppError, asRefusal, type ErrorCode } from '../domain/kit/errors';
import { findGatedWrite } from '../domain/resources';
import { pruneExpiredRecords, type Pruned, type RetentionRules } from '../domain/usage/retention';
import { sealAllAuditChains } from '../domain/audit/ledger';
import {
  attemptDelivery,
  endpointOwnersToTell,
  markOwnersTold,
  planEventDeliveries,
  recordDeliveryFailed,
  type DeliverySettings,
  type PlannedEvent,
} from '../domain/notify/deliveries';
import { publicOnly } from '../domain/notify/outbound';
import type { SecretBox } from '../domain/kit/secret-box';
import type { Mailer } from '../domain/notify/mailer';
import { emitAuditHeads } from '../domain/notify/witness';
import { superviseReviewStep, tellOwnersEndpointDisabled, type SupervisionStep } from '../domain/notify/notifications';
import { alertOwners, type AlertOutcome } from '../domain/notify/owner-alerts';

export interface ActivityDependencies {
  db: Database;
  /** Opens the secrets kept sealed in the database: webhook signing secrets, the Slack webhook URL. */
  secrets: SecretBox;
  reviewExpiryMs: number;
  /** How often a held write re-reads its review, should a person's decision have reached it without a signal. */
  reviewRecheckMs?: number;
  /** What the retention schedule prunes (nothing when not given). */
  retention?: RetentionRules;
  clock?: () => Date;
  /**
   * Where webhooks and Slack messages may go and the links they carry; an endpoint is switched off after
   * `disableAfter` failed deliveries in a row; email goes through `mailer` (none: no email is sent).
   */
  webhooks?: DeliverySettings & { disableAfter: number; mailer?: Mailer };
}

/** The gated write's activities, built from their dependencies so tests can hand in their own. */
export function createActivities({
  db,
  secrets,
  reviewExpiryMs,
  reviewRecheckMs = 15 * 60 * 1000,
  retention = { callLogMs: undefined, reviewsMs: undefined },
  clock = () => new Date(),
  webhooks = { policy: publicOnly, publicUrl: 'http://localhost:3000', disableAfter: 5 },
}: ActivityDependencies) {
  /** When a review opened now expires. */
  const reviewExpiresAt = () => new Date(clock().getTime() + reviewExpiryMs);
  return {
    /** Asks the organization's policy about the write and records the decision (and review) it gives. */
    async decideGatedWrite(request: GatedWriteRequest): Promise<DecisionWithSettings> {
      return asActivityErrors(async () => {
        const recorded = await decideGatedWrite(db, writeNamed(request.operation), currentWorkflowId(), request, reviewExpiresAt());
        return { ...recorded, reviewRecheckMs };
      });
    },

    /** Decides and, for an Allow, applies in one transaction: the workflow runs it as a local activity. */
    async decideAndApplyGatedWrite(request: GatedWriteRequest): Promise<DecidedWrite & { reviewRecheckMs: number }> {
      return asActivityErrors(async () => {
        const decided = await decideAndApply(db, writeNamed(request.operation), currentWorkflowId(), request, reviewExpiresAt());
        return { ...decided, reviewRecheckMs };
      });
    },

    async applyGatedWrite(request: GatedWriteRequest, reviewId?: string): Promise<unknown> {
      return asActivityErrors(() => applyGatedWrite(db, writeNamed(request.operation), currentWorkflowId(), request, reviewId));
    },

    /** A changeset decided and, when every item is allowed, applied, in one transaction (the changeset workflow's local activity). */
    async decideAndApplyChangeset(request: GatedWriteRequest): Promise<DecidedChangeset & { reviewRecheckMs: number }> {
      return asActivityErrors(async () => {
        const decided = await decideAndApplyChangeset(db, findGatedWrite, currentWorkflowId(), request, reviewExpiresAt());
        return { ...decided, reviewRecheckMs };
      });
    },

    /** A held changeset a person approved, applied in one transaction (its approved items, for a divisible one). */
    async applyChangeset(request: GatedWriteRequest, reviewId: string): Promise<unknown> {
      return asActivityErrors(() => applyHeldChangeset(db, findGatedWrite, currentWorkflowId(), request, reviewId));
    },

    async recordApplyFailure(reviewId: string, failure: { code: ErrorCode; message: string }): Promise<void> {
      return asActivityErrors(() => recordApplyFailure(db, currentWorkflowId(), reviewId, failure));
    },

    async readReviewStatus(reviewId: string): Promise<ReviewStatus> {
      return asActivityErrors(() => readReviewStatus(db, reviewId));
    },

    async expireReview(reviewId: string): Promise<ReviewStatus> {
      return asActivityErrors(() => expireReview(db, reviewId));
    },

    /** What the retention rules no longer keep, removed (the retention schedule runs it). */
    async pruneExpiredRecords(): Promise<Pruned> {
      return pruneExpiredRecords(db, retention, clock());
    },

    /** Chains new audit events into each organization's ledger (the audit seal schedule runs it). */
    async sealAuditChains(): Promise<{ sealed: number; refused: number }> {
      const { sealed, refused } = await sealAllAuditChains(db, { now: clock() });
      return { sealed, refused: refused.length };
    },

    /** Each organization's ledger head to the endpoints that witness it (the daily audit witness schedule). */
    async emitAuditHeads(): Promise<number> {
      return emitAuditHeads(db, clock());
    },

    /** An outbox event's deliveries, one per endpoint that asks for it (workflows/webhooks.ts). */
    async planWebhookEvent(eventId: string): Promise<PlannedEvent> {
      return planEventDeliveries(db, eventId);
    },

    /** One attempt at a delivery; a receiver that does not accept it fails the attempt, for Temporal to retry. */
    async attemptWebhookDelivery(deliveryId: string): Promise<'delivered' | 'failed'> {
      const status = await attemptDelivery(db, secrets, deliveryId, { ...webhooks, signal: Context.current().cancellationSignal }, clock());
      return status === 'delivered' ? 'delivered' : 'failed';
    },

    /** A delivery that failed every attempt; its endpoint is switched off if it keeps failing. */
    async recordWebhookDeliveryFailed(deliveryId: string): Promise<{ disabled: boolean; ownersTold: number }> {
      const failed = await recordDeliveryFailed(db, deliveryId, webhooks.disableAfter);
      // Told apart from the switch (committed first), so that a retry after a failed send still tells them.
      const due = await endpointOwnersToTell(db, deliveryId);
      if (!due) return { disabled: failed?.disabled ?? false, ownersTold: 0 };
      const ownersTold = await tellOwnersEndpointDisabled(db, due.orgId, { id: due.endpointId, url: due.url }, webhooks);
      await markOwnersTold(db, due.endpointId);
      return { disabled: true, ownersTold };
    },

    /**
     * Tells a held write's reviewers, or escalates it to the next tier (workflows/notifications.ts). From the fifth
     * attempt, what cannot be sent is recorded in the answer rather than retried again.
     */
    async superviseReviewStep(reviewId: string, tier: number): Promise<SupervisionStep> {
      const tolerateFailures = Context.current().info.attempt >= 5;
      return superviseReviewStep(db, secrets, reviewId, tier, webhooks, { now: clock(), tolerateFailures });
    },

    /**
     * Emails an organization's owners an alert from the outbox (workflows/owner-alerts.ts). From the fifth attempt,
     * what cannot be sent is recorded in the answer rather than retried again.
     */
    async alertOwners(eventId: string): Promise<AlertOutcome> {
      const tolerateFailures = Context.current().info.attempt >= 5;
      return alertOwners(db, eventId, webhooks, { tolerateFailures });
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;

function writeNamed(name: string): GatedWrite {
  const write = findGatedWrite(name);
  if (!write) throw new AppError('not_found', `no gated write is named ${name}`);
  return write;
}

/** Decisions and writes are keyed on the workflow that runs them. */
function currentWorkflowId(): string {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!workflowId) throw ApplicationFailure.nonRetryable('gated-write activities run only inside a workflow');
  return workflowId;
}

async function asActivityErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toActivityFailure(error);
  }
}

/**
 * A refusal (see asRefusal: the write itself is wrong) is final and keeps its code, as the workflow contract
 * says; a held write that no person approved never runs. Anything else (connection or server trouble) is
 * returned as it is, for Temporal to retry.
 */
export function toActivityFailure(error: unknown): unknown {
  if (error instanceof ReviewNotApprovedError) {
    return ApplicationFailure.create({ message: error.message, type: reviewNotApprovedFailure, nonRetryable: true });
  }
  const refusal = asRefusal(error);
  if (!refusal) return error;
  const details: WriteRefusal = { code: refusal.code, ...(refusal.details ? { details: refusal.details } : {}) };
  return ApplicationFailure.create({ message: refusal.message, type: writeRefusedFailure, nonRetryable: true, details: [details] });
}
