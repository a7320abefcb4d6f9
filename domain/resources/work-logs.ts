import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { calendarDate, createdAt, dayField, idInput, recordId, text } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord } from '../kit/rows';

// Work logs: read-only, and only on plans that include them.

export const workLogSchema = z
  .object({
    id: recordId('work log', 'wlg', 'use it as {id} in /v1/work-logs/{id}'),
    member_id: z.string().describe('The team member who did the work (a team member id, see /v1/team-members)'),
    task_id: z.string().nullable().describe('The task worked on (a task id, see /v1/tasks/{id}), or null; task_id or project_id is always set'),
    project_id: z.string().nullable().describe('The project worked on (a project id, see /v1/projects/{id}), or null; task_id or project_id is always set'),
    minutes: z.number().int().describe('Time spent, in minutes (1 to 1440)'),
    worked_on: dayField('The day the work was done'),
    note: z.string().nullable().describe('What was done; null when none'),
    created_at: createdAt,
  })
  .describe('Time a team member logged against a task or project');

export const listWorkLogsInput = z.strictObject({
  member_id: text({ max: 100 }).optional().describe('Only time logged by this team member'),
  task_id: text({ max: 100 }).optional().describe('Only time logged against this task'),
  project_id: text({ max: 100 }).optional().describe('Only time logged against this project'),
  worked_after: calendarDate.optional().describe('Worked on or after this day'),
  worked_before: calendarDate.optional().describe('Worked on or before this day'),
  ...pageInput,
});

export const workLogIdInput = idInput('The record id');

export function listWorkLogs(db: Queryable, orgId: string, input: z.infer<typeof listWorkLogsInput>) {
  const filters = new Filters(orgId)
    .add('member_id = $?', input.member_id)
    .add('task_id = $?', input.task_id)
    .add('project_id = $?', input.project_id)
    .add('worked_on >= $?', input.worked_after)
    .add('worked_on <= $?', input.worked_before);
  return listPage(db, 'work_logs', filters, input);
}

export const getWorkLog = (db: Queryable, orgId: string, id: string) => loadRecord(db, 'work_logs', 'work log', orgId, id);
