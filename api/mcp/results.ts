import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, errorStatus } from '../../domain/kit/errors';
import type { GateAnswer } from '../../domain/gate/decide';
import type { CompiledPolicySet } from '../../policy/engine';

// How operation outcomes read to an agent: plain text first (every client shows it), the same data as
// structured content for clients that read it.

/** How a tool call ended, for the activity record: kept beside the result, never sent to the agent. */
export interface ToolOutcome {
  /** ok, applied, pending_review, policy_denied, or the error code. */
  outcome: string;
  /** 200, or the HTTP status of the error, as REST would have answered. */
  status: number;
}

const outcomes = new WeakMap<CallToolResult, ToolOutcome>();

function withOutcome(result: CallToolResult, outcome: string, status: number): CallToolResult {
  outcomes.set(result, { outcome, status });
  return result;
}

/** The outcome of a result built here; a result built elsewhere is ok, or an error read from its text. */
export function outcomeOf(result: CallToolResult): ToolOutcome {
  const known = outcomes.get(result);
  if (known) return known;
  if (!result.isError) return { outcome: 'ok', status: 200 };
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  const code = /^Error ([a-z_]+):/.exec(text)?.[1];
  return code && code in errorStatus ? { outcome: code, status: errorStatus[code as keyof typeof errorStatus] } : { outcome: 'internal_error', status: 500 };
}

export function dataResult(data: unknown, summary?: string): CallToolResult {
  const structured = data as Record<string, unknown>;
  return {
    content: [{ type: 'text', text: `${summary ? `${summary}\n` : ''}${JSON.stringify(data, null, 2)}` }],
    structuredContent: structured,
  };
}

/** One error type, one way to say it to an agent: the code, the message, and what to fix. */
export function errorResult(error: AppError): CallToolResult {
  const fields = (error.details?.fields as { field: string; message: string }[] | undefined) ?? [];
  const lines = [`Error ${error.code}: ${error.message}`, ...fields.map((f) => `- ${f.field}: ${f.message}`)];
  const status = Number.isInteger(error.status) ? error.status : 500;
  return withOutcome({ isError: true, content: [{ type: 'text', text: lines.join('\n') }] }, error.code, status);
}

export interface GatedResultContext {
  /** The REST base, for links a person can follow. */
  apiBaseUrl: string;
  /** The organization's policies, to show the agent the rule that denied it. */
  policies?: CompiledPolicySet;
  operationSummary: string;
}

export function gateResult(answer: GateAnswer, context: GatedResultContext): CallToolResult {
  switch (answer.outcome) {
    case 'applied':
      return withOutcome(dataResult({ status: 'applied', record: answer.result }, `Done: ${context.operationSummary}.`), 'applied', 200);
    case 'pending_review': {
      const url = `${context.apiBaseUrl}/v1/reviews/${answer.review.id}`;
      const review = { id: answer.review.id, status: 'pending', url, expires_at: answer.review.expiresAt, reason: answer.reason };
      return withOutcome({
        content: [
          {
            type: 'text',
            text: [
              `Held for review, not written yet: ${answer.reason}.`,
              `A person with the reviewer role must approve it in the review queue (${url}) before it is applied; it expires ${answer.review.expiresAt} if nobody decides.`,
              `Tell the user, and follow it with the get_review_status tool (review_id "${answer.review.id}"). Do not submit the same write again.`,
            ].join('\n'),
          },
        ],
        structuredContent: { status: 'pending_review', review },
      }, 'pending_review', 200);
    }
    case 'denied': {
      const rules = answer.policyIds.map((id) => context.policies?.policies[id]).filter(Boolean);
      return withOutcome({
        isError: true,
        content: [
          {
            type: 'text',
            text: [
              `Denied by the organization's policy: ${answer.reason}. Nothing was written.`,
              rules.length
                ? `The rule that decided (Cedar):\n${rules.join('\n\n')}\nA write that does not match this rule may be allowed; change the request accordingly, or ask a person.`
                : 'No policy permits this write; ask a person to change the policy or to make the change themselves.',
            ].join('\n'),
          },
        ],
      }, 'policy_denied', errorStatus.policy_denied);
    }
    case 'failed':
      return errorResult(new AppError(answer.code as never, answer.message, answer.details));
  }
}
