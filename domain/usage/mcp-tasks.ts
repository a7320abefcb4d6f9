import type { Queryable } from '../../db/database';
import type { QueryResultRow } from 'pg';
import { reviewStatusSql, stillPendingSql } from '../gate/reviews/state';

// MCP tasks: gated writes an agent ran as tasks of the MCP protocol (not the organization's tasks). A held
// write's task follows its review (status, result and failure, kept by the write's workflow); a write answered
// at once keeps the answer the agent would have got.

export interface McpTaskOwner {
  orgId: string;
  apiKeyId: string;
}

export type McpTaskRow = QueryResultRow;

const selectTasks = `
  SELECT t.id, t.seq, t.tool, t.review_id, t.status, t.result, t.created_at,
         ${reviewStatusSql('r')} AS review_status,
         r.expires_at, r.decided_at, r.applied_at, r.result AS review_result, r.failure, r.comment, r.withdrawn_reason, d.reason
  FROM mcp_tasks t
  LEFT JOIN reviews r ON r.id = t.review_id
  LEFT JOIN gate_decisions d ON d.id = r.decision_id
  WHERE t.org_id = $1 AND t.api_key_id = $2`;

export async function recordHeldTask(db: Queryable, owner: McpTaskOwner, tool: string, reviewId: string): Promise<void> {
  await db.query('INSERT INTO mcp_tasks (id, org_id, api_key_id, tool, review_id) VALUES ($1, $2, $3, $4, $1)', [reviewId, owner.orgId, owner.apiKeyId, tool]);
}

export async function recordAnsweredTask(
  db: Queryable,
  owner: McpTaskOwner,
  tool: string,
  taskId: string,
  answer: { failed: boolean; result: unknown },
): Promise<void> {
  await db.query('INSERT INTO mcp_tasks (id, org_id, api_key_id, tool, status, result) VALUES ($1, $2, $3, $4, $5, $6)', [
    taskId,
    owner.orgId,
    owner.apiKeyId,
    tool,
    answer.failed ? 'failed' : 'completed',
    JSON.stringify(answer.result),
  ]);
}

/** Only the organization and key that created a task find it. */
export async function findMcpTask(db: Queryable, owner: McpTaskOwner, taskId: string): Promise<McpTaskRow | undefined> {
  // Ids this server gives out are visible ASCII; anything else is simply not a task (never a database error).
  if (!/^[\x21-\x7e]{1,300}$/.test(taskId)) return undefined;
  const { rows } = await db.query(`${selectTasks} AND t.id = $3`, [owner.orgId, owner.apiKeyId, taskId]);
  return rows[0];
}

/** Newest first; `before` is the creation sequence of the last task shown. */
export async function listMcpTasks(db: Queryable, owner: McpTaskOwner, before: number | null, limit: number): Promise<McpTaskRow[]> {
  const { rows } = await db.query(`${selectTasks} AND ($3::bigint IS NULL OR t.seq < $3) ORDER BY t.seq DESC LIMIT $4`, [
    owner.orgId,
    owner.apiKeyId,
    before,
    limit,
  ]);
  return rows;
}

export interface WaitingTask {
  task_id: string;
  api_key_id: string;
  api_key_label: string;
  tool: string;
  review_id: string;
  reason: string;
  created_at: string;
  expires_at: string;
}

/** MCP tasks whose write still waits on a person's review, oldest first. */
export async function listTasksWaitingOnReview(db: Queryable, orgId: string): Promise<WaitingTask[]> {
  const { rows } = await db.query(
    `SELECT t.id, t.api_key_id, k.label, t.tool, t.review_id, d.reason, t.created_at, r.expires_at
     FROM reviews r JOIN mcp_tasks t ON t.review_id = r.id JOIN gate_decisions d ON d.id = r.decision_id JOIN api_keys k ON k.id = t.api_key_id
     WHERE r.org_id = $1 AND ${stillPendingSql('r')}
     ORDER BY t.seq LIMIT 200`,
    [orgId],
  );
  return rows.map((row) => ({
    task_id: row.id,
    api_key_id: row.api_key_id,
    api_key_label: row.label,
    tool: row.tool,
    review_id: row.review_id,
    reason: row.reason,
    created_at: (row.created_at as Date).toISOString(),
    expires_at: (row.expires_at as Date).toISOString(),
  }));
}
