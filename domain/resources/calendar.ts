import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createWrite, deleteWrite, updateWrite } from '../gate/writes';
import { AppError } from '../kit/errors';
import { createdAt, ifMatch, instantField, recordId, recordVersion, text, updatedAt, utcInstant } from '../kit/fields';
import { newId } from '../kit/ids';
import { decodeTimeCursor, pageInput, toTimePage, type Page } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import type { Reference } from '../kit/references';
import { loadRecord, plainRecord } from '../kit/rows';

const eventId = text({ max: 100 }).describe('The event id, e.g. cal_01j…');
const eventKind = z
  .enum(['meeting', 'out_of_office'])
  .describe('meeting (the default), or out_of_office: its attendees are away, and are not asked to review held writes meanwhile');
const instant = utcInstant;

export const eventSchema = z
  .object({
    id: recordId('event', 'cal', 'use it as {id} in /v1/calendar/events/{id} to read, update or delete the event'),
    title: z.string().describe('What the time is for, e.g. "Quarterly review with Acme"'),
    kind: eventKind,
    description: z.string().nullable().describe('Agenda or details; null when none'),
    location: z.string().nullable().describe('Where: a room, an address or a meeting link; null when none'),
    starts_at: instantField('Start'),
    ends_at: instantField('End', 'always after starts_at'),
    attendee_ids: z.array(z.string()).describe('Team members taking part (team member ids, see /v1/team-members)'),
    customer_id: z.string().nullable().describe('The customer the event is with (a customer id, see /v1/customers/{id}), or null'),
    version: recordVersion,
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A calendar event: time booked for team members');
export type CalendarEvent = z.infer<typeof eventSchema>;

const fields = {
  title: text({ max: 300 }).trim().min(1).describe('What the time is for, 1 to 300 characters'),
  description: text({ max: 20_000 }).describe('Agenda or details'),
  location: text({ max: 500 }).describe('A room, an address or a meeting link'),
  starts_at: instant.describe('Start, RFC 3339 with offset, e.g. 2026-11-24T09:00:00+01:00'),
  ends_at: instant.describe('End, RFC 3339 with offset; after starts_at'),
  attendee_ids: z.array(text({ max: 100 })).max(50).describe('Team member ids of those taking part'),
  customer_id: text({ max: 100 }).describe('The customer the event is with (a customer id)'),
};

const endsAfterStart = (value: { starts_at?: string; ends_at?: string }) =>
  !value.starts_at || !value.ends_at || Date.parse(value.ends_at) > Date.parse(value.starts_at);
const endsAfterStartIssue = { message: 'ends_at must be after starts_at', path: ['ends_at'] };

export const bookEventInput = z
  .strictObject({
    title: fields.title,
    kind: eventKind.default('meeting'),
    description: fields.description.optional(),
    location: fields.location.optional(),
    starts_at: fields.starts_at,
    ends_at: fields.ends_at,
    attendee_ids: fields.attendee_ids.default([]),
    customer_id: fields.customer_id.optional(),
  })
  .refine(endsAfterStart, endsAfterStartIssue);
export type BookEventInput = z.infer<typeof bookEventInput>;

export const updateEventInput = z
  .strictObject({
    id: eventId,
    title: fields.title.optional(),
    kind: eventKind.optional(),
    description: fields.description.nullable().optional(),
    location: fields.location.nullable().optional(),
    starts_at: fields.starts_at.optional(),
    ends_at: fields.ends_at.optional(),
    attendee_ids: fields.attendee_ids.optional(),
    customer_id: fields.customer_id.nullable().optional(),
    if_match: ifMatch,
  })
  .refine(endsAfterStart, endsAfterStartIssue);
export const eventIdInput = z.strictObject({ id: eventId });
export const deleteEventInput = z.strictObject({ id: eventId, if_match: ifMatch });

const range = {
  from: instant.optional().describe('Start of the window, RFC 3339 (default: now, or 30 days before to)'),
  to: instant.optional().describe('End of the window, RFC 3339 (default: 30 days after from; at most 366 days after it)'),
};

export const listEventsInput = z.strictObject({
  ...range,
  attendee_id: text({ max: 100 }).optional().describe('Only events this team member attends'),
  customer_id: text({ max: 100 }).optional().describe('Only events with this customer'),
  ...pageInput,
});

function window(input: { from?: string; to?: string }): { from: Date; to: Date } {
  const span = 30 * 86_400_000;
  const to0 = input.to ? new Date(input.to) : undefined;
  const from = input.from ? new Date(input.from) : to0 ? new Date(to0.getTime() - span) : new Date();
  const to = to0 ?? new Date(from.getTime() + span);
  if (to <= from) throw new AppError('validation_failed', 'to must be after from', { fields: [{ field: 'to', message: 'must be after from' }] });
  if (to.getTime() - from.getTime() > 366 * 86_400_000) {
    throw new AppError('validation_failed', 'the window is at most 366 days', { fields: [{ field: 'to', message: 'at most 366 days after from' }] });
  }
  return { from, to };
}

export function listEvents(db: Queryable, orgId: string, input: z.infer<typeof listEventsInput>): Promise<Page<CalendarEvent>> {
  const { from, to } = window(input);
  const filters = new Filters(orgId)
    .add('ends_at > $?', from)
    .add('starts_at < $?', to)
    .add('$? = ANY (attendee_ids)', input.attendee_id)
    .add('customer_id = $?', input.customer_id);
  return listPage(db, 'events', filters, input);
}

export async function getEvent(db: Queryable, orgId: string, id: string): Promise<CalendarEvent> {
  return (await loadRecord(db, 'events', 'event', orgId, id)) as CalendarEvent;
}

export async function insertEvent(tx: Queryable, orgId: string, input: BookEventInput): Promise<CalendarEvent> {
  const { rows } = await tx.query(
    `INSERT INTO events (id, org_id, title, kind, description, location, starts_at, ends_at, attendee_ids, customer_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [
      newId('cal'),
      orgId,
      input.title,
      input.kind,
      input.description ?? null,
      input.location ?? null,
      input.starts_at,
      input.ends_at,
      input.attendee_ids,
      input.customer_id ?? null,
    ],
  );
  return plainRecord(rows[0]) as CalendarEvent;
}

/**
 * What a booking would collide with: the same attendees' other events and bookings in that time. The
 * policy sees it as context.double_booked and context.overlapping_ids.
 */
export async function findOverlaps(
  db: Queryable,
  orgId: string,
  booking: { starts_at: string; ends_at: string; attendee_ids: string[] },
  excludeId?: string,
): Promise<string[]> {
  if (booking.attendee_ids.length === 0) return [];
  const { rows } = await db.query(
    `SELECT id FROM events WHERE org_id = $1 AND attendee_ids && $2::text[] AND starts_at < $4 AND ends_at > $3 AND id <> $5
     UNION ALL
     SELECT id FROM bookings WHERE org_id = $1 AND staff_member_id = ANY ($2::text[]) AND status <> 'cancelled' AND starts_at < $4 AND ends_at > $3
     ORDER BY id LIMIT 50`,
    [orgId, booking.attendee_ids, booking.starts_at, booking.ends_at, excludeId ?? ''],
  );
  return rows.map((row) => row.id as string);
}

export const calendarItemSchema = z
  .object({
    source: z.enum(['event', 'booking', 'task_due']).describe('Where the item comes from: a calendar event, a booking, or a task due that day'),
    id: z
      .string()
      .describe('The id of the event, booking or task (per source): read it at /v1/calendar/events/{id}, /v1/bookings/{id} or /v1/tasks/{id}'),
    title: z.string().describe("The event's, booking's or task's title"),
    starts_at: instantField('Start', 'for a task due date, midnight of that day in the organization’s time zone'),
    ends_at: instantField('End', 'for a task due date, the following midnight'),
    all_day: z.boolean().describe('True for task due dates (midnight to midnight in the organization’s time zone)'),
    attendee_ids: z.array(z.string()).describe('Team members involved (attendees, the booked staff member, the assignee)'),
    customer_id: z.string().nullable().describe('The customer of the event or booking (a customer id), or null; always null for tasks'),
    status: z.string().nullable().describe('The booking’s or task’s status; null for events'),
  })
  .describe('One item of the unified calendar');
export type CalendarItem = z.infer<typeof calendarItemSchema>;

export const calendarFeedInput = z.strictObject({
  ...range,
  sources: z
    .string()
    .max(100)
    .optional()
    .transform((value) => value?.split(',').map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['event', 'booking', 'task_due'])).optional())
    .describe('Comma-separated sources to include: event, booking, task_due (default: all)'),
  attendee_id: text({ max: 100 }).optional().describe('Only items involving this team member'),
  ...pageInput,
});

/** Events, bookings and task due dates in one time-ordered feed; the cursor is the last (start, id) shown. */
export async function calendarFeed(db: Queryable, orgId: string, timezone: string, input: z.infer<typeof calendarFeedInput>): Promise<Page<CalendarItem>> {
  const { from, to } = window(input);
  const sources = input.sources?.length ? input.sources : ['event', 'booking', 'task_due'];
  const after = decodeTimeCursor(input.cursor);
  const { rows } = await db.query(
    `WITH items AS (
       SELECT 'event' AS source, id, title, starts_at, ends_at, false AS all_day, attendee_ids, customer_id, NULL::text AS status
       FROM events WHERE org_id = $1 AND ends_at > $2 AND starts_at < $3
       UNION ALL
       SELECT 'booking', id, title, starts_at, ends_at, false, ARRAY_REMOVE(ARRAY[staff_member_id], NULL), customer_id, status
       FROM bookings WHERE org_id = $1 AND ends_at > $2 AND starts_at < $3
       UNION ALL
       SELECT 'task_due', id, title, (due_on::timestamp AT TIME ZONE $4), ((due_on + 1)::timestamp AT TIME ZONE $4), true,
              ARRAY_REMOVE(ARRAY[assignee_id], NULL), NULL, status
       FROM tasks WHERE org_id = $1 AND due_on IS NOT NULL
         AND (due_on + 1)::timestamp AT TIME ZONE $4 > $2 AND due_on::timestamp AT TIME ZONE $4 < $3
     )
     SELECT *, (extract(epoch FROM starts_at) * 1000000)::bigint AS cursor_micros FROM items
     WHERE source = ANY ($5::text[]) AND ($6::text IS NULL OR $6 = ANY (attendee_ids))
       AND ($7::bigint IS NULL OR (starts_at, id) > (timestamptz 'epoch' + $7 * interval '1 microsecond', $8))
     ORDER BY starts_at, id LIMIT $9`,
    [orgId, from, to, timezone, sources, input.attendee_id ?? null, after?.micros ?? null, after?.id ?? '', input.limit + 1],
  );
  return toTimePage(rows, input.limit, (row) => plainRecord(row) as CalendarItem);
}

const eventRefs = (fields: { attendee_ids?: unknown; customer_id?: unknown }): Reference[] => [
  ...((fields.attendee_ids as string[] | undefined) ?? []).map((id, i) => ({ table: 'team_members' as const, field: `attendee_ids.${i}`, id })),
  { table: 'customers', field: 'customer_id', id: fields.customer_id as string | undefined },
];

/** A booking that collides with the same attendees' time is visible to the policy, to send it to review. */
async function overlapContext(db: Queryable, orgId: string, event: Record<string, unknown>, excludeId?: string) {
  const overlapping = await findOverlaps(
    db,
    orgId,
    { starts_at: String(event.starts_at), ends_at: String(event.ends_at), attendee_ids: (event.attendee_ids as string[]) ?? [] },
    excludeId,
  );
  return { double_booked: overlapping.length > 0, overlapping_ids: overlapping };
}

export const bookEvent = createWrite({
  name: 'calendar.book',
  resourceType: 'Event',
  input: bookEventInput,
  refs: eventRefs,
  context: (db, orgId, input) => overlapContext(db, orgId, input),
  insert: insertEvent,
  undoable: { table: 'events', what: 'event' },
});

export const updateEvent = updateWrite({
  name: 'calendar.update',
  resourceType: 'Event',
  table: 'events',
  what: 'event',
  input: updateEventInput,
  refs: eventRefs,
  check: (after) => {
    if (Date.parse(String(after.ends_at)) <= Date.parse(String(after.starts_at))) {
      throw new AppError('validation_failed', 'The event would end before it starts', {
        fields: [{ field: 'ends_at', message: 'must be after starts_at' }],
      });
    }
  },
  context: (db, orgId, after) => overlapContext(db, orgId, after, String(after.id)),
});

export const deleteEvent = deleteWrite({ name: 'calendar.delete', resourceType: 'Event', table: 'events', what: 'event', input: deleteEventInput });
