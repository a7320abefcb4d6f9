import { z } from 'zod';
import type { Queryable } from '../db/database';
import { calendarDate } from './fields';
import { pageInput } from './pagination';
import { Filters } from './query';
import { loadRecord } from './records';
import { listPage } from './sales';

// Expenses and work logs: read-only, and only on plans that include them.

export const expenseSchema = z
  .object({
    id: z.string(),
    description: z.string(),
    category: z.string().describe('e.g. travel, meals, software, equipment'),
    amount_cents: z.number().int().describe('The amount in the currency’s minor unit (cents)'),
    currency: z.string().length(3),
    spent_on: z.iso.date(),
    member_id: z.string().nullable().describe('The team member who spent it'),
    project_id: z.string().nullable().describe('The project it is booked to'),
    created_at: z.iso.datetime(),
  })
  .describe('An expense');

export const listExpensesInput = z.strictObject({
  member_id: z.string().max(100).optional().describe('Only expenses of this team member'),
  project_id: z.string().max(100).optional().describe('Only expenses booked to this project'),
  category: z.string().max(100).optional().describe('Only this category, e.g. travel'),
  spent_after: calendarDate.optional().describe('Spent on or after this day'),
  spent_before: calendarDate.optional().describe('Spent on or before this day'),
  ...pageInput,
});

export const workLogSchema = z
  .object({
    id: z.string(),
    member_id: z.string().describe('The team member who did the work'),
    task_id: z.string().nullable(),
    project_id: z.string().nullable(),
    minutes: z.number().int().describe('Time spent, in minutes'),
    worked_on: z.iso.date(),
    note: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .describe('Time a team member logged against a task or project');

export const listWorkLogsInput = z.strictObject({
  member_id: z.string().max(100).optional().describe('Only time logged by this team member'),
  task_id: z.string().max(100).optional().describe('Only time logged against this task'),
  project_id: z.string().max(100).optional().describe('Only time logged against this project'),
  worked_after: calendarDate.optional().describe('Worked on or after this day'),
  worked_before: calendarDate.optional().describe('Worked on or before this day'),
  ...pageInput,
});

export const recordIdInput = z.strictObject({ id: z.string().max(100).describe('The record id') });

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
