import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { calendarDate, cents, createdAt, currencyCode, dayField, idInput, recordId, text, updatedAt } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord } from '../kit/rows';

// Invoices arrive by import (gatehouse import / seed); the API only reads them.

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
export const invoiceIdInput = idInput('The invoice id, e.g. inv_01j…');

export function listInvoices(db: Queryable, orgId: string, input: z.infer<typeof listInvoicesInput>) {
  const filters = new Filters(orgId)
    .add('status = $?', input.status)
    .add('customer_id = $?', input.customer_id)
    .add('issued_on >= $?', input.issued_after)
    .add('issued_on <= $?', input.issued_before)
    .add('due_on <= $?', input.due_before);
  return listPage(db, 'invoices', filters, input);
}

export const getInvoice = (db: Queryable, orgId: string, invoiceId: string) => loadRecord(db, 'invoices', 'invoice', orgId, invoiceId);
