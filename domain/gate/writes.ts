import type { z } from 'zod';
import type { Queryable } from '../../db/database';
import { bookEventInput, findOverlaps, insertEvent, updateEventInput, deleteEventInput } from '../resources/calendar';
import { createCustomerInput, insertCustomer, lockCustomerChanges, updateCustomerInput } from '../resources/customers';
import { AppError } from '../kit/errors';
import { createMeetingIngestInput, insertMeetingIngest } from '../resources/meeting-ingests';
import { forgetInput, insertMemory, rememberInput } from '../resources/memories';
import { createProjectInput, deleteProjectInput, insertProject, updateProjectInput } from '../resources/projects';
import { assertOwned, assertVersion, changedFields, deleteRecord, loadRecord, updateRecord, type OwnedTable } from '../kit/rows';
import { createTaskInput, deleteTaskInput, insertTask, updateTaskInput } from '../resources/tasks';

/** What the policy sees of a write before it runs. */
export interface Proposal {
  resourceId: string;
  /** The record as it would be after the write. */
  resource: Record<string, unknown>;
  /** For updates and deletes: the current record and the fields that change. */
  before?: Record<string, unknown>;
  changes?: Record<string, unknown>;
  /** More for the policy's context (a booking's overlaps, say). */
  context?: Record<string, unknown>;
}

export interface AppliedResource {
  resourceId: string;
  result: unknown;
}

/** What the policy decided on, handed to `apply` so the write lands on the record the policy saw. */
export interface Decided {
  before?: Record<string, unknown>;
}

/** Who writes: the acting key, taken from the request and never from the input, which a caller controls. */
export interface Writer {
  apiKeyId: string;
}

/**
 * A write subject to policy. `propose` reads what the policy needs; `apply` performs the write inside the
 * transaction that also records it, so it runs once per workflow however often it is retried.
 */
export interface GatedWrite<Input = unknown> {
  operation: string;
  /** The Cedar entity type of the resource. */
  resourceType: string;
  input: z.ZodType<Input>;
  propose(db: Queryable, orgId: string, input: Input, by: Writer): Promise<Proposal>;
  apply(tx: Queryable, orgId: string, input: Input, decided: Decided, by: Writer): Promise<AppliedResource>;
}

type Ref = { table: OwnedTable; field: string; id: string | null | undefined };
type Patch = Record<string, unknown>;

function createWrite<Input extends object>(spec: {
  operation: string;
  resourceType: string;
  input: z.ZodType<Input>;
  refs?: (input: Input) => Ref[];
  /** What the policy sees as the resource; the input itself by default. */
  describe?: (input: Input) => Record<string, unknown>;
  context?: (db: Queryable, orgId: string, input: Input) => Promise<Record<string, unknown>>;
  insert: (tx: Queryable, orgId: string, input: Input, by: Writer) => Promise<{ id: string }>;
}): GatedWrite<Input> {
  return {
    operation: spec.operation,
    resourceType: spec.resourceType,
    input: spec.input,
    async propose(db, orgId, input) {
      await assertOwned(db, orgId, spec.refs?.(input) ?? []);
      return {
        resourceId: 'new',
        resource: spec.describe?.(input) ?? { ...(input as Record<string, unknown>) },
        context: await spec.context?.(db, orgId, input),
      };
    },
    async apply(tx, orgId, input, _decided, by) {
      await assertOwned(tx, orgId, spec.refs?.(input) ?? []);
      const record = await spec.insert(tx, orgId, input, by);
      return { resourceId: record.id, result: record };
    },
  };
}

const patchOf = (input: object): Patch =>
  Object.fromEntries(Object.entries(input).filter(([key, value]) => key !== 'id' && key !== 'if_match' && value !== undefined));

function seenVersion(decided: Decided): number {
  const version = decided.before?.version;
  if (typeof version !== 'number') throw new AppError('conflict', 'the decision did not record the version it saw');
  return version;
}

