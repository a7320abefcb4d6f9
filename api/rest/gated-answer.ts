import { AppError, errorStatus, type ErrorCode } from '../../domain/kit/errors';
import type { GateAnswer } from '../../domain/gate/decide';
import type { GatedWriteOperation } from '../catalog/operation';
import { errorBody } from './errors';

export interface HttpAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** How REST tells the three decisions: 2xx with the record, 202 pending_review with the review, 403 policy_denied. */
export function gateAnswerToHttp(operation: GatedWriteOperation, answer: GateAnswer, apiBaseUrl: string): HttpAnswer {
  switch (answer.outcome) {
    case 'applied':
      return { status: operation.successStatus, body: { success: true, data: answer.result }, headers: {} };
    case 'pending_review': {
      const url = `${apiBaseUrl}/v1/reviews/${answer.review.id}`;
      return {
        status: 202,
        headers: { location: url },
        body: {
          success: false,
          error: {
            code: 'pending_review',
            message: `Held for review: ${answer.reason}. A person must approve it in the review queue before it is written.`,
            details: { decision_id: answer.decisionId, policy_ids: answer.policyIds },
          },
          review: { id: answer.review.id, status: 'pending', url, expires_at: answer.review.expiresAt },
        },
      };
    }
    case 'denied':
      return {
        status: 403,
        headers: {},
        body: {
          success: false,
          error: {
            code: 'policy_denied',
            message: `Denied by policy: ${answer.reason}`,
            details: { reason: answer.reason, decision_id: answer.decisionId, policy_ids: answer.policyIds },
          },
        },
      };
    case 'failed': {
      const code = (answer.code in errorStatus ? answer.code : 'unavailable') as ErrorCode;
      const error = new AppError(code, answer.message, answer.details);
      return { status: error.status, headers: {}, body: errorBody(error) };
    }
  }
}
