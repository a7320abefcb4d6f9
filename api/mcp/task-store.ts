import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ErrorCode, McpError, type CallToolResult, type Result, type ServerCapabilities, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { Queryable } from '../../db/database';
import type { ErrorCode as AppErrorCode } from '../../domain/kit/errors';
import { findMcpTask, listMcpTasks, recordAnsweredTask, recordHeldTask, type McpTaskRow } from '../../domain/usage/mcp-tasks';
import { operationOfTool } from '../catalog/index';
import { reviewLinks } from '../catalog/links';
import { dataResult, errorText } from './results';

// MCP tasks (the 2025-11-25 specification's task-augmented tools/call) for gated writes. A client that asks
// for a task gets one; a held write's task completes with the write's result once a person approves, fails
// when they deny it or it expires, and is cancelled when the write is withdrawn (its key revoked while it waited).
// Nothing lives in memory between requests: the server is built per HTTP request, and every answer about a task
// is read from PostgreSQL (for a held write, from the review that its workflow keeps), so any api process answers
// for any task, across restarts.

/** What the server declares: task-augmented tools/call and tasks/list. Not tasks/cancel: a person decides a held write. */
export const taskCapabilities = { tasks: { list: {}, requests: { tools: { call: {} } } } } satisfies ServerCapabilities;

/** How often a client should ask about a held write (and how often a blocked tasks/result re-reads it). */
export const taskPollIntervalMs = 5000;

const pageSize = 50;

export interface TaskScope {
  db: Queryable;
  orgId: string;
  apiKeyId: string;
  /** The REST base and the console's address, for the review's links. */
  apiBaseUrl: string;
  publicUrl: string;
}

interface TaskState {
  status: Task['status'];
  statusMessage: string;
  lastUpdatedAt: string;
  /** Set once the status is terminal. */
  result?: CallToolResult;
}

/**
 * The SDK's TaskStore for one request's caller, over PostgreSQL: a task is found only by the organization and
 * the API key that created it (anything else: not found). Tasks are recorded by the tools/call handler
 * (`record`), never through the SDK's createTask.
 */
export class PostgresTaskStore implements TaskStore {
  constructor(private readonly scope: TaskScope) {}

  /**
   * Records a gated write's tool call as a task: a held write as its review (the task's id is the review's),
   * a write answered at once with that answer (its id is the workflow's, when there is one).
   */
  async record(tool: string, result: CallToolResult, source: { reviewId: string } | { workflowId?: string }): Promise<Task> {
    let taskId: string;
    if ('reviewId' in source) {
      taskId = source.reviewId;
      await recordHeldTask(this.scope.db, this.scope, tool, taskId);
    } else {
      taskId = source.workflowId ?? `call:${crypto.randomUUID()}`;
      await recordAnsweredTask(this.scope.db, this.scope, tool, taskId, { failed: Boolean(result.isError), result });
    }
    const task = await this.getTask(taskId);
    if (!task) throw new McpError(ErrorCode.InternalError, `task ${taskId} was not recorded`);
    return task;
  }

  async createTask(): Promise<Task> {
    throw new McpError(ErrorCode.InternalError, 'Tasks are created by gated-write tools only');
  }

  async getTask(taskId: string): Promise<Task | null> {
    const row = await findMcpTask(this.scope.db, this.scope, taskId);
    return row ? this.taskOf(row) : null;
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const row = await findMcpTask(this.scope.db, this.scope, taskId);
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
    const rows = await listMcpTasks(this.scope.db, this.scope, after, pageSize + 1);
    const page = rows.slice(0, pageSize);
    return {
      tasks: page.map((row) => this.taskOf(row)),
      ...(rows.length > pageSize ? { nextCursor: Buffer.from(String(page.at(-1)!.seq), 'utf8').toString('base64url') } : {}),
    };
  }

  private taskOf(row: McpTaskRow): Task {
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
  private stateOf(row: McpTaskRow): TaskState {
    const createdAt = iso(row.created_at);
    if (row.status) {
      const result = row.result as CallToolResult;
      return { status: row.status, statusMessage: firstLine(result), lastUpdatedAt: createdAt, result };
    }

    const reviewId: string = row.review_id;
    const summary = operationOfTool(row.tool)?.summary.toLowerCase() ?? row.tool;
    const { webUrl } = reviewLinks(this.scope, reviewId);
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
          statusMessage: `Held for a person's review: ${row.reason}. A person with the reviewer role approves or denies it in the console at ${webUrl} (review ${reviewId}); it expires ${iso(row.expires_at)} if nobody decides. The task completes with the write's result once approved, and fails if denied or expired.`,
          lastUpdatedAt: createdAt,
        };
      case 'approved':
        if (row.applied_at) {
          const text = `Done: ${summary}, approved by a person in review ${reviewId}.`;
          return { status: 'completed', statusMessage: text, lastUpdatedAt: iso(row.applied_at), result: dataResult({ status: 'applied', record: row.review_result }, text) };
        }
        if (row.failure) {
          const failure = row.failure as { code: AppErrorCode; message: string };
          const why = `approved by a person in review ${reviewId}, but the write could not be applied: ${failure.message}. Nothing was written.`;
          return failed(errorText(failure.code, why), decidedAt);
        }
        return { status: 'working', statusMessage: `Approved by a person in review ${reviewId}; the write is being applied.`, lastUpdatedAt: decidedAt };
      case 'withdrawn':
        // Nothing of it will be written, and nobody decided it: the task ends as cancelled, with why.
        return {
          status: 'cancelled',
          statusMessage: withdrawnText(reviewId, row.withdrawn_reason),
          lastUpdatedAt: decidedAt,
          result: { isError: true, content: [{ type: 'text', text: withdrawnText(reviewId, row.withdrawn_reason) }] },
        };
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

/** What the agent is told of its held write withdrawn while it waited. */
function withdrawnText(reviewId: string, reason: string | null): string {
  const why = reason === 'connection_ended' ? 'this app was disconnected from the organization' : 'the API key that made it was revoked';
  return `Withdrawn: review ${reviewId} was withdrawn before anyone decided it, because ${why}. Nothing was written, and nobody can approve it now.`;
}

function iso(value: unknown): string {
  return (value as Date).toISOString();
}

function firstLine(result: CallToolResult): string {
  const first = result.content.find((part) => part.type === 'text');
  return first?.type === 'text' ? first.text.split('\n')[0]! : result.isError ? 'Failed' : 'Done';
}