function updateWrite<Input extends { id: string; if_match?: string }>(spec: {
  operation: string;
  resourceType: string;
  table: string;
  what: string;
  input: z.ZodType<Input>;
  refs?: (patch: Patch) => Ref[];
  /** Checks the record as it would be after the change (fields that depend on each other). */
  check?: (after: Record<string, unknown>) => void;
  context?: (db: Queryable, orgId: string, after: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Taken before the write (customers serialize their changes for sync). */
  lock?: (tx: Queryable, orgId: string) => Promise<void>;
}): GatedWrite<Input> {
  return {
    operation: spec.operation,
    resourceType: spec.resourceType,
    input: spec.input,
    async propose(db, orgId, input) {
      const before = await loadRecord(db, spec.table, spec.what, orgId, input.id);
      assertVersion(spec.what, before, input.if_match);
      const patch = patchOf(input);
      await assertOwned(db, orgId, spec.refs?.(patch) ?? []);
      const after = { ...before, ...patch };
      spec.check?.(after);
      return { resourceId: input.id, resource: after, before, changes: changedFields(before, patch), context: await spec.context?.(db, orgId, after) };
    },
    async apply(tx, orgId, input, decided) {
      const patch = patchOf(input);
      // A change to nothing writes nothing: no new version, no stale ETags, no sync traffic.
      if (Object.keys(changedFields(decided.before ?? {}, patch)).length === 0) {
        return { resourceId: input.id, result: await loadRecord(tx, spec.table, spec.what, orgId, input.id) };
      }
      await spec.lock?.(tx, orgId);
      await assertOwned(tx, orgId, spec.refs?.(patch) ?? []);
      const record = await updateRecord(tx, spec.table, spec.what, orgId, input.id, patch, seenVersion(decided));
      return { resourceId: input.id, result: record };
    },
  };
}

function deleteWrite<Input extends { id: string; if_match?: string }>(spec: {
  operation: string;
  resourceType: string;
  table: string;
  what: string;
  input: z.ZodType<Input>;
  /** Records that refer to this one: while any do, the delete is refused before the policy runs. */
  referrers?: { table: string; column: string; what: string }[];
  /** Records that belong to the key that wrote them (agent memories): to any other key they do not exist. */
  ownedByKey?: boolean;
}): GatedWrite<Input> {
  const assertKeyOwns = (record: Record<string, unknown>, id: string, by: Writer) => {
    if (spec.ownedByKey && record.api_key_id !== by.apiKeyId) throw new AppError('not_found', `${spec.what} ${id} was not found`);
  };
  return {
    operation: spec.operation,
    resourceType: spec.resourceType,
    input: spec.input,
    async propose(db, orgId, input, by) {
      const before = await loadRecord(db, spec.table, spec.what, orgId, input.id);
      assertKeyOwns(before, input.id, by);
      assertVersion(spec.what, before, input.if_match);
      for (const referrer of spec.referrers ?? []) {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${referrer.table} WHERE org_id = $1 AND ${referrer.column} = $2`, [orgId, input.id]);
        if (rows[0].n > 0) {
          throw new AppError('conflict', `${spec.what} ${input.id} is still referred to by ${rows[0].n} ${referrer.what}; move or remove them first`, {
            referred_by: referrer.table,
            count: rows[0].n,
          });
        }
      }
      return { resourceId: input.id, resource: before, before, changes: {} };
    },
    async apply(tx, orgId, input, decided, by) {
      const record = await deleteRecord(tx, spec.table, spec.what, orgId, input.id, seenVersion(decided));
      // Checked on the deleted row itself: throwing rolls the delete back with the rest of the transaction.
      assertKeyOwns(record, input.id, by);
      return { resourceId: input.id, result: record };
    },
  };
}

const taskRefs = (fields: { project_id?: unknown; assignee_id?: unknown }): Ref[] => [
  { table: 'projects', field: 'project_id', id: fields.project_id as string | undefined },
  { table: 'team_members', field: 'assignee_id', id: fields.assignee_id as string | undefined },
];

const eventRefs = (fields: { attendee_ids?: unknown; customer_id?: unknown }): Ref[] => [
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

const writes = [
  createWrite({
    operation: 'tasks.create',
    resourceType: 'Task',
    input: createTaskInput,
    refs: taskRefs,
    // insertTask's fourth argument is the meeting a task came from, not the writer.
    insert: (tx, orgId, input) => insertTask(tx, orgId, input),
  }),
  updateWrite({ operation: 'tasks.update', resourceType: 'Task', table: 'tasks', what: 'task', input: updateTaskInput, refs: taskRefs }),
  deleteWrite({
    operation: 'tasks.delete',
    resourceType: 'Task',
    table: 'tasks',
    what: 'task',
    input: deleteTaskInput,
    referrers: [{ table: 'work_logs', column: 'task_id', what: 'work logs' }],
  }),

  createWrite({
    operation: 'projects.create',
    resourceType: 'Project',
    input: createProjectInput,
    refs: (p) => [{ table: 'team_members', field: 'owner_id', id: p.owner_id }],
    insert: insertProject,
  }),
  updateWrite({
    operation: 'projects.update',
    resourceType: 'Project',
    table: 'projects',
    what: 'project',
    input: updateProjectInput,
    refs: (p) => [{ table: 'team_members', field: 'owner_id', id: p.owner_id as string | undefined }],
  }),
  deleteWrite({
    operation: 'projects.delete',
    resourceType: 'Project',
    table: 'projects',
    what: 'project',
    input: deleteProjectInput,
    referrers: [
      { table: 'tasks', column: 'project_id', what: 'tasks' },
      { table: 'expenses', column: 'project_id', what: 'expenses' },
      { table: 'work_logs', column: 'project_id', what: 'work logs' },
    ],
  }),

  createWrite({ operation: 'customers.create', resourceType: 'Customer', input: createCustomerInput, insert: insertCustomer }),
  updateWrite({
    operation: 'customers.update',
    resourceType: 'Customer',
    table: 'customers',
    what: 'customer',
    input: updateCustomerInput,
    lock: lockCustomerChanges,
  }),

  createWrite({
    operation: 'calendar.book',
    resourceType: 'Event',
    input: bookEventInput,
    refs: eventRefs,
    context: (db, orgId, input) => overlapContext(db, orgId, input),
    insert: insertEvent,
  }),
  updateWrite({
    operation: 'calendar.update',
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
  }),
  deleteWrite({ operation: 'calendar.delete', resourceType: 'Event', table: 'events', what: 'event', input: deleteEventInput }),

  createWrite({
    operation: 'meeting_ingests.create',
    resourceType: 'MeetingIngest',
    input: createMeetingIngestInput,
    refs: (ingest) => ingest.tasks.flatMap((task, i) => taskRefs(task).map((ref) => ({ ...ref, field: `tasks.${i}.${ref.field}` }))),
    // The whole batch is what a reviewer and the policy judge; the transcript itself is left out.
    describe: (ingest) => ({
      title: ingest.title,
      occurred_at: ingest.occurred_at,
      participants: ingest.participants,
      source: ingest.source,
      transcript_length: ingest.transcript.length,
      task_count: ingest.tasks.length,
      tasks: ingest.tasks,
    }),
    insert: insertMeetingIngest,
  }),

  createWrite({ operation: 'memories.remember', resourceType: 'Memory', input: rememberInput, insert: insertMemory }),
  deleteWrite({ operation: 'memories.forget', resourceType: 'Memory', table: 'agent_memories', what: 'memory', input: forgetInput, ownedByKey: true }),
] satisfies GatedWrite<any>[];

export const gatedWrites: Record<string, GatedWrite<any>> = Object.fromEntries(writes.map((write) => [write.operation, write]));

export function gatedWrite(operation: string): GatedWrite<unknown> | undefined {
  return gatedWrites[operation];
}
