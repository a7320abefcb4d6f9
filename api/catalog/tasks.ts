import { z } from 'zod';
import { createTaskInput, listTasks, listTasksInput, taskSchema } from '../../domain/tasks';
import { defineOperation } from './operation';

export const listTasksOperation = defineOperation({
  kind: 'read',
  name: 'tasks.list',
  family: 'tasks',
  summary: 'List tasks',
  description: "Lists the organization's tasks, newest first, optionally only those with one status. Paginated.",
  method: 'GET',
  path: '/tasks',
  list: true,
  input: listTasksInput,
  output: z.array(taskSchema),
  access: { apiKey: { ability: 'tasks.read' } },
  handler: (input, { db, caller }) => listTasks(db, caller.organization.id, input),
});

export const createTaskOperation = defineOperation({
  kind: 'gated_write',
  name: 'tasks.create',
  family: 'tasks',
  summary: 'Create a task',
  description:
    "Creates a task. Gated: the organization's policy allows it (201, the task), holds it for a person's review (202 pending_review) or denies it (403 policy_denied).",
  method: 'POST',
  path: '/tasks',
  input: createTaskInput,
  output: taskSchema,
  access: { apiKey: { ability: 'tasks.write' } },
  write: 'tasks.create',
  successStatus: 201,
  destructive: false,
});
