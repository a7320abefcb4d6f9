import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createWrite, deleteWrite, updateWrite } from '../gate/writes';
import { calendarDate, createdAt, ifMatch, recordId, recordVersion, text, updatedAt } from '../kit/fields';
import { newId } from '../kit/ids';
import { pageInput, type Page } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import type { Reference } from '../kit/references';
import { loadRecord, plainRecord } from '../kit/rows';

export const taskStatuses = ['todo', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export const taskPriorities = ['low', 'normal', 'high', 'urgent'] as const;

const status = z
  .enum(taskStatuses)
  .describe('Where the task stands: todo (not started), in_progress, blocked (waiting on something), done, cancelled');
const priority = z.enum(taskPriorities).describe('How urgent the task is: low, normal, high or urgent');
const taskId = text({ max: 100 }).describe('The task id, e.g. task_01j…');

export const taskSchema = z
  .object({
    id: recordId('task', 'task', 'use it as {id} in /v1/tasks/{id} to read, update or delete the task'),
    title: z.string().describe('A short summary of the work'),
    description: z.string().nullable().describe('Details, context or acceptance criteria; null when none'),
    status,
    priority,
    due_on: z.iso.date().nullable().describe('The day the task is due (YYYY-MM-DD), or null'),
    tags: z.array(z.string()).describe('Free-form labels'),
    project_id: z.string().nullable().describe('The project the task belongs to (a project id, see /v1/projects/{id}), or null'),
    assignee_id: z.string().nullable().describe('The team member doing the task (a team member id, see /v1/team-members), or null'),
    meeting_ingest_id: z
      .string()
      .nullable()
      .describe('The meeting the task was extracted from (see /v1/meeting-ingests/{id}), or null for tasks created directly'),
    version: recordVersion,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A task of the organization');

export type Task = z.infer<typeof taskSchema>;

const taskFields = {
  title: text({ max: 500 }).trim().min(1).describe('A short summary of the work, 1 to 500 characters'),
  description: text({ max: 20_000 }).describe('Details, context or acceptance criteria'),
  status,
  priority,
  due_on: calendarDate.describe('The day the task is due, YYYY-MM-DD'),
  tags: z.array(text({ max: 50 }).trim().min(1)).max(20).describe('Free-form labels, at most 20, each up to 50 characters'),
  project_id: text({ max: 100 }).describe('The project the task belongs to (a project id)'),
  assignee_id: text({ max: 100 }).describe('Who does it: a team member id from /v1/team-members'),
};

export const createTaskInput = z.strictObject({
  title: taskFields.title,
  description: taskFields.description.optional(),
  status: status.default('todo'),
  priority: priority.default('normal'),
  due_on: taskFields.due_on.optional(),
  tags: taskFields.tags.default([]),
  project_id: taskFields.project_id.optional(),
  assignee_id: taskFields.assignee_id.optional(),
});
export type CreateTaskInput = z.infer<typeof createTaskInput>;

export const updateTaskInput = z.strictObject({
  id: taskId,
  title: taskFields.title.optional(),
  description: taskFields.description.nullable().optional(),
  status: status.optional(),
  priority: priority.optional(),
  due_on: taskFields.due_on.nullable().optional(),
  tags: taskFields.tags.optional(),
  project_id: taskFields.project_id.nullable().optional(),
  assignee_id: taskFields.assignee_id.nullable().optional(),
  if_match: ifMatch,
});

export const taskIdInput = z.strictObject({ id: taskId });
export const deleteTaskInput = z.strictObject({ id: taskId, if_match: ifMatch });

export const listTasksInput = z.strictObject({
  status: status.optional().describe('Only tasks with this status'),
  project_id: text({ max: 100 }).optional().describe('Only tasks of this project'),
  assignee_id: text({ max: 100 }).optional().describe('Only tasks assigned to this team member'),
  due_after: calendarDate.optional().describe('Only tasks due on or after this day (YYYY-MM-DD)'),
  due_before: calendarDate.optional().describe('Only tasks due on or before this day (YYYY-MM-DD)'),
  ...pageInput,
});
export type ListTasksInput = z.infer<typeof listTasksInput>;

export function listTasks(db: Queryable, orgId: string, input: ListTasksInput): Promise<Page<Task>> {
  const filters = new Filters(orgId)
    .add('status = $?', input.status)
    .add('project_id = $?', input.project_id)
    .add('assignee_id = $?', input.assignee_id)
    .add('due_on >= $?', input.due_after)
    .add('due_on <= $?', input.due_before);
  return listPage(db, 'tasks', filters, input);
}

export async function getTask(db: Queryable, orgId: string, id: string): Promise<Task> {
  return (await loadRecord(db, 'tasks', 'task', orgId, id)) as Task;
}

export async function insertTask(tx: Queryable, orgId: string, input: CreateTaskInput, meetingIngestId?: string): Promise<Task> {
  const { rows } = await tx.query(
    `INSERT INTO tasks (id, org_id, title, description, status, priority, due_on, tags, project_id, assignee_id, meeting_ingest_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      newId('task'),
      orgId,
      input.title,
      input.description ?? null,
      input.status,
      input.priority,
      input.due_on ?? null,
      input.tags,
      input.project_id ?? null,
      input.assignee_id ?? null,
      meetingIngestId ?? null,
    ],
  );
  return plainRecord(rows[0]) as Task;
}

/** A task's references: its project and its assignee, both of the organization. */
export const taskRefs = (fields: { project_id?: unknown; assignee_id?: unknown }): Reference[] => [
  { table: 'projects', field: 'project_id', id: fields.project_id as string | undefined },
  { table: 'team_members', field: 'assignee_id', id: fields.assignee_id as string | undefined },
];

export const createTask = createWrite({
  name: 'tasks.create',
  resourceType: 'Task',
  input: createTaskInput,
  refs: taskRefs,
  // insertTask's fourth argument is the meeting a task came from, not the writer.
  insert: (tx, orgId, input) => insertTask(tx, orgId, input),
  undoable: { table: 'tasks', what: 'task' },
});

export const updateTask = updateWrite({ name: 'tasks.update', resourceType: 'Task', table: 'tasks', what: 'task', input: updateTaskInput, refs: taskRefs });

export const deleteTask = deleteWrite({
  name: 'tasks.delete',
  resourceType: 'Task',
  table: 'tasks',
  what: 'task',
  input: deleteTaskInput,
  referrers: [{ table: 'work_logs', column: 'task_id', what: 'work logs' }],
});
