import { AppError } from '../../domain/kit/errors';
import { etagOf } from '../../domain/kit/rows';
import type { ChangesetItemOutcome } from '../../domain/gate/contract';
import type { Operation } from '../catalog/operation';
import { statusOf, type CallOutcome } from '../catalog/outcome';
import type { SubmittedWrite } from '../catalog/submit-write';
import { errorBody } from './http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A call's outcome as REST answers it: the envelope, the status, and the headers that go with them. */
export function httpAnswer(operation: Operation | undefined, outcome: CallOutcome): HttpAnswer {
  const status = statusOf(operation, outcome);
  switch (outcome.kind) {
    case 'data':
      return { status, headers: etagHeader(outcome.data), body: { success: true, data: outcome.data } };
    case 'page':
      return { status, headers: {}, body: { success: true, data: outcome.page.items, page: { next_cursor: outcome.page.nextCursor } } };
    case 'refused':
    case 'failed':
      return { status, headers: retryAfter(outcome.error), body: errorBody(outcome.error) };
    case 'gated': {
      const { answer, workflowId, replayed } = outcome.submitted;
      const gated = gateAnswerBody(outcome.submitted);
      const headers: Record<string, string> = {
        ...gated.headers,
        ...etagHeader(answer.outcome === 'applied' ? answer.result : undefined),
        'x-gatehouse-workflow-id': workflowId,
        ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
      };
      return { status, headers, body: gated.body };
    }
  }
}

/** How REST tells the decisions: the record, 202 pending_review with the review, 403 policy_denied, or the error. */
function gateAnswerBody({ answer, review: links, remediation }: SubmittedWrite): { body: unknown; headers: Record<string, string> } {
  switch (answer.outcome) {
    case 'applied':
      return { headers: {}, body: { success: true, data: answer.result } };
    case 'pending_review': {
      const { url, webUrl } = links!;
      return {
        headers: { location: url },
        body: {
          success: false,
          error: {
            code: 'pending_review',
            message: `Held for review: ${answer.reason}. A person must approve it in the review queue before it is written.`,
            details: { decision_id: answer.decisionId, policy_ids: answer.policyIds, remediation, ...changesetDetails(answer.items) },
          },
          review: { id: answer.review.id, status: 'pending', url, web_url: webUrl, expires_at: answer.review.expiresAt },
        },
      };
    }
    case 'denied':
      return {
        headers: {},
        body: {
          success: false,
          error: {
            code: 'policy_denied',
            message: `Denied by policy: ${answer.reason}`,
            details: { reason: answer.reason, decision_id: answer.decisionId, policy_ids: answer.policyIds, remediation, ...changesetDetails(answer.items) },
          },
        },
      };
    case 'failed':
      return { headers: {}, body: errorBody(new AppError(answer.code, answer.message, answer.details)) };
  }
}

/** A limit that refused a call in the pipeline (a key's write cap) says when to retry, as admission's limits do. */
function retryAfter(error: AppError): Record<string, string> {
  const seconds = error.code === 'rate_limited' ? error.details?.retry_after_seconds : undefined;
  return typeof seconds === 'number' ? { 'retry-after': String(seconds) } : {};
}

/** A single record's ETag is its version, for If-Match on the next update. */
function etagHeader(data: unknown): Record<string, string> {
  const version = (data as { version?: unknown } | null)?.version;
  return typeof version === 'number' ? { etag: etagOf(version) } : {};
}

/** A changeset's every item (decision, reason, rules, remediation), and which items decided it: held or denied. */
function changesetDetails(items: ChangesetItemOutcome[] | undefined): Record<string, unknown> {
  if (!items) return {};
  return {
    items,
    denied_items: items.filter((item) => item.decision === 'deny').map((item) => item.index),
    held_items: items.filter((item) => item.decision === 'review').map((item) => item.index),
  };
}
