import type { CreateTaskOptions, TaskStore, ToolTaskHandler } from '@modelcontextprotocol/sdk/experimental/tasks';
import { findAgentTask, listAgentTasks, recordAnsweredTask, recordHeldTask, type AgentTaskRow } from '../../domain/usage/mcp-tasks';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AnySchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type Request,
  type RequestId,
  type Result,
  type ServerCapabilities,
  type Task,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { Queryable } from '../../db/database';
import { sortableUnique } from '../../domain/kit/ids';
import type { Operation } from '../catalog/operation';
import { dataResult } from './results';

// MCP tasks (the 2025-11-25 specification's task-augmented tools/call) for gated writes. A client that asks
// for a task gets one; a held write's task completes with the write's result once a person approves, and
// fails when they deny it or it expires. Nothing lives in memory between requests: the server is built per
// HTTP request, and every answer about a task is read from PostgreSQL — for a held write, from the review
// that its workflow keeps — so any api process answers for any task, across restarts.

/** What the server declares: task-augmented tools/call and tasks/list. Not tasks/cancel: a person decides a held write. */
export const taskCapabilities = { tasks: { list: {}, requests: { tools: { call: {} } } } } satisfies ServerCapabilities;

/** How often a client should ask about a held write (and how often a blocked tasks/result re-reads it). */
export const taskPollIntervalMs = 5000;

/** What the host may hand the model at once while the task runs (2025-11-25, tools/call tasks). */
const modelImmediateResponse = 'io.modelcontextprotocol/model-immediate-response';

const handoffKey = 'gatehouse/tool-result';
interface Handoff {
  tool: string;
  result: CallToolResult;
}

const workflowOf = new WeakMap<CallToolResult, string>();

/** Notes which workflow answered a gated write, so a task answered at once can take the workflow id as its id. */
export function answeredBy(result: CallToolResult, workflowId: string): CallToolResult {
  workflowOf.set(result, workflowId);
  return result;
}

/** The review holding the write, when the tool result says it is held. */
function heldReviewId(result: CallToolResult): string | undefined {
  const structured = result.structuredContent as { status?: unknown; review?: { id?: unknown } } | undefined;
  return structured?.status === 'pending_review' && typeof structured.review?.id === 'string' ? structured.review.id : undefined;
}

interface ToolConfig {
  title?: string;
  description?: string;
  inputSchema: AnySchema;
  outputSchema?: AnySchema;
  annotations?: ToolAnnotations;
}

/**
 * Registers a gated-write tool that runs as a task when the client asks for one (`taskSupport: optional`).
 * `call` is the tool as a client without tasks gets it (applied, held with a review id, denied); with a
 * task, the same result is kept as the task's, and a held write's task follows its review.
 */
