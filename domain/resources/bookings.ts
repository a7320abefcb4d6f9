import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createdAt, idInput, instantField, recordId, text, updatedAt, utcInstant } from '../kit/fields';
import { pageInput } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord } from '../kit/rows';

// Customers' bookings arrive by import (gatehouse import / seed); the API only reads them.

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
  from: utcInstant.optional().describe('Only bookings ending after this time (RFC 3339)'),
  to: utcInstant.optional().describe('Only bookings starting before this time (RFC 3339)'),
  customer_id: text({ max: 100 }).optional().describe('Only bookings of this customer'),
  status: z.enum(bookingStatuses).optional().describe('Only bookings with this status: confirmed, completed, cancelled or no_show'),
  ...pageInput,
});
export const bookingIdInput = idInput('The booking id, e.g. bkg_01j…');

export function listBookings(db: Queryable, orgId: string, input: z.infer<typeof listBookingsInput>) {
  const filters = new Filters(orgId)
    .add('ends_at > $?', input.from)
    .add('starts_at < $?', input.to)
    .add('customer_id = $?', input.customer_id)
    .add('status = $?', input.status);
  return listPage(db, 'bookings', filters, input);
}

export const getBooking = (db: Queryable, orgId: string, bookingId: string) => loadRecord(db, 'bookings', 'booking', orgId, bookingId);
