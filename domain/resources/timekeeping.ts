import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { calendarDate, cents, createdAt, currencyCode, dayField, recordId, text } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { Filters } from '../kit/query';
import { loadRecord } from '../kit/rows';
import { listPage } from './sales';

// Expenses and work logs: read-only, and only on plans that include them.

export const expenseSchema = z
  .object({
    id: recordId('expense', 'exp', 'use it as {id} in /v1/expenses/{id}'),
    description: z.string().describe('What the money was spent on, as recorded'),
    category: z.string().describe('e.g. travel, meals, software, equipment; filter with category'),
    amount_cents: cents('The amount spent'),
    currency: currencyCode,
    spent_on: dayField('The day the money was spent'),
    member_id: z.string().nullable().describe('The team member who spent it (a team member id, see /v1/team-members), or null'),
    project_id: z.string().nullable().describe('The project it is booked to (a project id, see /v1/projects/{id}), or null'),
    created_at: createdAt,
  })
  .describe('An expense: money spent for the organization, with who spent it and the project it is booked to, when known');

export const listExpensesInput = z.strictObject({
  member_id: text({ max: 100 }).optional().describe('Only expenses of this team member'),
  project_id: text({ max: 100 }).optional().describe('Only expenses booked to this project'),
  category: text({ max: 100 }).optional().describe('Only this category, e.g. travel'),
  spent_after: calendarDate.optional().describe('Spent on or after this day'),
  spent_before: calendarDate.optional().describe('Spent on or before this day'),
  ...pageInput,
});

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

export const recordIdInput = z.strictObject({ id: text({ max: 100 }).describe('The record id') });

export function listExpenses(db: Queryable, orgId: string, input: z.infer<typeof listExpensesInput>) {
  const filters = new Filters(orgId)
    .add('member_id = $?', input.member_id)
    .add('project_id = $?', input.project_id)
    .add('category = $?', input.category)
    .add('spent_on >= $?', input.spent_after)
    .add('spent_on <= $?', input.spent_before);
  return listPage(db, 'expenses', filters, input);
}

export function listWorkLogs(db: Queryable, orgId: string, input: z.infer<typeof listWorkLogsInput>) {
  const filters = new Filters(orgId)
    .add('member_id = $?', input.member_id)
    .add('task_id = $?', input.task_id)
    .add('project_id = $?', input.project_id)
    .add('worked_on >= $?', input.worked_after)
    .add('worked_on <= $?', input.worked_before);
  return listPage(db, 'work_logs', filters, input);
}

export const getExpense = (db: Queryable, orgId: string, id: string) => loadRecord(db, 'expenses', 'expense', orgId, id);
export const getWorkLog = (db: Queryable, orgId: string, id: string) => loadRecord(db, 'work_logs', 'work log', orgId, id);
