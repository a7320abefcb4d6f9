import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ApiKeyActor } from '../../domain/identity/actors';
import { AppError } from '../../domain/kit/errors';
import { text } from '../../domain/kit/fields';
import type { Page } from '../../domain/kit/pagination';
import { loadCompiledPolicySet } from '../../domain/gate/policies';
import { asSeenByKey, getReview } from '../../domain/gate/reviews';
import { isAllowed } from '../catalog/access';
import { submitGatedWrite } from '../catalog/gated-write';
import type { Operation, OperationContext } from '../catalog/operation';
import { registerPrompts } from './prompts';
import { dataResult, errorResult, gateResult } from './results';
import { PostgresTaskStore, answeredBy, registerGatedWriteTool, taskCapabilities } from './tasks';

const instructions = `Gatehouse holds this organization's business data: tasks, projects, customers, calendar, invoices, products, bookings, expenses, work logs, the team roster and meeting notes. Start with whoami to see what this key may do.
Every write goes through the organization's policy: it is applied at once, held for a person's review (the result says so, with a review id to follow with get_review_status), or denied with the reason (change the request or ask a person). Never retry a write that is held for review.
Lists are paginated: pass next_cursor back as cursor for the next page.`;

const reviewRef = z
  .object({
    id: z.string().describe('The review id; follow it with get_review_status'),
    status: z.literal('pending'),
    url: z.string().describe('Where a person approves or denies it'),
    expires_at: z.string().describe('When the review expires if nobody decides (RFC 3339)'),
    reason: z.string().describe('Why the policy held the write'),
  })
  .describe('The review holding the write, when status is pending_review');

function outputSchemaOf(operation: Operation): z.ZodObject | undefined {
  if (operation.kind === 'read') {
    if (operation.list) {
      return z.object({
        items: operation.output,
        next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
      });
    }
    return operation.output instanceof z.ZodObject ? operation.output : undefined;
  }
  if (operation.kind === 'gated_write') {
    return z.object({
      status: z.enum(['applied', 'pending_review']).describe('applied: the write ran; pending_review: a person must approve it first'),
      record: operation.output.optional().describe('The record as written, when applied'),
      review: reviewRef.optional(),
    });
  }
  return undefined;
}

function annotationsOf(operation: Operation) {
  const reads = operation.kind === 'read';
  return {
    title: operation.summary,
    readOnlyHint: reads,
    destructiveHint: operation.kind === 'gated_write' && operation.destructive,
    idempotentHint: reads || operation.method === 'PATCH' || operation.method === 'DELETE',
    openWorldHint: false,
  };
}

/** A tool call that ran, for the activity record. */
export interface ToolCall {
  tool: string;
  /** The catalog operation, or the tool's name for tools that are not operations. */
  operation: string;
  result: CallToolResult;
  latencyMs: number;
}

export interface RunOptions {
  log: (error: unknown) => void;
  /** Told of every call once its result is ready; must return at once (record it in the background). */
  onToolCall?: (call: ToolCall) => void;
}

async function run(work: () => Promise<CallToolResult>, options: RunOptions, tool: string, operation = tool): Promise<CallToolResult> {
  const started = performance.now();
  const result = await settle(work, options.log);
  try {
    options.onToolCall?.({ tool, operation, result, latencyMs: performance.now() - started });
  } catch (error) {
    options.log(error);
  }
  return result;
}

async function settle(work: () => Promise<CallToolResult>, log: (error: unknown) => void): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) return errorResult(error);
    if (error instanceof z.ZodError) return errorResult(new AppError('validation_failed', error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')));
    log(error);
    return errorResult(new AppError('internal_error', 'Something went wrong on our side; it has been logged'));
  }
}

/**
 * An MCP server for one request's caller: one tool per catalog operation the key may use (a read-only
 * key sees no write tools; a hidden tool cannot be called), and the organization is never an argument.
 */
