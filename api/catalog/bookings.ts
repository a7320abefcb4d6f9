import { bookingIdInput, bookingSchema, getBooking, listBookings, listBookingsInput } from '../../domain/resources/bookings';
import { getOperation, listOperation } from './define';

// Bookings arrive by import (gatehouse import / seed); the API only reads them.

export const bookingOperations = [
  listOperation({
    name: 'bookings.list',
    tool: 'list_bookings',
    summary: 'List bookings',
    description: "Customers' bookings, newest first; filter by a time window, customer and status. Paginated.",
    path: '/bookings',
    input: listBookingsInput,
    item: bookingSchema,
    handler: (input, { db, caller }) => listBookings(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'bookings.get',
    tool: 'get_booking',
    summary: 'Read a booking',
    description: 'One booking: which customer booked what, when, with whom, and its status.',
    path: '/bookings/:id',
    input: bookingIdInput,
    output: bookingSchema,
    handler: (input, { db, caller }) => getBooking(db, caller.organization.id, input.id),
  }),
];