export function registerGatedWriteTool(server: McpServer, name: string, config: ToolConfig, call: (input: unknown) => Promise<CallToolResult>): void {
  const handler: ToolTaskHandler<AnySchema> = {
    async createTask(input, extra) {
      const result = await call(input);
      const handoff: Handoff = { tool: name, result };
      // The SDK hands the original request to the store, which tells a task-augmented call from one
      // without a task (which the SDK also runs through createTask, and answers with the result at once).
      const task = await extra.taskStore.createTask({ context: { [handoffKey]: handoff } } satisfies CreateTaskOptions);
      if (task.status !== 'working') return { task };
      return {
        task,
        _meta: { [modelImmediateResponse]: `Held for review, not written yet. ${task.statusMessage ?? ''} Do not submit the same write again.` },
      };
    },
    getTask: (_input, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_input, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  server.experimental.tasks.registerToolTask(name, { ...config, execution: { taskSupport: 'optional' } }, handler);
}

export interface TaskScope {
  db: Queryable;
  orgId: string;
  apiKeyId: string;
  /** The REST base, for the review's link. */
  apiBaseUrl: string;
  catalog: readonly Operation[];
}

interface TaskState {
  status: Task['status'];
  statusMessage: string;
  lastUpdatedAt: string;
  /** Set once the status is terminal. */
  result?: CallToolResult;
}

/** A pending review past its deadline reads as expired, as in domain/reviews, even before its workflow recorded it. */
const pageSize = 50;

/**
 * The TaskStore of one request's caller, over PostgreSQL: a task is found only by the organization and the
 * API key that created it (anything else: not found). The SDK also runs tools/call without a task through
 * createTask; such a call gets a throwaway task, kept in this request's memory only until the SDK takes its result.
 */
export class PostgresTaskStore implements TaskStore {
  private readonly unrecorded = new Map<string, { task: Task; result: CallToolResult }>();

  constructor(private readonly scope: TaskScope) {}

  async createTask(options: CreateTaskOptions, requestId: RequestId, request: Request): Promise<Task> {
    const handoff = options.context?.[handoffKey] as Handoff | undefined;
    if (!handoff) throw new McpError(ErrorCode.InternalError, 'Tasks are created by gated-write tools only');
    const { result, tool } = handoff;

    // As the SDK's McpServer decides: a call is task-augmented when its params carry `task`.
    if (!(request.params as { task?: unknown } | undefined)?.task) {
      const now = new Date().toISOString();
      const task: Task = { taskId: `unrecorded:${requestId}`, status: result.isError ? 'failed' : 'completed', ttl: null, createdAt: now, lastUpdatedAt: now };
      this.unrecorded.set(task.taskId, { task, result });
      return task;
    }

    const { db } = this.scope;
    const reviewId = heldReviewId(result);
    let taskId: string;
    if (reviewId) {
      taskId = reviewId;
      await recordHeldTask(db, this.scope, tool, reviewId);
    } else {
      taskId = workflowOf.get(result) ?? `call:${sortableUnique()}`;
      await recordAnsweredTask(db, this.scope, tool, taskId, { failed: Boolean(result.isError), result });
    }
    const task = await this.getTask(taskId);
    if (!task) throw new McpError(ErrorCode.InternalError, `task ${taskId} was not recorded`);
    return task;
  }

  async getTask(taskId: string): Promise<Task | null> {
    const unrecorded = this.unrecorded.get(taskId);
    if (unrecorded) return unrecorded.task;
    const row = await this.row(taskId);
    return row ? this.taskOf(row) : null;
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const unrecorded = this.unrecorded.get(taskId);
    if (unrecorded) {
      this.unrecorded.delete(taskId);
      return unrecorded.result;
    }
    const row = await this.row(taskId);
    if (!row) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    const state = this.stateOf(row);
    if (!state.result) throw new McpError(ErrorCode.InvalidRequest, `Task ${taskId} is ${state.status}: ${state.statusMessage}`);
    return state.result;
  }

  async storeTaskResult(taskId: string): Promise<void> {
    throw new McpError(ErrorCode.InternalError, `The result of task ${taskId} is its write's, read from the database; it is not stored separately`);
  }

  /** Reached through tasks/cancel, which Gatehouse does not offer: an agent cannot withdraw what a person decides. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `Task ${taskId} cannot be moved to ${status}: it is a write held for a person's review. A person approves or denies it, or it expires; the task follows.`,
    );
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    let after: number | null = null;
    if (cursor !== undefined) {
      const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
      if (!/^[0-9]{1,18}$/.test(decoded)) throw new Error('the cursor is not one this server gave out');
      after = Number(decoded);
    }
    const rows = await listAgentTasks(this.scope.db, this.scope, after, pageSize + 1);
    const page = rows.slice(0, pageSize);
    return {
      tasks: page.map((row) => this.taskOf(row)),
      ...(rows.length > pageSize ? { nextCursor: Buffer.from(String(page.at(-1)!.seq), 'utf8').toString('base64url') } : {}),
    };
  }

  private async row(taskId: string): Promise<AgentTaskRow | undefined> {
    return findAgentTask(this.scope.db, this.scope, taskId);
  }

  private taskOf(row: Record<string, any>): Task {
    const state = this.stateOf(row);
    return {
      taskId: row.id,
      status: state.status,
      statusMessage: state.statusMessage,
      // Nothing is deleted: a task lasts as long as the review or the answer it reads from.
      ttl: null,
      createdAt: iso(row.created_at),
      lastUpdatedAt: state.lastUpdatedAt,
      ...(state.result ? {} : { pollInterval: taskPollIntervalMs }),
    };
  }

  /** The task as its write stands: the answer given at once, or the review's status, result and failure. */
  private stateOf(row: Record<string, any>): TaskState {
    const createdAt = iso(row.created_at);
    if (row.status) {
      const result = row.result as CallToolResult;
      return { status: row.status, statusMessage: firstLine(result), lastUpdatedAt: createdAt, result };
    }

    const reviewId: string = row.review_id;
    const operation = this.scope.catalog.find((op) => op.tool === row.tool);
    const summary = operation?.summary.toLowerCase() ?? row.tool;
    const url = `${this.scope.apiBaseUrl}/v1/reviews/${reviewId}`;
    const decidedAt = row.decided_at ? iso(row.decided_at) : createdAt;
    const failed = (text: string, at: string): TaskState => ({
      status: 'failed',
      statusMessage: text,
      lastUpdatedAt: at,
      result: { isError: true, content: [{ type: 'text', text }] },
    });

    switch (row.review_status) {
      case 'pending':
        return {
          status: 'working',
          statusMessage: `Held for a person's review: ${row.reason}. A person with the reviewer role approves or denies it at ${url} (review ${reviewId}); it expires ${iso(row.expires_at)} if nobody decides. The task completes with the write's result once approved, and fails if denied or expired.`,
          lastUpdatedAt: createdAt,
        };
      case 'approved':
        if (row.applied_at) {
          const text = `Done: ${summary}, approved by a person in review ${reviewId}.`;
          return { status: 'completed', statusMessage: text, lastUpdatedAt: iso(row.applied_at), result: dataResult({ status: 'applied', record: row.review_result }, text) };
        }
        if (row.failure) {
          const failure = row.failure as { code: string; message: string };
          return failed(`Error ${failure.code}: approved by a person in review ${reviewId}, but the write could not be applied: ${failure.message}. Nothing was written.`, decidedAt);
        }
        return { status: 'working', statusMessage: `Approved by a person in review ${reviewId}; the write is being applied.`, lastUpdatedAt: decidedAt };
      case 'denied':
        return failed(
          `Denied by a person in review ${reviewId}${row.comment ? ` (their comment: ${row.comment})` : ''}. Nothing was written; change the request or ask a person.`,
          decidedAt,
        );
      default:
        return failed(
          `Nobody decided review ${reviewId} before it expired at ${iso(row.expires_at)}; nothing was written. Submit the write again if it is still wanted.`,
          row.decided_at ? decidedAt : iso(row.expires_at),
        );
    }
  }
}

function iso(value: unknown): string {
  return (value as Date).toISOString();
}

function firstLine(result: CallToolResult): string {
  const first = result.content.find((part) => part.type === 'text');
  return first?.type === 'text' ? first.text.split('\n')[0]! : result.isError ? 'Failed' : 'Done';
}