export function buildMcpServer(context: OperationContext, options: RunOptions & { version: string }): McpServer {
  // Gated writes run as MCP tasks for clients that ask; the store answers from PostgreSQL for this key only.
  const taskStore = new PostgresTaskStore({
    db: context.db,
    orgId: context.caller.organization.id,
    apiKeyId: (context.caller.actor as ApiKeyActor).keyId,
    apiBaseUrl: context.apiBaseUrl,
    catalog: context.catalog,
  });
  const server = new McpServer(
    { name: 'gatehouse', title: 'Gatehouse', version: options.version },
    { instructions, capabilities: taskCapabilities, taskStore },
  );
  registerPrompts(server);

  for (const operation of context.catalog) {
    if (!operation.tool || !isAllowed(operation, context.caller)) continue;
    const outputSchema = outputSchemaOf(operation);
    const config = {
      title: operation.summary,
      description: operation.description,
      inputSchema: operation.input,
      ...(outputSchema ? { outputSchema } : {}),
      annotations: annotationsOf(operation),
    };
    const call = (input: unknown) =>
      run(async () => {
        if (operation.kind === 'gated_write') {
          const submitted = await submitGatedWrite(operation, input, context);
          const policies =
            submitted.answer.outcome === 'denied' ? (await loadCompiledPolicySet(context.db, context.caller.organization.id)).policySet : undefined;
          const result = gateResult(submitted.answer, { apiBaseUrl: context.apiBaseUrl, policies, operationSummary: operation.summary.toLowerCase() });
          return answeredBy(result, submitted.workflowId);
        }
        const data = await operation.handler(input as never, context);
        if (operation.kind === 'read' && operation.list) {
          const page = data as Page<unknown>;
          return dataResult({ items: page.items, next_cursor: page.nextCursor });
        }
        return dataResult(data);
      }, options, operation.tool!, operation.name);
    if (operation.kind === 'gated_write') registerGatedWriteTool(server, operation.tool, config, call);
    else server.registerTool(operation.tool, config, call);
  }

  const key = context.caller.actor as ApiKeyActor;
  server.registerTool(
    'get_review_status',
    {
      title: 'Follow a held write',
      description:
        'The state of a write held for review: pending (a person has not decided yet), approved (with the record written, or why it could not be), denied, or expired. Use the review id a held write returned.',
      inputSchema: z.strictObject({ review_id: text({ max: 100 }).describe('The review id from the held write') }),
      outputSchema: z.object({
        id: z.string().describe('The review id'),
        status: z.enum(['pending', 'approved', 'denied', 'expired']).describe('Where the review stands'),
        operation: z.string().describe('The held write, e.g. tasks.create'),
        reason: z.string().describe('Why the policy held it'),
        expires_at: z.string().describe('When it expires if nobody decides (RFC 3339)'),
        decided_at: z.string().nullable().describe('When a person decided, or null'),
        comment: z.string().nullable().describe("The person's comment, or null"),
        applied: z.boolean().describe('True once the approved write has run'),
        result: z.unknown().describe('The record the approved write produced, once applied'),
        failure: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why an approved write could not be applied, or null'),
      }),
      annotations: { title: 'Follow a held write', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ review_id }) =>
      run(async () => {
        const review = asSeenByKey(await getReview(context.db, context.caller.organization.id, review_id), key.keyId);
        // A key follows its own held writes; reading others' takes reviews.read.
        if (review.submitted_by.api_key_id !== key.keyId && !key.abilities.includes('reviews.read')) {
          throw new AppError('not_found', `review ${review_id} was not found`);
        }
        return dataResult({
          id: review.id,
          status: review.status,
          operation: review.operation,
          reason: review.policy.reason,
          expires_at: review.expires_at,
          decided_at: review.decided_at,
          comment: review.comment,
          applied: review.applied_at !== null,
          result: review.result,
          failure: review.failure,
        });
      }, options, 'get_review_status'),
  );
  return server;
}
