import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type CreateTaskResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { AppError } from '../../domain/kit/errors';
import { policyTexts } from '../../domain/gate/policies';
import type { ApiKeyActor } from '../../domain/identity/actors';
import { isAllowed } from '../catalog/access';
import type { Admission, CallPipeline } from '../catalog/call';
import { catalog, operationOfTool } from '../catalog/index';
import { isOfferedOn, type Operation } from '../catalog/operation';
import type { CallOutcome } from '../catalog/outcome';
import { registerPrompts } from './prompts';
import { errorResult, toolResult } from './results';
import { PostgresTaskStore, taskCapabilities } from './task-store';

const instructions = `Gatehouse holds this organization's business data: tasks, projects, customers, calendar, invoices, products, bookings, expenses, work logs, the team roster and meeting notes. Start with whoami to see what this key may do.
Every write goes through the organization's policy: it is applied at once, held for a person's review (the result says so, with a review id to follow with get_review_status), or denied with the reason (change the request or ask a person). Never retry a write that is held for review.
Lists are paginated: pass next_cursor back as cursor for the next page.`;

/**
 * The JSON Schema validator of every server this process builds (the SDK validates elicitation answers with it).
 * Each server would otherwise make an Ajv instance of its own, the largest part of building one per request;
 * it keeps no per-request state, only the schemas it compiled.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** What the host may hand the model at once while the task runs (2025-11-25, tools/call tasks). */
const modelImmediateResponse = 'io.modelcontextprotocol/model-immediate-response';


export interface McpServerOptions {
  pipeline: CallPipeline;
  /** The request's caller, admitted: an API key of an organization with API access. */
  admission: Admission & { admitted: true };
  db: Database;
  /** The REST base and the console's address, for links to a held write. */
  apiBaseUrl: string;
  publicUrl: string;
  version: string;
  /** Told of what failed on our side while the answer was made. */
  log: (error: unknown, message: string) => void;
}

/**
 * An MCP server for one request's caller: one tool per catalog operation the key may use (a read-only key sees
 * no write tools), the organization never an argument. Every tools/call goes through the call pipeline, as a
 * REST request does; gated writes run as MCP tasks for clients that ask.
 */
export function buildMcpServer({ pipeline, admission, db, apiBaseUrl, publicUrl, version, log }: McpServerOptions): McpServer {
  const { caller } = admission;
  const orgId = caller.organization.id;
  const taskStore = new PostgresTaskStore({ db, orgId, apiKeyId: (caller.actor as ApiKeyActor).keyId, apiBaseUrl, publicUrl });
  const server = new McpServer(
    { name: 'gatehouse', title: 'Gatehouse', version },
    { instructions, capabilities: taskCapabilities, taskStore, jsonSchemaValidator },
  );
  registerPrompts(server);

  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: catalog.filter((operation) => operation.tool && isAllowed(operation, caller)).map((operation) => toolOf(operation).tool),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult | CreateTaskResult> => {
    const { name, arguments: input = {}, task } = request.params;
    const operation = operationOfTool(name);
    const outcome = await pipeline.call(admission, { operation, tool: name, input });
    // A tool this key is not offered (tools/list leaves it out) is unknown to it: a protocol error, as MCP says, logged all the same.
    if (!operation?.tool || !isOfferedOn(operation, 'mcp') || !isAllowed(operation, caller)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 100)}. The tools this key may call are in tools/list.`);
    }
    try {
      const rules = outcome.kind === 'gated' && outcome.submitted.answer.outcome === 'denied' ? await policyTexts(db, orgId, outcome.submitted.answer.policyIds) : [];
      const result = toolResult(outcome, { summary: operation?.summary.toLowerCase() ?? name, rules });
      if (task && operation?.kind === 'gated_write') return await asTask(name, outcome, result, taskStore);
      return operation ? checkedAgainstSchema(operation, result, log) : result;
    } catch (error) {
      if (error instanceof McpError) throw error;
      log(error, `the answer of ${name} could not be made`);
      throw new McpError(ErrorCode.InternalError, 'Something went wrong on our side; it has been logged');
    }
  });
  return server;
}

/**
 * A result whose structured content does not match the tool's output schema is our mistake: the agent gets an
 * error rather than data its client would refuse, and the mismatch is logged. The check is the one an SDK client
 * makes, the tool's JSON Schema compiled once by Ajv (zod's parse of a page of records cost more than the read).
 */
function checkedAgainstSchema(operation: Operation, result: CallToolResult, log: McpServerOptions['log']): CallToolResult {
  const { validate } = toolOf(operation);
  if (!validate || result.isError) return result;
  const checked = validate(result.structuredContent);
  if (checked.valid) return result;
  log(new Error(checked.errorMessage), `the answer of ${operation.tool} does not match its output schema`);
  return errorResult(new AppError('internal_error', `The answer of ${operation.tool} did not match its output schema; it has been logged`));
}

/**
 * A task-augmented call of a gated write: refused before it ran, it is a protocol error and no task; else the
 * task follows the write (completed or failed at once, or working while it is held for review).
 */
async function asTask(tool: string, outcome: CallOutcome, result: CallToolResult, store: PostgresTaskStore): Promise<CreateTaskResult> {
  if (outcome.kind === 'refused') throw new McpError(ErrorCode.InvalidParams, `${outcome.error.code}: ${outcome.error.message}`);
  const answer = outcome.kind === 'gated' ? outcome.submitted.answer : undefined;
  const task = await store.record(
    tool,
    result,
    answer?.outcome === 'pending_review' ? { reviewId: answer.review.id } : { workflowId: outcome.kind === 'gated' ? outcome.submitted.workflowId : undefined },
  );
  if (task.status !== 'working') return { task };
  return { task, _meta: { [modelImmediateResponse]: `Held for review, not written yet. ${task.statusMessage ?? ''} Do not submit the same write again.` } };
}

type MadeTool = { tool: Tool; validate: JsonSchemaValidator<unknown> | undefined };
const tools = new Map<Operation, MadeTool>();

/** The tool as tools/list shows it, and the check of its structured content; the same for every key, so made once. */
function toolOf(operation: Operation): MadeTool {
  let made = tools.get(operation);
  if (!made) {
    const output = outputSchemaOf(operation);
    const tool: Tool = {
      name: operation.tool!,
      title: operation.summary,
      description: operation.description,
      inputSchema: jsonSchema(operation.input, 'input'),
      annotations: annotationsOf(operation),
      // Gated writes may run as tasks; nothing else does.
      execution: { taskSupport: operation.kind === 'gated_write' ? 'optional' : 'forbidden' },
      ...(output ? { outputSchema: jsonSchema(output, 'output') } : {}),
    };
    made = { tool, validate: tool.outputSchema ? jsonSchemaValidator.getValidator(tool.outputSchema as JsonSchemaType) : undefined };
    tools.set(operation, made);
  }
  return made;
}

/** JSON Schema as MCP clients expect it (draft 7), from the operation's zod schema. */
function jsonSchema(schema: z.ZodObject, io: 'input' | 'output') {
  return z.toJSONSchema(schema, { target: 'draft-7', io }) as Tool['inputSchema'];
}

const reviewRef = z
  .object({
    id: z.string().describe('The review id; follow it with get_review_status'),
    status: z.literal('pending'),
    url: z.string().describe('Where the review is read over the REST API'),
    web_url: z.string().describe("The review's page in the console, where a person approves or denies it: give it to the user"),
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
