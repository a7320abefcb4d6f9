import { getProject, listProjects, listProjectsInput, projectIdInput, projectSchema } from '../../domain/projects';
import { gatedOperation, getOperation, listOperation } from './define';

export const projectOperations = [
  listOperation({
    name: 'projects.list',
    summary: 'List projects',
    description: "Lists the organization's projects, newest first; filter by status and owner. Paginated.",
    path: '/projects',
    input: listProjectsInput,
    item: projectSchema,
    handler: (input, { db, caller }) => listProjects(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'projects.get',
    summary: 'Read a project',
    description: 'One project by id (list its tasks with GET /v1/tasks?project_id=…). The ETag header carries its version.',
    path: '/projects/:id',
    input: projectIdInput,
    output: projectSchema,
    handler: (input, { db, caller }) => getProject(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    name: 'projects.create',
    summary: 'Create a project',
    description: 'Creates a project (name required), optionally with an owner from the team and dates.',
    method: 'POST',
    path: '/projects',
    output: projectSchema,
    write: 'projects.create',
  }),
  gatedOperation({
    name: 'projects.update',
    summary: 'Update a project',
    description: 'Changes the fields sent (null clears an optional field); If-Match refuses a stale update with 409.',
    method: 'PATCH',
    path: '/projects/:id',
    output: projectSchema,
    write: 'projects.update',
  }),
  gatedOperation({
    name: 'projects.delete',
    summary: 'Delete a project',
    description: 'Deletes a project that no task refers to any more (409 otherwise). By default deletes are held for review.',
    method: 'DELETE',
    path: '/projects/:id',
    output: projectSchema,
    write: 'projects.delete',
  }),
];
