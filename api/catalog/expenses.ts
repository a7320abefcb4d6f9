import { expenseIdInput, expenseSchema, getExpense, listExpenses, listExpensesInput } from '../../domain/resources/expenses';
import { getOperation, listOperation } from './define';

// Read-only, and only on plans with the expenses feature; expenses arrive by import.

export const expenseOperations = [
  listOperation({
    name: 'expenses.list',
    tool: 'list_expenses',
    summary: 'List expenses',
    description: 'Expenses, newest first; filter by member, project, category and dates. Only on plans with the expenses feature.',
    path: '/expenses',
    feature: 'expenses',
    input: listExpensesInput,
    item: expenseSchema,
    handler: (input, { db, caller }) => listExpenses(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'expenses.get',
    tool: 'get_expense',
    summary: 'Read an expense',
    description: 'One expense. Only on plans with the expenses feature.',
    path: '/expenses/:id',
    feature: 'expenses',
    input: expenseIdInput,
    output: expenseSchema,
    handler: (input, { db, caller }) => getExpense(db, caller.organization.id, input.id),
  }),
];
