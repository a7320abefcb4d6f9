import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { calendarDate, cents, createdAt, currencyCode, dayField, idInput, recordId, text } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord } from '../kit/rows';

// Expenses: read-only, and only on plans that include them.

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

export const expenseIdInput = idInput('The record id');

export function listExpenses(db: Queryable, orgId: string, input: z.infer<typeof listExpensesInput>) {
  const filters = new Filters(orgId)
    .add('member_id = $?', input.member_id)
    .add('project_id = $?', input.project_id)
    .add('category = $?', input.category)
    .add('spent_on >= $?', input.spent_after)
    .add('spent_on <= $?', input.spent_before);
  return listPage(db, 'expenses', filters, input);
}

export const getExpense = (db: Queryable, orgId: string, id: string) => loadRecord(db, 'expenses', 'expense', orgId, id);
