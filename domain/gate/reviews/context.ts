import { z } from 'zod';
import type { Queryable } from '../../../db/database';
import { AppError } from '../../kit/errors';
import { instantField } from '../../kit/fields';
import { loadRecord } from '../../kit/rows';
import type { Review } from './schema';

// What a reviewer sees around a held write, beside the write itself: whether its record changed since it was held,
// what the agent remembered about that record, and where the write came from. Read for one review at a time
// (the queue's card asks for its own), so the queue's list stays one query.

/** A record a held write touches: the single write's, or one per changeset item. */
export interface HeldRecord {
  /** The changeset item (from 0); null for a single write. */
  index: number | null;
  operation: string;
  /** The record's id; null for a create not yet applied. */
  id: string | null;
  /** For updates and deletes: the record as the policy saw it when the write was held. */
  before: Record<string, unknown> | null;
  /** The record as it would be after the write (the input's fields for a create). */
  after: Record<string, unknown>;
  /** The write's input (as a reviewer edited it, if one did), defaults filled in. */
  input: Record<string, unknown>;
}

/** Where an update or a delete finds its record (the gated write's `record`); undefined for writes without one. */
export type RecordTableOf = (operation: string) => { table: string; what: string; kind: 'create' | 'update' | 'delete' } | undefined;

/** The records a review's write (or each item of its changeset) touches. */
export function heldRecords(review: Review): HeldRecord[] {
  if (review.changeset) {
    return review.changeset.items.map((item) => ({
      index: item.index,
      operation: item.operation,
      id: item.before ? item.resource_id : null,
      before: item.before,
      after: item.edit?.resource ?? item.resource,
      input: item.edit?.input ?? item.input,
    }));
  }
  const id = review.before && typeof review.before.id === 'string' ? review.before.id : null;
  return [{ index: null, operation: review.operation, id, before: review.before, after: review.edit?.resource ?? review.resource, input: review.edit?.input ?? review.proposed }];
}

/** Bookkeeping fields: they change with every write and say nothing of their own. */
const bookkeeping = new Set(['version', 'updated_at', 'org_id']);

const changeSchema = z.object({
  field: z.string().describe('The field that changed'),
  held: z.unknown().describe('Its value when the write was held (what the reviewer sees as "before")'),
  now: z.unknown().describe('Its value now'),
});

export const staleCheckSchema = z.object({
  index: z.number().int().nullable().describe('The changeset item (from 0); null for a single write'),
  operation: z.string().describe('The held write, e.g. tasks.update'),
  record_id: z.string().describe('The record the write updates or deletes'),
  state: z
    .enum(['current', 'changed', 'deleted'])
    .describe('current: the record is as it was when the write was held; changed: it was written since (the approved write would be refused as a conflict); deleted: it is gone'),
  held_version: z.number().int().nullable().describe('The version the write was held against'),
  current_version: z.number().int().nullable().describe('The version now; null when deleted'),
  changed_at: instantField('When the record was last written', 'null when deleted').nullable(),
  changes: z.array(changeSchema).describe('Each field whose value differs from when the write was held (version and updated_at left out)'),
});
export type StaleCheck = z.infer<typeof staleCheckSchema>;

/** Each field whose value differs between the record as held and the record now, bookkeeping left out. */
export function changesSince(held: Record<string, unknown>, now: Record<string, unknown>): StaleCheck['changes'] {
  // In the record's own order (its table's columns): the record as held was kept as JSON, whose keys have none.
  const fields = [...new Set([...Object.keys(now), ...Object.keys(held)])].filter((field) => !bookkeeping.has(field));
  return fields.filter((field) => JSON.stringify(held[field] ?? null) !== JSON.stringify(now[field] ?? null)).map((field) => ({ field, held: held[field] ?? null, now: now[field] ?? null }));
}

/**
 * For a pending review: each updated or deleted record read again, and what changed in it since the write was held.
 * Records of writes that keep no table of their own (an agent's memory) are not checked.
 */
export async function staleRecords(db: Queryable, orgId: string, review: Review, tableOf: RecordTableOf): Promise<StaleCheck[]> {
  if (review.status !== 'pending') return [];
  const checks: StaleCheck[] = [];
  for (const held of heldRecords(review)) {
    const record = tableOf(held.operation);
    if (!held.before || !held.id || !record || record.kind === 'create') continue;
    const heldVersion = typeof held.before.version === 'number' ? held.before.version : null;
    const base = { index: held.index, operation: held.operation, record_id: held.id, held_version: heldVersion };
    let now: Record<string, unknown>;
    try {
      now = await loadRecord(db, record.table, record.what, orgId, held.id);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') {
        checks.push({ ...base, state: 'deleted', current_version: null, changed_at: null, changes: [] });
        continue;
      }
      throw error;
    }
    const currentVersion = typeof now.version === 'number' ? now.version : null;
    const changes = changesSince(held.before, now);
    const changed = currentVersion !== heldVersion || changes.length > 0;
    checks.push({
      ...base,
      state: changed ? 'changed' : 'current',
      current_version: currentVersion,
      changed_at: typeof now.updated_at === 'string' ? now.updated_at : null,
      changes: changed ? changes : [],
    });
  }
  return checks;
}

/** What identifies a held write's records in an agent's notes: their ids, titles or names, and tags. */
export interface RecordMentions {
  ids: string[];
  names: string[];
  tags: string[];
}

/** Shorter titles than this would match notes by chance ("Q3", "a"): they are not looked for. */
const shortestName = 4;

export function mentionsOf(records: HeldRecord[]): RecordMentions {
  const ids = new Set<string>();
  const names = new Set<string>();
  const tags = new Set<string>();
  for (const record of records) {
    if (record.id) ids.add(record.id);
    for (const version of [record.before, record.after]) {
      if (!version) continue;
      for (const field of ['title', 'name']) {
        const value = version[field];
        if (typeof value === 'string' && value.trim().length >= shortestName) names.add(value.trim());
      }
      if (Array.isArray(version.tags)) for (const tag of version.tags) if (typeof tag === 'string' && tag.trim()) tags.add(tag.trim());
    }
  }
  return { ids: [...ids], names: [...names], tags: [...tags] };
}

export const givenFieldsSchema = z.object({
  index: z.number().int().nullable().describe('The changeset item (from 0); null for a single write'),
  fields: z.array(z.string()).describe('The fields the agent (or a reviewer\'s edit) gave; the others of the record are defaults, ids and timestamps'),
});

/**
 * For each create: the fields of its input that were given rather than left to the input's defaults (the input is
 * kept with its defaults filled in, so a field counts as given when the input without it would not read the same).
 */
export function givenFields(records: HeldRecord[], inputOf: (operation: string) => z.ZodType | undefined): z.infer<typeof givenFieldsSchema>[] {
  return records
    .filter((record) => record.before === null)
    .map((record) => {
      const schema = inputOf(record.operation);
      const fields = Object.keys(record.input).filter((field) => {
        if (!schema) return true;
        const { [field]: _left, ...without } = record.input;
        const parsed = schema.safeParse(without);
        return !(parsed.success && JSON.stringify((parsed.data as Record<string, unknown>)[field]) === JSON.stringify(record.input[field]));
      });
      return { index: record.index, fields };
    });
}
