import { z } from 'zod';
import type { Queryable } from '../db/database';
import { calendarDate, text } from './fields';
import { newId } from './ids';
import { decodeCursor, pageInput, toPage, type Page } from './pagination';

export const taskStatuses = ['todo', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export const taskPriorities = ['low', 'normal', 'high', 'urgent'] as const;

const status = z
  .enum(taskStatuses)
  .describe('Where the task stands: todo (not started), in_progress, blocked (waiting on something), done, cancelled');
const priority = z.enum(taskPriorities).describe('How urgent the task is: low, normal, high or urgent');

export const taskSchema = z
  .object({
    id: z.string().describe('The task id'),
    title: z.string().describe('A short summary of the work'),
    description: z.string().nullable().describe('Details, context or acceptance criteria; null when none'),
    status,
    priority,
    due_on: z.iso.date().nullable().describe('The day the task is due (YYYY-MM-DD), or null'),
    tags: z.array(z.string()).describe('Free-form labels'),
    created_at: z.iso.datetime().describe('When the task was created (RFC 3339, UTC)'),
    updated_at: z.iso.datetime().describe('When the task last changed (RFC 3339, UTC)'),
  })
  .describe('A task of the organization');

export type Task = z.infer<typeof taskSchema>;

export const createTaskInput = z.strictObject({
  title: text({ max: 500 }).trim().min(1).describe('A short summary of the work, 1 to 500 characters'),
  description: text({ max: 20_000 }).optional().describe('Details, context or acceptance criteria'),
  status: status.default('todo'),
  priority: priority.default('normal'),
  due_on: calendarDate.optional().describe('The day the task is due, YYYY-MM-DD'),
  tags: z
    .array(text({ max: 50 }).trim().min(1))
    .max(20)
    .default([])
    .describe('Free-form labels, at most 20, each up to 50 characters'),
});

export type CreateTaskInput = z.infer<typeof createTaskInput>;

export const listTasksInput = z.strictObject({
  status: status.optional().describe('Only tasks with this status'),
  ...pageInput,
});

export type ListTasksInput = z.infer<typeof listTasksInput>;

const columns = 'id, title, description, status, priority, due_on, tags, created_at, updated_at';

/** Newest first; the cursor is the last id shown, since ids sort by creation time. */
export async function listTasks(db: Queryable, orgId: string, input: ListTasksInput): Promise<Page<Task>> {
  const after = decodeCursor(input.cursor);
  const { rows } = await db.query(
    `SELECT ${columns} FROM tasks
     WHERE org_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [orgId, input.status ?? null, after ?? null, input.limit + 1],
  );
  return toPage(rows.map(taskFromRow), input.limit);
}

export async function insertTask(tx: Queryable, orgId: string, input: CreateTaskInput): Promise<Task> {
  const { rows } = await tx.query(
    `INSERT INTO tasks (id, org_id, title, description, status, priority, due_on, tags)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${columns}`,
    [newId('task'), orgId, input.title, input.description ?? null, input.status, input.priority, input.due_on ?? null, input.tags],
  );
  return taskFromRow(rows[0]);
}

export function taskFromRow(row: Record<string, unknown>): Task {
  return {
    id: row.id as string,
    title: row.title as string,
    description: (row.description as string | null) ?? null,
    status: row.status as Task['status'],
    priority: row.priority as Task['priority'],
    due_on: (row.due_on as string | null) ?? null,
    tags: row.tags as string[],
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
  };
}
