import { cliActor, recordAudit } from '../domain/audit/events';
import type { Database, Queryable } from '../db/database';
import { lockCustomerChanges } from '../domain/resources/customers';
import { AppError } from '../domain/kit/errors';
import { newId, type IdPrefix } from '../domain/kit/ids';
import { crossRecordProblems, orderedProblems, schemaProblems, type ImportProblem } from './import-checks';
import { dataFileSchema, importKinds, invoiceTotal, type ImportKind, type ValidDataFile } from './import-schema';
import { insertRows } from './import-writer';

export type ImportCounts = Record<ImportKind, number>;

const idPrefixes: Record<ImportKind, IdPrefix> = {
  team_members: 'mem',
  projects: 'prj',
  products: 'prd',
  tasks: 'task',
  customers: 'cus',
  events: 'cal',
  invoices: 'inv',
  bookings: 'bkg',
  expenses: 'exp',
  work_logs: 'wlg',
};

/**
 * Imports a data file into one organization, all or nothing: the whole file is checked first (every
 * problem named with its path), then every record is written in one transaction, each kind after the
 * kinds it refers to, with ids generated here.
 */
export async function importData(db: Database, orgId: string, file: unknown): Promise<ImportCounts> {
  const data = validateDataFile(file);
  return db.transaction(async (tx) => {
    const counts = await writeDataFile(tx, orgId, data);
    await recordAudit(tx, orgId, { type: 'data.imported', actor: cliActor, data: counts });
    return counts;
  });
}

export function validateDataFile(file: unknown): ValidDataFile {
  const parsed = dataFileSchema.safeParse(file);
  const fromSchema = parsed.success ? [] : schemaProblems(parsed.error);
  // A field the schema already refused (text fields refuse lone surrogates themselves) is named once.
  const named = new Set(fromSchema.map((problem) => problem.path.join('.')));
  const problems = orderedProblems([...fromSchema, ...crossRecordProblems(file).filter((problem) => !named.has(problem.path.join('.')))]);
  if (problems.length || !parsed.success) throw invalidFile(problems);
  return parsed.data;
}

export function invalidFile(problems: ImportProblem[]): AppError {
  const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  return new AppError(
    'validation_failed',
    [`The data file has ${count}; nothing was imported:`, ...problems.map((problem) => `  ${problem.field}: ${problem.message}`)].join('\n'),
    { fields: problems },
  );
}

