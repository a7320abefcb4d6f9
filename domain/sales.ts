import { z } from 'zod';
import type { Queryable } from '../db/database';
import { calendarDate, text } from './fields';
import { decodeCursor, pageInput, toPage, type Page } from './pagination';
import { containsPattern, Filters } from './query';
import { loadRecord, plainRecord } from './records';

// Invoices, products and bookings arrive by import (gatehouse import / seed); the API only reads them.

const money = z.number().int().describe('An amount in the currency’s minor unit (cents)');
const currency = z.string().length(3).describe('ISO 4217 currency code, e.g. EUR');
const instant = z.iso.datetime({ offset: true });
const id = (what: string, example: string) => z.strictObject({ id: z.string().max(100).describe(`The ${what} id, e.g. ${example}`) });

export const productSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    sku: z.string().nullable().describe('Stock-keeping unit'),
    description: z.string().nullable(),
    unit_price_cents: money,
    currency,
    active: z.boolean().describe('Whether it is still sold'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .describe('A product or service the organization sells');

export const listProductsInput = z.strictObject({
  active: z.enum(['true', 'false']).optional().describe('true for products on sale, false for retired ones'),
  search: text({ max: 200 }).optional().describe('Matches name or SKU (case-insensitive)'),
  ...pageInput,
});
export const productIdInput = id('product', 'prd_01j…');

export const invoiceStatuses = ['draft', 'sent', 'paid', 'overdue', 'void'] as const;
export const invoiceSchema = z
  .object({
    id: z.string(),
    number: z.string().describe('The invoice number as printed'),
    customer_id: z.string(),
    status: z.enum(invoiceStatuses).describe('draft, sent, paid, overdue or void'),
    issued_on: z.iso.date(),
    due_on: z.iso.date(),
    currency,
    lines: z
      .array(
        z.object({
          description: z.string(),
          quantity: z.number(),
          unit_price_cents: money,
          product_id: z.string().nullable().optional(),
        }),
      )
      .describe('What was billed'),
    total_cents: money.describe('The invoice total in cents'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .describe('An invoice sent to a customer');

export const listInvoicesInput = z.strictObject({
  status: z.enum(invoiceStatuses).optional().describe('Only invoices with this status'),
  customer_id: z.string().max(100).optional().describe('Only invoices of this customer'),
  issued_after: calendarDate.optional().describe('Issued on or after this day'),
  issued_before: calendarDate.optional().describe('Issued on or before this day'),
  due_before: calendarDate.optional().describe('Due on or before this day (with status=sent: what falls due)'),
  ...pageInput,
});
export const invoiceIdInput = id('invoice', 'inv_01j…');

export const bookingStatuses = ['confirmed', 'completed', 'cancelled', 'no_show'] as const;
export const bookingSchema = z
  .object({
    id: z.string(),
    title: z.string().describe('What was booked, e.g. "Haircut" or "Consultation"'),
    customer_id: z.string(),
    product_id: z.string().nullable().describe('The product or service booked, if any'),
    staff_member_id: z.string().nullable().describe('The team member serving it, if any'),
    status: z.enum(bookingStatuses),
    starts_at: z.iso.datetime(),
    ends_at: z.iso.datetime(),
    notes: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .describe('A customer’s booking of a service at a time');

export const listBookingsInput = z.strictObject({
  from: instant.optional().describe('Only bookings ending after this time (RFC 3339)'),
  to: instant.optional().describe('Only bookings starting before this time (RFC 3339)'),
  customer_id: z.string().max(100).optional().describe('Only bookings of this customer'),
  status: z.enum(bookingStatuses).optional().describe('Only bookings with this status: confirmed, completed, cancelled or no_show'),
  ...pageInput,
});
export const bookingIdInput = id('booking', 'bkg_01j…');

/** A page of a plain table, newest first. */
export async function listPage<T>(db: Queryable, table: string, filters: Filters, input: { limit: number; cursor?: string }): Promise<Page<T>> {
  filters.add('id < $?', decodeCursor(input.cursor));
  const { rows } = await db.query(`SELECT * FROM ${table} ${filters.where} ORDER BY id DESC LIMIT ${filters.param(input.limit + 1)}`, filters.values);
  return toPage(rows.map((row) => plainRecord(row) as T & { id: string }), input.limit);
}

export function listProducts(db: Queryable, orgId: string, input: z.infer<typeof listProductsInput>) {
  const search = containsPattern(input.search);
  const filters = new Filters(orgId)
    .add('active = $?', input.active === undefined ? undefined : input.active === 'true')
    .add('(name ILIKE $? OR sku ILIKE $?)', search);
  return listPage(db, 'products', filters, input);
}

export function listInvoices(db: Queryable, orgId: string, input: z.infer<typeof listInvoicesInput>) {
  const filters = new Filters(orgId)
    .add('status = $?', input.status)
    .add('customer_id = $?', input.customer_id)
    .add('issued_on >= $?', input.issued_after)
    .add('issued_on <= $?', input.issued_before)
    .add('due_on <= $?', input.due_before);
  return listPage(db, 'invoices', filters, input);
}

export function listBookings(db: Queryable, orgId: string, input: z.infer<typeof listBookingsInput>) {
  const filters = new Filters(orgId)
    .add('ends_at > $?', input.from)
    .add('starts_at < $?', input.to)
    .add('customer_id = $?', input.customer_id)
    .add('status = $?', input.status);
  return listPage(db, 'bookings', filters, input);
}

export const getProduct = (db: Queryable, orgId: string, productId: string) => loadRecord(db, 'products', 'product', orgId, productId);
export const getInvoice = (db: Queryable, orgId: string, invoiceId: string) => loadRecord(db, 'invoices', 'invoice', orgId, invoiceId);
export const getBooking = (db: Queryable, orgId: string, bookingId: string) => loadRecord(db, 'bookings', 'booking', orgId, bookingId);

