import type { z } from 'zod';
import type { Queryable } from '../../db/database';
import { AppError } from '../kit/errors';
import { assertOwned, type Reference } from '../kit/references';
import { assertVersion, changedFields, deleteRecord, loadRecord, updateRecord } from '../kit/rows';

// How a resource family declares its gated writes: a create, an update or a delete, each built here from
// what differs between families (the table, the references to check, what the policy sees).

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
  /** The Cedar type of the resource, when it is not the write's own (an undo proposes the original's record). */
  resourceType?: string;
}

/**
 * Where a write's one record lives, so that the write can be undone: its table, its kind for people, and whether
 * the write creates, updates or deletes it. Writes without one (a meeting ingest creates several records) cannot
 * be undone.
 */
export interface UndoableRecord {
  table: string;
  what: string;
  kind: 'create' | 'update' | 'delete';
  /** Taken before an undo changes the record, as before the write itself (customers serialize their changes). */
  lock?: (tx: Queryable, orgId: string) => Promise<void>;
}

export interface AppliedResource {
  resourceId: string;
  result: unknown;
  /** The Cedar type of what was written, when it is not the write's own (an undo writes the original's record). */
  resourceType?: string;
}

/** What the policy decided on, handed to `apply` so the write lands on the record the policy saw. */
export interface Decided {
  before?: Record<string, unknown>;
  /** The workflow applying the write: what an undo records as the undo of the writes it takes back. */
  workflowId?: string;
}

/** Who writes: the acting key, taken from the request and never from the input, which a caller controls. */
export interface Writer {
  apiKeyId: string;
  /**
   * What this request may do: the key's abilities, narrowed for a connected client to what its owner granted (an
   * undo checks the family of the write it undoes against them).
   */
  abilities?: readonly string[];
}

/**
 * A write subject to policy. `propose` reads what the policy needs; `apply` performs the write inside the
 * transaction that also records it, so it runs once per workflow however often it is retried.
 */
export interface GatedWrite<Schema extends z.ZodObject = z.ZodObject> {
  /** `<family>.<verb>`: the operation's name everywhere, and the policy's action (`Action::"tasks.create"`). */
  name: string;
  /** The Cedar entity type of the resource. */
  resourceType: string;
  /** What a caller sends; the catalog entry of the write takes it as its input. */
  input: Schema;
  /** Where its record lives, for an undo; absent when the write cannot be undone. */
  record?: UndoableRecord;
  propose(db: Queryable, orgId: string, input: z.output<Schema>, by: Writer): Promise<Proposal>;
  apply(tx: Queryable, orgId: string, input: z.output<Schema>, decided: Decided, by: Writer): Promise<AppliedResource>;
}

/** The input of an update or a delete: the record's id, and the version the caller last read. */
type ExistingRecordInput = z.ZodObject & z.ZodType<{ id: string; if_match?: string }>;

type Patch = Record<string, unknown>;

export function createWrite<Schema extends z.ZodObject>(spec: {
  name: string;
  resourceType: string;
  input: Schema;
  refs?: (input: z.output<Schema>) => Reference[];
  /** What the policy sees as the resource; the input itself by default. */
  describe?: (input: z.output<Schema>) => Record<string, unknown>;
  context?: (db: Queryable, orgId: string, input: z.output<Schema>) => Promise<Record<string, unknown>>;
  insert: (tx: Queryable, orgId: string, input: z.output<Schema>, by: Writer) => Promise<{ id: string }>;
  /** The table the record is inserted into, so that the create can be undone (removing the record). */
  undoable?: Table & { lock?: (tx: Queryable, orgId: string) => Promise<void> };
}): GatedWrite<Schema> {
  return {
    name: spec.name,
    resourceType: spec.resourceType,
    input: spec.input,
    record: spec.undoable && { ...spec.undoable, kind: 'create' },
    async propose(db, orgId, input) {
      await assertOwned(db, orgId, spec.refs?.(input) ?? []);
      return {
        resourceId: 'new',
        resource: spec.describe?.(input) ?? { ...input },
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

/** Where an update or a delete finds its record. */
interface Table {
  table: string;
  /** The record's kind, for people: `task`, `team member`. */
  what: string;
}

export function updateWrite<Schema extends ExistingRecordInput>(
  spec: Table & {
    name: string;
    resourceType: string;
    input: Schema;
    refs?: (patch: Patch) => Reference[];
    /** Checks the record as it would be after the change (fields that depend on each other). */
    check?: (after: Record<string, unknown>) => void;
    context?: (db: Queryable, orgId: string, after: Record<string, unknown>) => Promise<Record<string, unknown>>;
    /** Taken before the write (customers serialize their changes for sync). */
    lock?: (tx: Queryable, orgId: string) => Promise<void>;
  },
): GatedWrite<Schema> {
  return {
    name: spec.name,
    resourceType: spec.resourceType,
    input: spec.input,
    record: { table: spec.table, what: spec.what, kind: 'update', lock: spec.lock },
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

export function deleteWrite<Schema extends ExistingRecordInput>(
  spec: Table & {
    name: string;
    resourceType: string;
    input: Schema;
    /** Records that refer to this one: while any do, the delete is refused before the policy runs. */
    referrers?: { table: string; column: string; what: string }[];
    /** Records that belong to the key that wrote them (agent memories): to any other key they do not exist. */
    ownedByKey?: boolean;
  },
): GatedWrite<Schema> {
  const assertKeyOwns = (record: Record<string, unknown>, id: string, by: Writer) => {
    if (spec.ownedByKey && record.api_key_id !== by.apiKeyId) throw new AppError('not_found', `${spec.what} ${id} was not found`);
  };
  return {
    name: spec.name,
    resourceType: spec.resourceType,
    input: spec.input,
    // A key's own records (memories) are not undone: another key, or a person, would restore what it never saw.
    record: spec.ownedByKey ? undefined : { table: spec.table, what: spec.what, kind: 'delete' },
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