async function writeDataFile(tx: Queryable, orgId: string, data: ValidDataFile): Promise<ImportCounts> {
  await refuseTakenInvoiceNumbers(tx, orgId, data);

  const ids = Object.fromEntries(importKinds.map((kind) => [kind, new Map<string, string>()])) as Record<ImportKind, Map<string, string>>;
  const idFor = (kind: ImportKind, ref: string | undefined) => {
    const id = newId(idPrefixes[kind]);
    if (ref !== undefined) ids[kind].set(ref, id);
    return id;
  };
  // Refs were checked to resolve; undefined stays undefined, which the writer stores as NULL.
  const idOf = (kind: ImportKind, ref: string | undefined) => (ref === undefined ? undefined : ids[kind].get(ref)!);

  const teamMembers = data.team_members ?? [];
  await insertRows(
    tx,
    'team_members',
    orgId,
    { id: 'text', name: 'text', email: 'text', title: 'text', active: 'boolean' },
    teamMembers.map((member) => ({ id: idFor('team_members', member.ref), name: member.name, email: member.email, title: member.title, active: member.active })),
  );

  const projects = data.projects ?? [];
  await insertRows(
    tx,
    'projects',
    orgId,
    { id: 'text', name: 'text', description: 'text', status: 'text', owner_id: 'text', start_on: 'date', due_on: 'date', tags: 'text[]' },
    projects.map(({ ref, owner_ref, ...project }) => ({ ...project, id: idFor('projects', ref), owner_id: idOf('team_members', owner_ref) })),
  );

  const products = data.products ?? [];
  await insertRows(
    tx,
    'products',
    orgId,
    { id: 'text', name: 'text', sku: 'text', description: 'text', unit_price_cents: 'bigint', currency: 'text', active: 'boolean' },
    products.map(({ ref, ...product }) => ({ ...product, id: idFor('products', ref) })),
  );

  const tasks = data.tasks ?? [];
  await insertRows(
    tx,
    'tasks',
    orgId,
    {
      id: 'text',
      title: 'text',
      description: 'text',
      status: 'text',
      priority: 'text',
      due_on: 'date',
      tags: 'text[]',
      project_id: 'text',
      assignee_id: 'text',
    },
    tasks.map(({ ref, project_ref, assignee_ref, ...task }) => ({
      ...task,
      id: idFor('tasks', ref),
      project_id: idOf('projects', project_ref),
      assignee_id: idOf('team_members', assignee_ref),
    })),
  );

  // Customers come as late as their dependents allow: the lock is held until commit.
  const customers = data.customers ?? [];
  if (customers.length) await lockCustomerChanges(tx, orgId);
  await insertRows(
    tx,
    'customers',
    orgId,
    { id: 'text', name: 'text', company: 'text', email: 'text', phone: 'text', tags: 'text[]', notes: 'text' },
    customers.map(({ ref, ...customer }) => ({ ...customer, id: idFor('customers', ref) })),
    { clockStamps: true },
  );

  const events = data.events ?? [];
  await insertRows(
    tx,
    'events',
    orgId,
    {
      id: 'text',
      title: 'text',
      description: 'text',
      location: 'text',
      starts_at: 'timestamptz',
      ends_at: 'timestamptz',
      attendee_ids: 'text[]',
      customer_id: 'text',
    },
    events.map(({ ref, attendee_refs, customer_ref, ...event }) => ({
      ...event,
      id: idFor('events', ref),
      attendee_ids: attendee_refs.map((member) => idOf('team_members', member)),
      customer_id: idOf('customers', customer_ref),
    })),
  );

  const invoices = data.invoices ?? [];
  await insertRows(
    tx,
    'invoices',
    orgId,
    {
      id: 'text',
      customer_id: 'text',
      number: 'text',
      status: 'text',
      issued_on: 'date',
      due_on: 'date',
      currency: 'text',
      lines: 'jsonb',
      total_cents: 'bigint',
    },
    invoices.map(({ ref, customer_ref, lines, total_cents: _given, ...invoice }) => ({
      ...invoice,
      id: idFor('invoices', ref),
      customer_id: idOf('customers', customer_ref),
      lines: lines.map(({ product_ref, ...line }) => ({ ...line, product_id: idOf('products', product_ref) ?? null })),
      total_cents: invoiceTotal(lines),
    })),
  );

  const bookings = data.bookings ?? [];
  await insertRows(
    tx,
    'bookings',
    orgId,
    {
      id: 'text',
      customer_id: 'text',
      product_id: 'text',
      staff_member_id: 'text',
      title: 'text',
      status: 'text',
      starts_at: 'timestamptz',
      ends_at: 'timestamptz',
      notes: 'text',
    },
    bookings.map(({ ref, customer_ref, product_ref, staff_member_ref, ...booking }) => ({
      ...booking,
      id: idFor('bookings', ref),
      customer_id: idOf('customers', customer_ref),
      product_id: idOf('products', product_ref),
      staff_member_id: idOf('team_members', staff_member_ref),
    })),
  );

  const expenses = data.expenses ?? [];
  await insertRows(
    tx,
    'expenses',
    orgId,
    {
      id: 'text',
      member_id: 'text',
      project_id: 'text',
      description: 'text',
      category: 'text',
      amount_cents: 'bigint',
      currency: 'text',
      spent_on: 'date',
    },
    expenses.map(({ ref, member_ref, project_ref, ...expense }) => ({
      ...expense,
      id: idFor('expenses', ref),
      member_id: idOf('team_members', member_ref),
      project_id: idOf('projects', project_ref),
    })),
  );

  const workLogs = data.work_logs ?? [];
  await insertRows(
    tx,
    'work_logs',
    orgId,
    { id: 'text', member_id: 'text', task_id: 'text', project_id: 'text', minutes: 'integer', worked_on: 'date', note: 'text' },
    workLogs.map(({ ref, member_ref, task_ref, project_ref, ...log }) => ({
      ...log,
      id: idFor('work_logs', ref),
      member_id: idOf('team_members', member_ref),
      task_id: idOf('tasks', task_ref),
      project_id: idOf('projects', project_ref),
    })),
  );

  return Object.fromEntries(importKinds.map((kind) => [kind, data[kind]?.length ?? 0])) as ImportCounts;
}

/** Invoice numbers are unique in an organization: a clash with one already there is named like any other problem. */
async function refuseTakenInvoiceNumbers(tx: Queryable, orgId: string, data: ValidDataFile): Promise<void> {
  const numbers = (data.invoices ?? []).map((invoice) => invoice.number);
  if (!numbers.length) return;
  const { rows } = await tx.query('SELECT number FROM invoices WHERE org_id = $1 AND number = ANY ($2::text[])', [orgId, numbers]);
  if (!rows.length) return;
  const taken = new Set(rows.map((row) => row.number as string));
  throw invalidFile(
    numbers.flatMap((number, index) =>
      taken.has(number) ? [{ field: `invoices[${index}].number`, message: `the organization has an invoice numbered "${number}" already` }] : [],
    ),
  );
}
