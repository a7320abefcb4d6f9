import { z } from 'zod';
import { bookEventInput } from '../domain/resources/calendar';
import { createCustomerInput } from '../domain/resources/customers';
import { calendarDate, text } from '../domain/kit/fields';
import { createProjectInput } from '../domain/resources/projects';
import { bookingStatuses } from '../domain/resources/bookings';
import { invoiceStatuses } from '../domain/resources/invoices';
import { createTaskInput } from '../domain/resources/tasks';

// The data file of `gatehouse import` and `gatehouse seed`: records carry the columns of their tables, and
// refer to each other by refs the file chooses, never by ids (which the import generates).

/** The kinds of record a data file holds, in the order they are written (each after what it refers to). */
export const importKinds = [
  'team_members',
  'projects',
  'products',
  'tasks',
  'customers',
  'events',
  'invoices',
  'bookings',
  'expenses',
  'work_logs',
] as const;
export type ImportKind = (typeof importKinds)[number];

const ref = text({ max: 100 }).trim().min(1);
const ownRef = ref.describe('A name for this record, unique among its kind in the file, by which other records refer to it');
const leafRef = ref.optional().describe('Optional: a name for this record, unique among its kind in the file (used in error messages)');
const refTo = (what: string) => ref.describe(`The ref of a ${what} in this file`);

const instant = z.iso.datetime({ offset: true });
const money = z.number().int().describe('An amount in the currency’s minor unit (cents), an integer');
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, { message: 'must be an ISO 4217 code in capitals, e.g. EUR' })
  .describe('ISO 4217 currency code, e.g. EUR');

/**
 * Runs a cross-field check once the fields it reads are valid, even when other fields of the record are
 * not, so that one pass names every problem.
 */
const whenValid = (...fields: string[]) => ({
  when(payload: { value: unknown; issues: readonly { path?: readonly PropertyKey[] }[] }) {
    return (
      typeof payload.value === 'object' &&
      payload.value !== null &&
      !payload.issues.some((issue) => issue.path?.length && fields.includes(String(issue.path[0])))
    );
  },
});
const endsAfterStart = (value: { starts_at: string; ends_at: string }) => Date.parse(value.ends_at) > Date.parse(value.starts_at);
const endsAfterStartIssue = () => ({ message: 'must be after starts_at', path: ['ends_at'], ...whenValid('starts_at', 'ends_at') });

export const teamMemberRecord = z.strictObject({
  ref: ownRef,
  name: text({ max: 200 }).trim().min(1).describe('Full name'),
  email: z.email().max(320).optional(),
  title: text({ max: 200 }).optional().describe('Job title or role'),
  active: z.boolean().default(true).describe('false for people who left'),
});

export const projectRecord = createProjectInput.omit({ owner_id: true }).extend({
  ref: ownRef,
  owner_ref: refTo('team member').optional(),
});

export const productRecord = z.strictObject({
  ref: ownRef,
  name: text({ max: 200 }).trim().min(1),
  sku: text({ max: 100 }).optional().describe('Stock-keeping unit'),
  description: text({ max: 20_000 }).optional(),
  unit_price_cents: money.min(0),
  currency,
  active: z.boolean().default(true).describe('false for products no longer sold'),
});

export const taskRecord = createTaskInput.omit({ project_id: true, assignee_id: true }).extend({
  ref: ownRef,
  project_ref: refTo('project').optional(),
  assignee_ref: refTo('team member').optional(),
});

export const customerRecord = createCustomerInput.extend({ ref: ownRef });

const { title, description, location, starts_at, ends_at } = bookEventInput.shape;
export const eventRecord = z
  .strictObject({
    ref: leafRef,
    title,
    description,
    location,
    starts_at,
    ends_at,
    attendee_refs: z.array(refTo('team member')).max(50).default([]),
    customer_ref: refTo('customer').optional(),
  })
  .refine(endsAfterStart, endsAfterStartIssue());

