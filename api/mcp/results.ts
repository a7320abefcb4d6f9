import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, type ErrorCode } from '../../domain/kit/errors';
import type { CallOutcome } from '../catalog/outcome';
import type { SubmittedWrite } from '../catalog/submit-write';

// How call outcomes read to an agent: plain text first (every client shows it), the same data as structured
// content for clients that read it.

export interface ResultContext {
  /** The operation's summary, lower-cased, for "Done: create a task." */
  summary: string;
}

/** A call's outcome as an MCP tool result. */
export function toolResult(outcome: CallOutcome, context: ResultContext): CallToolResult {
  switch (outcome.kind) {
    case 'data':
      return dataResult(outcome.data);
    case 'page':
      return dataResult({ items: outcome.page.items, next_cursor: outcome.page.nextCursor });
    case 'gated':
      return gateResult(outcome.submitted, context);
    case 'refused':
    case 'failed':
      return errorResult(outcome.error);
  }
}

/**
 * Data as text and as structured content. The text is compact JSON: a model reads it as well as indented JSON,
 * in fewer tokens, and the answer (which carries the data twice) stays small.
 */
export function dataResult(data: unknown, summary?: string): CallToolResult {
  return {
    content: [{ type: 'text', text: `${summary ? `${summary}\n` : ''}${JSON.stringify(data)}` }],
    structuredContent: data as Record<string, unknown>,
  };
}

/** One error type, one way to say it to an agent: the code, the message, and each field to fix. */
export function errorResult(error: AppError): CallToolResult {
  const fields = (error.details?.fields as { field: string; message: string }[] | undefined) ?? [];
  // A validation message names its fields already; others get them listed.
  const unnamed = fields.filter((f) => !error.message.includes(`${f.field}: ${f.message}`));
  const lines = [errorText(error.code, error.message), ...unnamed.map((f) => `- ${f.field}: ${f.message}`)];
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }] };
}

/** The first line of every error an agent reads: the code to branch on, then what went wrong. */
export function errorText(code: ErrorCode, message: string): string {
  return `Error ${code}: ${message}`;
}

function gateResult({ answer, review: links, remediation, workflowId }: SubmittedWrite, context: ResultContext): CallToolResult {
  switch (answer.outcome) {
    case 'applied':
      return dataResult({ status: 'applied', record: answer.result, write: workflowId }, `Done: ${context.summary}.`);
    case 'pending_review': {
      const { url, webUrl } = links!;
      const review = { id: answer.review.id, status: 'pending', url, web_url: webUrl, expires_at: answer.review.expiresAt, reason: answer.reason };
      return {
        content: [
          {
            type: 'text',
            text: [
              `Held for review, not written yet: ${answer.reason}.`,
              `A person with the reviewer role must approve it in the review queue before it is applied; it expires ${answer.review.expiresAt} if nobody decides.`,
              `Tell the user; they decide it here: ${webUrl}`,
              `Follow it with the get_review_status tool (review_id "${answer.review.id}", or ${url}). Do not submit the same write again.`,
              ...(remediation ? [remediation.next_step] : []),
            ].join('\n'),
          },
        ],
        structuredContent: { status: 'pending_review', review, ...(remediation ? { remediation } : {}), ...(answer.items ? { items: answer.items } : {}) },
      };
    }
    case 'denied':
      // An error result carries no structured content (a client checks that against the tool's output schema), so
      // the remediation comes as a second text block of JSON, after the words.
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: [`Denied by the organization's policy: ${answer.reason}. Nothing was written.`, ...(remediation ? [remediation.next_step] : [])].join('\n'),
          },
          ...(remediation || answer.items ? [{ type: 'text' as const, text: JSON.stringify({ remediation, ...(answer.items ? { items: answer.items } : {}) }) }] : []),
        ],
      };
    case 'failed':
      return errorResult(new AppError(answer.code, answer.message, answer.details));
  }
}
