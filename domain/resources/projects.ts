import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createWrite, deleteWrite, updateWrite } from '../gate/writes';
import { calendarDate, createdAt, ifMatch, recordId, recordVersion, text, updatedAt } from '../kit/fields';
import { newId } from '../kit/ids';
import { pageInput, type Page } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord, plainRecord } from '../kit/rows';

export const projectStatuses = ['planned', 'active', 'on_hold', 'completed', 'cancelled'] as const;
const status = z.enum(projectStatuses).describe('planned, active, on_hold, completed or cancelled');
const projectId = text({ max: 100 }).describe('The project id, e.g. prj_01j…');

export const projectSchema = z
  .object({
    id: recordId('project', 'prj', 'use it as project_id on tasks (and to filter tasks, expenses and work logs) or as {id} in /v1/projects/{id}'),
    name: z.string().describe('The project name'),
    description: z.string().nullable().describe('What the project is about; null when none'),
    status,
    owner_id: z.string().nullable().describe('The team member who leads it (a team member id, see /v1/team-members), or null'),
    start_on: z.iso.date().nullable().describe('First day (YYYY-MM-DD), or null'),
    due_on: z.iso.date().nullable().describe('Deadline (YYYY-MM-DD), or null'),
    tags: z.array(z.string()).describe('Free-form labels'),
    version: recordVersion,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A project: a body of work that groups tasks');
export type Project = z.infer<typeof projectSchema>;

const fields = {
  name: text({ max: 200 }).trim().min(1).describe('The project name, 1 to 200 characters'),
  description: text({ max: 20_000 }).describe('What the project is about'),
  owner_id: text({ max: 100 }).describe('The team member who leads it (a team member id)'),
  start_on: calendarDate.describe('First day, YYYY-MM-DD'),
  due_on: calendarDate.describe('Deadline, YYYY-MM-DD'),
  tags: z.array(text({ max: 50 }).trim().min(1)).max(20).describe('Free-form labels, at most 20'),
};

export const createProjectInput = z.strictObject({
  name: fields.name,
  description: fields.description.optional(),
  status: status.default('planned'),
  owner_id: fields.owner_id.optional(),
  start_on: fields.start_on.optional(),
  due_on: fields.due_on.optional(),
  tags: fields.tags.default([]),
});
export type CreateProjectInput = z.infer<typeof createProjectInput>;

export const updateProjectInput = z.strictObject({
  id: projectId,
  name: fields.name.optional(),
  description: fields.description.nullable().optional(),
  status: status.optional(),
  owner_id: fields.owner_id.nullable().optional(),
  start_on: fields.start_on.nullable().optional(),
  due_on: fields.due_on.nullable().optional(),
  tags: fields.tags.optional(),
  if_match: ifMatch,
});
export const projectIdInput = z.strictObject({ id: projectId });
export const deleteProjectInput = z.strictObject({ id: projectId, if_match: ifMatch });

export const listProjectsInput = z.strictObject({
  status: status.optional().describe('Only projects with this status'),
  owner_id: text({ max: 100 }).optional().describe('Only projects led by this team member'),
  ...pageInput,
});

export function listProjects(db: Queryable, orgId: string, input: z.infer<typeof listProjectsInput>): Promise<Page<Project>> {
  return listPage(db, 'projects', new Filters(orgId).add('status = $?', input.status).add('owner_id = $?', input.owner_id), input);
}

export async function getProject(db: Queryable, orgId: string, id: string): Promise<Project> {
  return (await loadRecord(db, 'projects', 'project', orgId, id)) as Project;
}

export async function insertProject(tx: Queryable, orgId: string, input: CreateProjectInput): Promise<Project> {
  const { rows } = await tx.query(
    `INSERT INTO projects (id, org_id, name, description, status, owner_id, start_on, due_on, tags)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [newId('prj'), orgId, input.name, input.description ?? null, input.status, input.owner_id ?? null, input.start_on ?? null, input.due_on ?? null, input.tags],
  );
  return plainRecord(rows[0]) as Project;
}

const ownerRef = (fields: { owner_id?: unknown }) => [{ table: 'team_members' as const, field: 'owner_id', id: fields.owner_id as string | undefined }];

export const createProject = createWrite({ name: 'projects.create', resourceType: 'Project', input: createProjectInput, refs: ownerRef, insert: insertProject, undoable: { table: 'projects', what: 'project' } });

export const updateProject = updateWrite({ name: 'projects.update', resourceType: 'Project', table: 'projects', what: 'project', input: updateProjectInput, refs: ownerRef });

export const deleteProject = deleteWrite({
  name: 'projects.delete',
  resourceType: 'Project',
  table: 'projects',
  what: 'project',
  input: deleteProjectInput,
  referrers: [
    { table: 'tasks', column: 'project_id', what: 'tasks' },
    { table: 'expenses', column: 'project_id', what: 'expenses' },
    { table: 'work_logs', column: 'project_id', what: 'work logs' },
  ],
});
