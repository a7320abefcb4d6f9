import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { GateAnswer, ReviewVerdict } from '../domain/gate/contract';

/**
 * Answers the first decision of a gated write: at once for Deny and Review, once the write is applied
 * for Allow. The api sends it with the workflow's start (update-with-start), so one round trip decides.
 */
export const gateAnswerUpdate = defineUpdate<GateAnswer>('gateAnswer');

/**
 * Tells a waiting workflow that a person decided its review, and how. The verdict only saves a step: on
 * "approved" the workflow goes straight to the apply activity, which writes only if the review record says
 * approved; on anything else it reads the record. A signal sent around the application can never approve a
 * write. (Runs of the older workflow type ignore the verdict and always read the record.) Sent without a verdict
 * it is a nudge: the workflow reads the record at once (a withdrawn review, say), as every version of it always has.
 */
export const reviewDecidedSignal = defineSignal<[verdict?: ReviewVerdict]>('reviewDecided');

/** The workflow id of a webhook delivery (one per delivery, whoever starts it: the outbox relay, an older relay run). */
export const webhookDeliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

/** The workflow id of a held write's reviewers' supervision (telling them, then escalating): one per review. */
export const reviewPeopleWorkflowId = (reviewId: string) => `review-people-${reviewId}`;

/** The workflow id of an alert to an organization's owners: one per alert (its outbox event). */
export const ownerAlertWorkflowId = (eventId: string) => `owner-alert-${eventId}`;

/** The workflow type the api starts (see workflows/gated-write.ts for the older one, kept for its runs). */
export const gatedWriteWorkflowType = 'gatedWriteV3';

/** The workflow type of a changeset (several gated writes submitted as one, workflows/changeset.ts). */
export const changesetWorkflowType = 'changesetV1';

/**
 * What an operator finds a gated write by in Temporal (`temporal workflow list --query …`, the Web UI). The
 * first five are set when the api starts the workflow; the last two by the workflow as it moves on.
 */
export const searchAttributes = {
  /** The organization's slug. */
  organization: defineSearchAttributeKey('GatehouseOrganization', SearchAttributeType.KEYWORD),
  /** The write: `tasks.create`, `customers.update`, … */
  operation: defineSearchAttributeKey('GatehouseOperation', SearchAttributeType.KEYWORD),
  /** The resource family the write changes: `tasks`, `customers`, … */
  resource: defineSearchAttributeKey('GatehouseResource', SearchAttributeType.KEYWORD),
  /** The id of the API key that sent the write (`key_…`). */
  apiKey: defineSearchAttributeKey('GatehouseApiKey', SearchAttributeType.KEYWORD),
  /** `rest` or `mcp`. */
  interface: defineSearchAttributeKey('GatehouseInterface', SearchAttributeType.KEYWORD),
  /** The policy's decision: `allow`, `review` or `deny`; `refused` when the key was revoked first, or a review was due and the queue was full. */
  decision: defineSearchAttributeKey('GatehouseDecision', SearchAttributeType.KEYWORD),
  /** A held write's review: `pending`, then `approved`, `denied`, `expired` or `withdrawn`. */
  reviewStatus: defineSearchAttributeKey('GatehouseReviewStatus', SearchAttributeType.KEYWORD),
} as const;
