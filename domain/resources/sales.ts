import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { calendarDate, cents, createdAt, currencyCode, dayField, instantField, recordId, text, updatedAt, utcInstant } from '../kit/fields';
import { decodeCursor, pageInput, toPage, type Page } from '../kit/pagination';
import { containsPattern, Filters } from '../kit/query';
import { loadRecord, plainRecord } from '../kit/rows';

// Invoices, products and bookings arrive by import (gatehouse import / seed); the API only reads them.

const instant = utcInstant;
const id = (what: string, example: string) => z.strictObject({ id: text({ max: 100 }).describe(`The ${what} id, e.g. ${example}`) });

export const productSchema = z
  .object({
    id: recordId('product', 'prd', 'matches product_id on bookings and invoice lines; use it as {id} in /v1/products/{id}'),
    name: z.string().describe('The product or service name as sold'),
    sku: z.string().nullable().describe('Stock-keeping unit, or null when it has none'),
    description: z.string().nullable().describe('What the product or service is; null when none'),
    unit_price_cents: cents('The price of one unit'),
    currency: currencyCode,
    active: z.boolean().describe('Whether it is still sold; false for retired products'),
    created_at: createdAt,
    updated_at: updatedAt,
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
    id: recordId('invoice', 'inv', 'use it as {id} in /v1/invoices/{id}'),
    number: z.string().describe('The invoice number as printed, unique in the organization'),
    customer_id: z.string().describe('The customer billed (a customer id, see /v1/customers/{id})'),
    status: z.enum(invoiceStatuses).describe('draft (not sent yet), sent (awaiting payment), paid, overdue (past due_on, unpaid) or void (cancelled; nothing is owed)'),
    issued_on: dayField('The day the invoice was issued'),
    due_on: dayField('The day payment is due; never before issued_on'),
    currency: currencyCode,
    lines: z
      .array(
        z.object({
          description: z.string().describe('What the line bills, as printed'),
          quantity: z.number().describe('How many units; may be fractional (hours, say)'),
          unit_price_cents: cents('The price of one unit; negative for a discount line'),
          product_id: z
            .string()
            .nullable()
            .optional()
            .describe('The product billed (a product id, see /v1/products/{id}); null or absent for lines not tied to a product, such as discounts'),
        }),
      )
      .describe('What was billed, one entry per invoice line, in printed order'),
    total_cents: cents('The invoice total: the sum of quantity × unit price over the lines, rounded to the cent'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('An invoice sent to a customer');

export const listInvoicesInput = z.strictObject({
  status: z.enum(invoiceStatuses).optional().describe('Only invoices with this status'),
  customer_id: text({ max: 100 }).optional().describe('Only invoices of this customer'),
  issued_after: calendarDate.optional().describe('Issued on or after this day'),
  issued_before: calendarDate.optional().describe('Issued on or before this day'),
  due_before: calendarDate.optional().describe('Due on or before this day (with status=sent: what falls due)'),
  ...pageInput,
});
export const invoiceIdInput = id('invoice', 'inv_01j…');

export const bookingStatuses = ['confirmed', 'completed', 'cancelled', 'no_show'] as const;
export const bookingSchema = z
  .object({
    id: recordId('booking', 'bkg', 'use it as {id} in /v1/bookings/{id}'),
    title: z.string().describe('What was booked, e.g. "Haircut" or "Consultation"'),
    customer_id: z.string().describe('The customer who booked (a customer id, see /v1/customers/{id})'),
    product_id: z.string().nullable().describe('The product or service booked (a product id, see /v1/products/{id}), or null'),
    staff_member_id: z.string().nullable().describe('The team member serving it (a team member id, see /v1/team-members), or null'),
    status: z
      .enum(bookingStatuses)
      .describe('confirmed (booked, not yet completed), completed, cancelled or no_show (the customer did not come)'),
    starts_at: instantField('Start'),
    ends_at: instantField('End', 'always after starts_at'),
    notes: z.string().nullable().describe('Notes on the booking; null when none'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A customer’s booking of a service at a time');

export const listBookingsInput = z.strictObject({
  from: instant.optional().describe('Only bookings ending after this time (RFC 3339)'),
  to: instant.optional().describe('Only bookings starting before this time (RFC 3339)'),
  customer_id: text({ max: 100 }).optional().describe('Only bookings of this customer'),
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