const lineAmount = (line: { quantity: number; unit_price_cents: number }) => Math.round(line.quantity * line.unit_price_cents);
export const invoiceLineRecord = z.strictObject({
  description: text({ max: 1_000 }).trim().min(1),
  quantity: z.number().positive().max(1_000_000).describe('How many units; may be fractional (hours, say)'),
  unit_price_cents: money.describe('Price of one unit in cents; negative for a discount line'),
  product_ref: refTo('product').optional(),
});
export const invoiceRecord = z
  .strictObject({
    ref: leafRef,
    number: text({ max: 50 }).trim().min(1).describe('The invoice number as printed, unique in the organization'),
    customer_ref: refTo('customer'),
    status: z.enum(invoiceStatuses).default('draft'),
    issued_on: calendarDate,
    due_on: calendarDate,
    currency,
    lines: z.array(invoiceLineRecord).min(1).max(500),
    total_cents: money.optional().describe('The sum of the lines (quantity × unit price, rounded to the cent); computed when left out'),
  })
  .refine((invoice) => invoice.due_on >= invoice.issued_on, { message: 'must not be before issued_on', path: ['due_on'], ...whenValid('issued_on', 'due_on') })
  .refine((invoice) => Number.isSafeInteger(invoiceTotal(invoice.lines)), {
    message: 'the lines add up to more than an amount can hold',
    path: ['lines'],
    ...whenValid('lines'),
  })
  .refine((invoice) => invoice.total_cents === undefined || invoice.total_cents === invoiceTotal(invoice.lines), {
    error: (issue) => {
      const invoice = issue.input as { total_cents: number; lines: { quantity: number; unit_price_cents: number }[] };
      return `${invoice.total_cents} is not the sum of the lines, ${invoiceTotal(invoice.lines)}`;
    },
    path: ['total_cents'],
    ...whenValid('lines', 'total_cents'),
  });

export function invoiceTotal(lines: { quantity: number; unit_price_cents: number }[]): number {
  return lines.reduce((sum, line) => sum + lineAmount(line), 0);
}

export const bookingRecord = z
  .strictObject({
    ref: leafRef,
    customer_ref: refTo('customer'),
    product_ref: refTo('product').optional(),
    staff_member_ref: refTo('team member').optional(),
    title: text({ max: 300 }).trim().min(1).describe('What was booked, e.g. "Consultation"'),
    status: z.enum(bookingStatuses).default('confirmed'),
    starts_at: instant,
    ends_at: instant,
    notes: text({ max: 20_000 }).optional(),
  })
  .refine(endsAfterStart, endsAfterStartIssue());

export const expenseRecord = z.strictObject({
  ref: leafRef,
  member_ref: refTo('team member').optional(),
  project_ref: refTo('project').optional(),
  description: text({ max: 1_000 }).trim().min(1),
  category: text({ max: 100 }).trim().min(1).describe('e.g. travel, meals, software, equipment'),
  amount_cents: money.min(0),
  currency,
  spent_on: calendarDate,
});

export const workLogRecord = z
  .strictObject({
    ref: leafRef,
    member_ref: refTo('team member'),
    task_ref: refTo('task').optional(),
    project_ref: refTo('project').optional(),
    minutes: z.number().int().min(1).max(1_440),
    worked_on: calendarDate,
    note: text({ max: 5_000 }).optional(),
  })
  .refine((log) => log.task_ref !== undefined || log.project_ref !== undefined, {
    message: 'a work log needs task_ref or project_ref',
    path: ['task_ref'],
    ...whenValid('task_ref', 'project_ref'),
  });

export const dataFileSchema = z
  .strictObject({
    team_members: z.array(teamMemberRecord).optional(),
    projects: z.array(projectRecord).optional(),
    products: z.array(productRecord).optional(),
    tasks: z.array(taskRecord).optional(),
    customers: z.array(customerRecord).optional(),
    events: z.array(eventRecord).optional(),
    invoices: z.array(invoiceRecord).optional(),
    bookings: z.array(bookingRecord).optional(),
    expenses: z.array(expenseRecord).optional(),
    work_logs: z.array(workLogRecord).optional(),
  })
  .describe('Records to import into one organization, all or nothing');

/** A data file as written (defaults optional). */
export type DataFile = z.input<typeof dataFileSchema>;
/** A data file once validated (defaults filled in). */
export type ValidDataFile = z.output<typeof dataFileSchema>;

/** Which kind each `…_ref` field points at; invoice lines carry product_ref. */
export const refTargets: Record<ImportKind, { field: string; kind: ImportKind; many?: boolean; inLines?: boolean }[]> = {
  team_members: [],
  projects: [{ field: 'owner_ref', kind: 'team_members' }],
  products: [],
  tasks: [
    { field: 'project_ref', kind: 'projects' },
    { field: 'assignee_ref', kind: 'team_members' },
  ],
  customers: [],
  events: [
    { field: 'attendee_refs', kind: 'team_members', many: true },
    { field: 'customer_ref', kind: 'customers' },
  ],
  invoices: [
    { field: 'customer_ref', kind: 'customers' },
    { field: 'product_ref', kind: 'products', inLines: true },
  ],
  bookings: [
    { field: 'customer_ref', kind: 'customers' },
    { field: 'product_ref', kind: 'products' },
    { field: 'staff_member_ref', kind: 'team_members' },
  ],
  expenses: [
    { field: 'member_ref', kind: 'team_members' },
    { field: 'project_ref', kind: 'projects' },
  ],
  work_logs: [
    { field: 'member_ref', kind: 'team_members' },
    { field: 'task_ref', kind: 'tasks' },
    { field: 'project_ref', kind: 'projects' },
  ],
};
