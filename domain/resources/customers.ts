import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createWrite, updateWrite } from '../gate/writes';
import { createdAt, ifMatch, recordId, recordVersion, text } from '../kit/fields';
import { newId } from '../kit/ids';
import { decodeTimeCursor, pageInput, toTimePage, type Page } from '../kit/pagination';
import { containsPattern, Filters, listPage } from '../kit/query';
import { loadRecord, plainRecord } from '../kit/rows';

const customerId = text({ max: 100 }).describe('The customer id, e.g. cus_01j…');

export const customerSchema = z
  .object({
    id: recordId('customer', 'cus', 'use it as customer_id on events, as the customer_id filter of invoices and bookings, or as {id} in /v1/customers/{id}'),
    name: z.string().describe("The customer's name (a person, or the contact at a company)"),
    company: z.string().nullable().describe('The company, if any; null otherwise'),
    email: z.string().nullable().describe('Email address, or null when unknown'),
    phone: z.string().nullable().describe('Phone number as it was written (no fixed format), or null when unknown'),
    tags: z.array(z.string()).describe('Labels such as vip, lead, wholesale'),
    notes: z.string().nullable().describe('Free-form notes about the customer; null when none'),
    version: recordVersion,
    created_at: createdAt,
    updated_at: z.iso
      .datetime()
      .describe('When the customer last changed (RFC 3339, UTC); the key of incremental sync: pass the last one you saw as updated_since'),
  })
  .describe('A customer of the organization');
export type Customer = z.infer<typeof customerSchema>;

const fields = {
  name: text({ max: 200 }).trim().min(1).describe("The customer's name, 1 to 200 characters"),
  company: text({ max: 200 }).describe('The company, if any'),
  email: z.email().max(320).describe('Email address'),
  phone: text({ max: 50 }).describe('Phone number, as written'),
  tags: z.array(text({ max: 50 }).trim().min(1)).max(20).describe('Labels, at most 20'),
  notes: text({ max: 20_000 }).describe('Free-form notes'),
};

export const createCustomerInput = z.strictObject({
  name: fields.name,
  company: fields.company.optional(),
  email: fields.email.optional(),
  phone: fields.phone.optional(),
  tags: fields.tags.default([]),
  notes: fields.notes.optional(),
});
export type CreateCustomerInput = z.infer<typeof createCustomerInput>;

export const updateCustomerInput = z.strictObject({
  id: customerId,
  name: fields.name.optional(),
  company: fields.company.nullable().optional(),
  email: fields.email.nullable().optional(),
  phone: fields.phone.nullable().optional(),
  tags: fields.tags.optional(),
  notes: fields.notes.nullable().optional(),
  if_match: ifMatch,
});
export const customerIdInput = z.strictObject({ id: customerId });

export const listCustomersInput = z.strictObject({
  search: text({ max: 200 }).optional().describe('Matches name, company or email (case-insensitive, part of a word is enough)'),
  tags: z
    .string()
    .max(500)
    .optional()
    .transform((value) => value?.split(',').map((tag) => tag.trim()).filter(Boolean))
    .describe('Comma-separated tags; only customers carrying all of them'),
  updated_since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'Incremental sync: only customers changed at or after this time (RFC 3339), oldest change first. Pass the updated_at of the last customer you saw; a change is never missed, though the boundary customer may come again',
    ),
  ...pageInput,
});

/** Writes to customers take this lock so that updated_at follows commit order: what sync relies on. */
export async function lockCustomerChanges(tx: Queryable, orgId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('gatehouse.customers:' || $1))`, [orgId]);
}

export async function listCustomers(db: Queryable, orgId: string, input: z.infer<typeof listCustomersInput>): Promise<Page<Customer>> {
  const search = containsPattern(input.search);
  const filters = new Filters(orgId)
    .add('(name ILIKE $? OR company ILIKE $? OR email ILIKE $?)', search)
    .add('tags @> $?::text[]', input.tags?.length ? input.tags : undefined);
  if (input.updated_since) {
    // Oldest change first, by (updated_at, id): the order sync needs, and a stable one. The cursor keeps
    // updated_at to the microsecond, as stored: many customers of one import share a millisecond.
    filters.add('updated_at >= $?', new Date(input.updated_since));
    const after = decodeTimeCursor(input.cursor);
    if (after) filters.add(`(updated_at, id) > (timestamptz 'epoch' + $? * interval '1 microsecond', ${filters.param(after.id)})`, after.micros);
    const { rows } = await db.query(
      `SELECT *, (extract(epoch FROM updated_at) * 1000000)::bigint AS cursor_micros FROM customers ${filters.where}
       ORDER BY updated_at, id LIMIT ${filters.param(input.limit + 1)}`,
      filters.values,
    );
    return toTimePage(rows, input.limit, (row) => plainRecord(row) as Customer);
  }
  return listPage(db, 'customers', filters, input);
}

export async function getCustomer(db: Queryable, orgId: string, id: string): Promise<Customer> {
  return (await loadRecord(db, 'customers', 'customer', orgId, id)) as Customer;
}

export async function insertCustomer(tx: Queryable, orgId: string, input: CreateCustomerInput): Promise<Customer> {
  await lockCustomerChanges(tx, orgId);
  const { rows } = await tx.query(
    `INSERT INTO customers (id, org_id, name, company, email, phone, tags, notes, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp(), clock_timestamp()) RETURNING *`,
    [newId('cus'), orgId, input.name, input.company ?? null, input.email ?? null, input.phone ?? null, input.tags, input.notes ?? null],
  );
  return plainRecord(rows[0]) as Customer;
}

export const createCustomer = createWrite({ name: 'customers.create', resourceType: 'Customer', input: createCustomerInput, insert: insertCustomer, undoable: { table: 'customers', what: 'customer', lock: lockCustomerChanges } });

export const updateCustomer = updateWrite({
  name: 'customers.update',
  resourceType: 'Customer',
  table: 'customers',
  what: 'customer',
  input: updateCustomerInput,
  lock: lockCustomerChanges,
});
