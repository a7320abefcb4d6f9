import type { Database } from '../../db/database';
import { newId } from '../../domain/kit/ids';
import { createWebhookEndpoint } from '../../domain/notify/endpoints';
import { testSecrets } from './secrets';

export interface Fixtures {
  member: string;
  project: string;
  customer: string;
  product: string;
  invoice: string;
  booking: string;
  expense: string;
  workLog: string;
  event: string;
  task: string;
  meetingIngest: string;
}

/** One record of every kind in an organization, written straight to the database. */
export async function insertFixtures(db: Database, orgId: string): Promise<Fixtures> {
  const ids: Fixtures = {
    member: newId('mem'),
    project: newId('prj'),
    customer: newId('cus'),
    product: newId('prd'),
    invoice: newId('inv'),
    booking: newId('bkg'),
    expense: newId('exp'),
    workLog: newId('wlg'),
    event: newId('cal'),
    task: newId('task'),
    meetingIngest: newId('mtg'),
  };
  const tomorrow = new Date(Date.now() + 86_400_000);
  const at = (hour: number) => new Date(Date.UTC(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth(), tomorrow.getUTCDate(), hour)).toISOString();
  const day = tomorrow.toISOString().slice(0, 10);
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO team_members (id, org_id, name, email, title) VALUES ($1, $2, 'Ada Lovelace', 'ada@example.com', 'Engineer')`, [ids.member, orgId]);
    await tx.query(`INSERT INTO projects (id, org_id, name, status, owner_id) VALUES ($1, $2, 'Website relaunch', 'active', $3)`, [ids.project, orgId, ids.member]);
    await tx.query(`INSERT INTO customers (id, org_id, name, company, email, tags) VALUES ($1, $2, 'Grace Hopper', 'Navy Labs', 'grace@navy.example', '{vip}')`, [ids.customer, orgId]);
    await tx.query(`INSERT INTO products (id, org_id, name, sku, unit_price_cents, currency) VALUES ($1, $2, 'Consultation', 'CONS-1', 12000, 'EUR')`, [ids.product, orgId]);
    await tx.query(
      `INSERT INTO invoices (id, org_id, customer_id, number, status, issued_on, due_on, currency, lines, total_cents)
       VALUES ($1, $2, $3, $4, 'sent', $5, $5, 'EUR', $6, 12000)`,
      [ids.invoice, orgId, ids.customer, `INV-${ids.invoice.slice(-6)}`, day, JSON.stringify([{ description: 'Consultation', quantity: 1, unit_price_cents: 12000, product_id: ids.product }])],
    );
    await tx.query(
      `INSERT INTO bookings (id, org_id, customer_id, product_id, staff_member_id, title, status, starts_at, ends_at)
       VALUES ($1, $2, $3, $4, $5, 'Consultation', 'confirmed', $6, $7)`,
      [ids.booking, orgId, ids.customer, ids.product, ids.member, at(14), at(15)],
    );
    await tx.query(
      `INSERT INTO events (id, org_id, title, starts_at, ends_at, attendee_ids, customer_id) VALUES ($1, $2, 'Kick-off', $3, $4, $5, $6)`,
      [ids.event, orgId, at(9), at(10), [ids.member], ids.customer],
    );
    await tx.query(
      `INSERT INTO tasks (id, org_id, title, status, priority, due_on, project_id, assignee_id) VALUES ($1, $2, 'Draft the plan', 'todo', 'high', $3, $4, $5)`,
      [ids.task, orgId, day, ids.project, ids.member],
    );
    await tx.query(
      `INSERT INTO expenses (id, org_id, member_id, project_id, description, category, amount_cents, currency, spent_on) VALUES ($1, $2, $3, $4, 'Train to client', 'travel', 4500, 'EUR', $5)`,
      [ids.expense, orgId, ids.member, ids.project, day],
    );
    await tx.query(`INSERT INTO work_logs (id, org_id, member_id, task_id, minutes, worked_on) VALUES ($1, $2, $3, $4, 90, $5)`, [ids.workLog, orgId, ids.member, ids.task, day]);
    await tx.query(
      `INSERT INTO meeting_ingests (id, org_id, title, occurred_at, participants, transcript) VALUES ($1, $2, 'Weekly sync', now(), '{Ada}', 'Ada: let us ship it.')`,
      [ids.meetingIngest, orgId],
    );
  });
  return ids;
}

/** A webhook endpoint of the organization on loopback (nothing listens there: the tables only read and change it). */
export async function insertWebhookEndpoint(db: Database, orgId: string): Promise<string> {
  const { endpoint } = await createWebhookEndpoint(db, testSecrets, orgId, { url: 'http://127.0.0.1:9/table', eventTypes: ['write.applied'] }, { allowLoopback: true, allowPrivate: false });
  return endpoint.id;
}

/** A delivery (failed) of an event to a new endpoint of the organization: what a person redelivers. */
export async function insertWebhookDelivery(db: Database, orgId: string): Promise<{ endpointId: string; deliveryId: string }> {
  const endpointId = await insertWebhookEndpoint(db, orgId);
  const eventId = newId('evt');
  const deliveryId = newId('whd');
  await db.query(`INSERT INTO webhook_events (id, org_id, type, data, relayed_at) VALUES ($1, $2, 'write.applied', '{}', now())`, [eventId, orgId]);
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts, last_error, started_at)
     VALUES ($1, $2, $3, $4, 'failed', 3, 'connection refused', now())`,
    [deliveryId, orgId, endpointId, eventId],
  );
  return { endpointId, deliveryId };
}

/**
 * An applied write of the organization (a task's create, as the gate keeps it), to read or undo: its id, the
 * workflow id. Written straight to the tables, so that it exists whatever the organization's policy says.
 */
export async function insertAppliedWrite(db: Database, orgId: string): Promise<string> {
  const taskId = newId('task');
  const write = `fixture:tasks.create:${newId('task').slice(5)}`;
  await db.query(`INSERT INTO tasks (id, org_id, title, status, priority) VALUES ($1, $2, 'Applied for the table', 'todo', 'normal')`, [taskId, orgId]);
  await db.query(
    `INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result, record_table, write_kind)
     SELECT $1, org_id, 'tasks.create', 'Task', id, to_jsonb(t) - 'org_id', 'tasks', 'create' FROM tasks t WHERE id = $2`,
    [write, taskId],
  );
  return write;
}
