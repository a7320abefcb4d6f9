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
import { z } from 'zod';
import type { Database } from '../../db/database';
import { remediationSchema } from '../../domain/gate/remediation';
import type { ApiKeyActor } from '../../domain/identity/actors';
import { isAllowed } from '../catalog/access';
import { changesetResultSchema } from '../catalog/changesets';
import type { Admission, CallPipeline } from '../catalog/call';
import { catalog, operationOfTool } from '../catalog/index';
import { isOfferedOn, type Operation } from '../catalog/operation';
import type { CallOutcome } from '../catalog/outcome';
import { registerPrompts } from './prompts';
import { toolResult } from './results';
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
  /** The method of the request the server is built for: what it never reaches is left out (see promptsReachedBy). */
  method: string | undefined;
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
export function buildMcpServer({ method, pipeline, admission, db, apiBaseUrl, publicUrl, version, log }: McpServerOptions): McpServer {
  const { caller } = admission;
  const orgId = caller.organization.id;
  const taskStore = new PostgresTaskStore({ db, orgId, apiKeyId: (caller.actor as ApiKeyActor).keyId, apiBaseUrl, publicUrl });
  const server = new McpServer(
    { name: 'gatehouse', title: 'Gatehouse', version },
    { instructions, capabilities: taskCapabilities, taskStore, jsonSchemaValidator },
  );
  if (promptsReachedBy(method)) registerPrompts(server);

  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: catalog.filter((operation) => operation.tool && isAllowed(operation, caller)).map(toolOf),
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
      const result = toolResult(outcome, { summary: operation?.summary.toLowerCase() ?? name });
      if (task && operation?.kind === 'gated_write') return await asTask(name, outcome, result, taskStore);
      return result;
    } catch (error) {
      if (error instanceof McpError) throw error;
      log(error, `the answer of ${name} could not be made`);
      throw new McpError(ErrorCode.InternalError, 'Something went wrong on our side; it has been logged');
    }
  });
  return server;
}

/**
 * Whether a request of this method can reach the prompts: a tool call, a tool list or a task request never does,
 * and a server built per request for one of those (the agents' everyday calls) skips registering them.
 * initialize does (the prompts capability), as do prompts/* and completion/complete.
 */
function promptsReachedBy(method: string | undefined): boolean {
  return !(method === 'ping' || method?.startsWith('tools/') || method?.startsWith('tasks/'));
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

const tools = new Map<Operation, Tool>();

/**
 * The tool as tools/list shows it; the same for every key, so made once. Its structured content is not checked
 * against its output schema on every call (the REST API does not check its answers either): the tests call every
 * read tool through the SDK's client, which does, on each organization's data.
 */
function toolOf(operation: Operation): Tool {
  let tool = tools.get(operation);
  if (!tool) {
    const output = outputSchemaOf(operation);
    tool = {
      name: operation.tool!,
      title: operation.summary,
      description: operation.description,
      inputSchema: jsonSchema(operation.input, 'input'),
      annotations: annotationsOf(operation),
      // Gated writes may run as tasks; nothing else does.
      execution: { taskSupport: operation.kind === 'gated_write' ? 'optional' : 'forbidden' },
      ...(output ? { outputSchema: jsonSchema(output, 'output') } : {}),
    };
    tools.set(operation, tool);
  }
  return tool;
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
      write: z.string().optional().describe('The applied write\'s id (its workflow id), when applied: undo it with undo_write, read it with get_applied_write'),
      review: reviewRef.optional(),
      remediation: remediationSchema.optional().describe('For a held write: the rules that held it, what they look at, and what to do next'),
      ...(operation.changeset
        ? { items: changesetResultSchema.shape.items.optional().describe("For a held changeset: every item's decision (the record comes once applied)") }
        : {}),
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
