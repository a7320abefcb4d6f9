import { createProject, deleteProject, getProject, listProjects, listProjectsInput, projectIdInput, projectSchema, updateProject } from '../../domain/resources/projects';
import { gatedOperation, getOperation, listOperation } from './define';

export const projectOperations = [
  listOperation({
    name: 'projects.list',
    tool: 'list_projects',
    summary: 'List projects',
    description: "Lists the organization's projects, newest first; filter by status and owner. Paginated.",
    path: '/projects',
    input: listProjectsInput,
    item: projectSchema,
    handler: (input, { db, caller }) => listProjects(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'projects.get',
    tool: 'get_project',
    summary: 'Read a project',
    description: 'One project by id (list its tasks with GET /v1/tasks?project_id=…). The ETag header carries its version.',
    path: '/projects/:id',
    input: projectIdInput,
    output: projectSchema,
    handler: (input, { db, caller }) => getProject(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    write: createProject,
    tool: 'create_project',
    summary: 'Create a project',
    description: 'Creates a project (name required), optionally with an owner from the team and dates.',
    method: 'POST',
    path: '/projects',
    output: projectSchema,
  }),
  gatedOperation({
    write: updateProject,
    tool: 'update_project',
    summary: 'Update a project',
    description: 'Changes the fields sent (null clears an optional field); If-Match refuses a stale update with 409.',
    method: 'PATCH',
    path: '/projects/:id',
    output: projectSchema,
  }),
  gatedOperation({
    write: deleteProject,
    tool: 'delete_project',
    summary: 'Delete a project',
    description: 'Deletes a project that no task refers to any more (409 otherwise). By default deletes are held for review.',
    method: 'DELETE',
    path: '/projects/:id',
    output: projectSchema,
  }),
];
