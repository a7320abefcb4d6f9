import { createTask, deleteTask, getTask, listTasks, listTasksInput, taskIdInput, taskSchema, updateTask } from '../../domain/resources/tasks';
import { gatedOperation, getOperation, listOperation } from './define';

export const taskOperations = [
  listOperation({
    name: 'tasks.list',
    tool: 'list_tasks',
    summary: 'List tasks',
    description:
      "Lists the organization's tasks, newest first; filter by status, project, assignee and a due-date range. Paginated.",
    path: '/tasks',
    input: listTasksInput,
    item: taskSchema,
    handler: (input, { db, caller }) => listTasks(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'tasks.get',
    tool: 'get_task',
    summary: 'Read a task',
    description: 'One task by id. The ETag header carries its version, for a safe update with If-Match.',
    path: '/tasks/:id',
    input: taskIdInput,
    output: taskSchema,
    handler: (input, { db, caller }) => getTask(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    write: createTask,
    tool: 'create_task',
    summary: 'Create a task',
    description: 'Creates a task (title required), optionally in a project and assigned to a team member.',
    method: 'POST',
    path: '/tasks',
    output: taskSchema,
  }),
  gatedOperation({
    write: updateTask,
    tool: 'update_task',
    summary: 'Update a task',
    description:
      'Changes the fields sent (null clears an optional field). Send If-Match with the ETag of your last read to be refused (409) rather than overwrite a newer change.',
    method: 'PATCH',
    path: '/tasks/:id',
    output: taskSchema,
  }),
  gatedOperation({
    write: deleteTask,
    tool: 'delete_task',
    summary: 'Delete a task',
    description: 'Deletes a task; the answer is the task as it was. By default deletes are held for review.',
    method: 'DELETE',
    path: '/tasks/:id',
    output: taskSchema,
  }),
];
