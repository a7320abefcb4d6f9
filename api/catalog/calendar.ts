import { bookEvent, calendarFeed, calendarFeedInput, calendarItemSchema, deleteEvent, eventIdInput, eventSchema, getEvent, listEvents, listEventsInput, updateEvent } from '../../domain/resources/calendar';
import { gatedOperation, getOperation, listOperation } from './define';

export const calendarOperations = [
  listOperation({
    name: 'calendar.feed',
    tool: 'get_calendar',
    summary: 'The unified calendar',
    description:
      "Everything on the calendar in a time window, in time order: events, customers' bookings and task due dates (all-day, in the organization's time zone); each item says its source. Paginated.",
    path: '/calendar',
    input: calendarFeedInput,
    item: calendarItemSchema,
    handler: (input, { db, caller }) => calendarFeed(db, caller.organization.id, caller.organization.timezone, input),
  }),
  listOperation({
    name: 'calendar.list_events',
    tool: 'list_events',
    summary: 'List events',
    description: 'Generic calendar events overlapping a time window (default: the next 30 days), newest first; filter by attendee or customer.',
    path: '/calendar/events',
    input: listEventsInput,
    item: eventSchema,
    handler: (input, { db, caller }) => listEvents(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'calendar.get_event',
    tool: 'get_event',
    summary: 'Read an event',
    description: 'One calendar event by id. The ETag header carries its version.',
    path: '/calendar/events/:id',
    input: eventIdInput,
    output: eventSchema,
    handler: (input, { db, caller }) => getEvent(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    write: bookEvent,
    tool: 'book_calendar_time',
    summary: 'Book calendar time',
    description:
      'Books time for team members (attendee_ids), optionally with a customer. The policy sees context.double_booked and context.overlapping_ids when it collides with the same attendees’ events or bookings.',
    method: 'POST',
    path: '/calendar/events',
    output: eventSchema,
  }),
  gatedOperation({
    write: updateEvent,
    tool: 'update_event',
    summary: 'Move or change an event',
    description: 'Changes the fields sent; If-Match refuses a stale update with 409. Overlaps are visible to the policy as for booking.',
    method: 'PATCH',
    path: '/calendar/events/:id',
    output: eventSchema,
  }),
  gatedOperation({
    write: deleteEvent,
    tool: 'delete_event',
    summary: 'Cancel an event',
    description: 'Deletes a calendar event; the answer is the event as it was. By default deletes are held for review.',
    method: 'DELETE',
    path: '/calendar/events/:id',
    output: eventSchema,
  }),
];
