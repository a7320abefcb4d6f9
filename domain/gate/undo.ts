import type { Queryable } from '../../db/database';
import type { VerdictProvenance } from '../audit/events';
import { auditInsert, recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { plainRecord } from '../kit/rows';
import { undoableUntilSql } from '../kit/undo-window';

export { undoableUntilSql };
import type { GatedWrite } from './writes';

// Undo of applied gated writes: the record as it was before the write comes back (a created record is removed, a
// deleted one restored with its id, an update reverted), only while nothing changed it since, within the
// organization's window, and once. A write is read as the records it applied ("applied records"): a single
// write's one record (applied_writes), or every applied item of a changeset (changeset_items), checked and
// restored by the same code. Several writes, or a changeset's items, are undone together: all of them, or none.

/** What undoing one record restores: a single write's record, or one item of a changeset. */
export interface RecordUndo {
  /** The changeset item's index; null for a single write. */
  item: number | null;
  operation: string;
  resourceType: string;
  resourceId: string;
  kind: 'create' | 'update' | 'delete';
  table: string;
  what: string;
  /** The record before the write (null for a create). */
  before: Record<string, unknown> | null;
  /** The record as the write left it (null after a delete). */
  after: Record<string, unknown> | null;
  /** The record as it will be after the undo (null when the undo removes it). */
  restored: Record<string, unknown> | null;
  lock?: (tx: Queryable, orgId: string) => Promise<void>;
}

/** What an undo restores, and what the policy and the reviewer see of it. */
export interface UndoPlan {
  /** The applied write's public id: its workflow id (the `workflow_id` its answer and its audit events carry). */
  write: string;
  operation: string;
  resourceType: string;
  resourceId: string;
  appliedAt: string;
  /** Who applied it: the key that submitted it. */
  appliedBy: ActorRef;
  /** The review a person approved it in, if it was held. */
  reviewId: string | null;
  /** The changeset the write applied (its id), or null for a single write. */
  changesetId: string | null;
  /** The records it applied, in the order applied: one for a single write, every applied item of a changeset. */
  records: RecordUndo[];
}

/** What `context.undoes` tells the policy of the write an agent undoes (for a changeset: kind "changeset" and its items). */
export function undoesContext(plan: UndoPlan): Record<string, unknown> {
  const common = {
    write: plan.write,
    operation: plan.operation,
    resource_type: plan.resourceType,
    resource_id: plan.resourceId,
    applied_at: plan.appliedAt,
    applied_by: plan.appliedBy.id,
    review_id: plan.reviewId,
  };
  if (!plan.changesetId) return { ...common, kind: plan.records[0]!.kind };
  return {
    ...common,
    kind: 'changeset',
    items: plan.records.map((record) => ({
      index: record.item,
      operation: record.operation,
      kind: record.kind,
      resource_type: record.resourceType,
      resource_id: record.resourceId,
    })),
  };
}

type Outcome = 'removed' | 'reverted' | 'restored';

export interface UndoneItem {
  index: number;
  operation: string;
  resource_type: string;
  resource_id: string;
  outcome: Outcome;
  record: Record<string, unknown> | null;
}

export interface Undone {
  write: string;
  operation: string;
  resource_type: string;
  resource_id: string;
  /** removed (an undone create), reverted (an undone update), restored (an undone delete); undone (a changeset: see items). */
  outcome: Outcome | 'undone';
  /** The record as it is now, or null when the undo removed it (or for a changeset). */
  record: Record<string, unknown> | null;
  undone_by: string;
  /** A changeset's items, each as its undo left its record. */
  items?: UndoneItem[];
}

interface Problem {
  write: string;
  code: 'not_found' | 'conflict';
  message: string;
  details: Record<string, unknown>;
}

/** The one error for the writes that cannot be undone: a single write's own, or every write's for several. */
function refusal(problems: Problem[]): AppError {
  if (problems.length === 1) return new AppError(problems[0]!.code, problems[0]!.message, { write: problems[0]!.write, ...problems[0]!.details });
  const code = problems.every((problem) => problem.code === 'not_found') ? 'not_found' : 'conflict';
  return new AppError(code, `${problems.length} of the writes cannot be undone; nothing was undone: ${problems.map((p) => p.message).join('; ')}`, {
    writes: problems.map((p) => ({ write: p.write, code: p.code, message: p.message, ...p.details })),
  });
}

const identifier = /^[a-z_][a-z0-9_]*$/;
function quoted(name: string): string {
  if (!identifier.test(name)) throw new Error(`not a column or table name: ${name}`);
  return `"${name}"`;
}

/** Fields whose values differ between two versions of a record (its bookkeeping left out). */
function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((key) => key !== 'version' && key !== 'updated_at' && JSON.stringify(a[key] ?? null) !== JSON.stringify(b[key] ?? null)).sort();
}

/** One record a write applied, as read from applied_writes or changeset_items. */
interface AppliedRecord {
  item: number | null;
  operation: string;
  resourceType: string;
  resourceId: string;
  table: string | null;
  kind: RecordUndo['kind'] | null;
  before: Record<string, unknown> | null;
  result: unknown;
}

/** A changeset's applied items, in the order applied (a rejected item of a divisible one applied nothing). */
async function changesetRecords(tx: Queryable, orgId: string, changesetId: string, writeOf: (operation: string) => GatedWrite | undefined): Promise<AppliedRecord[]> {
  const { rows } = await tx.query(
    `SELECT idx, operation, resource_type, applied_id, result, applied_before FROM changeset_items
     WHERE org_id = $1 AND changeset_id = $2 AND applied_id IS NOT NULL ORDER BY idx`,
    [orgId, changesetId],
  );
  return rows.map((row) => {
    const record = writeOf(row.operation)?.record;
    return {
      item: row.idx as number,
      operation: row.operation,
      resourceType: row.resource_type,
      resourceId: row.applied_id,
      table: record?.table ?? null,
      kind: record?.kind ?? null,
      before: (row.applied_before as Record<string, unknown> | null) ?? null,
      result: row.result,
    };
  });
}

/** An API key asking for an undo, with what its request may do: a refusal tells it only what it may read. */
export interface UndoReader {
  apiKeyId: string;
  abilities?: readonly string[];
}

/** A key that reads the review queue (reviews.read) reads every applied write of its organization; another, its own. */
export const readsEveryWrite = (abilities?: readonly string[]) => abilities?.includes('reviews.read') ?? false;

/** Whether a key reads an applied write (as writes.get shows it). `writer`: the key that made the write. */
export function keyReadsWrite(reader: UndoReader, writer: string | null): boolean {
  return reader.apiKeyId === writer || readsEveryWrite(reader.abilities);
}

/**
 * Checks that every write named can be undone, and plans each undo. `lock`: the writes' rows and records are
 * locked (FOR UPDATE), for the transaction that will undo them. Refuses with every problem found: a write of
 * another organization or none (not_found), one that cannot be undone, is already undone, is past the window, or
 * whose record changed since (conflict, with the fields that changed and the current version). A changeset's
 * write id names all its applied items: refused with every item whose record changed since (`items`). `seenBy`: the
 * key that asks, told what changed only about a write it may read (keyReadsWrite).
 */
export async function planUndo(
  tx: Queryable,
  orgId: string,
  writeIds: string[],
  writeOf: (operation: string) => GatedWrite | undefined,
  { lock = false, seenBy }: { lock?: boolean; seenBy?: UndoReader } = {},
): Promise<UndoPlan[]> {
  const ids = [...new Set(writeIds)];
  const { rows } = await tx.query(
    `SELECT a.workflow_id, a.operation, a.resource_type, a.resource_id, a.result, a.record_table, a.write_kind, a.before, a.undone_by,
            a.applied_at, o.undo_window_days, a.applied_at < now() - make_interval(days => o.undo_window_days) AS too_old,
            d.api_key_id, r.id AS review_id, c.id AS changeset_id
     FROM applied_writes a JOIN organizations o ON o.id = a.org_id
     LEFT JOIN gate_decisions d ON d.workflow_id = a.workflow_id
     LEFT JOIN reviews r ON r.workflow_id = a.workflow_id AND r.org_id = a.org_id
     LEFT JOIN changesets c ON c.workflow_id = a.workflow_id AND c.org_id = a.org_id AND a.resource_type = 'Changeset'
     WHERE a.org_id = $1 AND a.workflow_id = ANY($2::text[]) AND a.resource_id <> ''
     ORDER BY a.applied_at${lock ? ' FOR UPDATE OF a' : ''}`,
    [orgId, ids],
  );
  const problems: Problem[] = [];
  const plans: UndoPlan[] = [];
  const found = new Map(rows.map((row) => [row.workflow_id as string, row]));
  for (const id of ids) {
    const row = found.get(id);
    if (!row) {
      problems.push({ write: id, code: 'not_found', message: `applied write ${id} was not found`, details: {} });
      continue;
    }
    const changesetId = (row.changeset_id as string | null) ?? null;
    const applied: AppliedRecord[] = changesetId
      ? await changesetRecords(tx, orgId, changesetId, writeOf)
      : [
          {
            item: null,
            operation: row.operation,
            resourceType: row.resource_type,
            resourceId: row.resource_id,
            table: row.record_table,
            kind: row.write_kind,
            before: row.before ?? null,
            result: row.result,
          },
        ];
    const notUndoable = applied.filter((record) => !record.table || !record.kind || !writeOf(record.operation)?.record);
    if (notUndoable.length || applied.length === 0) {
      problems.push({
        write: id,
        code: 'conflict',
        message: changesetId
          ? `changeset ${changesetId} (${id}) cannot be undone: ${applied.length ? `item${notUndoable.length > 1 ? 's' : ''} ${notUndoable.map((r) => `${r.item} (${r.operation})`).join(', ')} cannot be` : 'it applied nothing'}`
          : `${row.operation} ${id} cannot be undone (only writes of one record applied since undo exists can)`,
        details: { reason: 'not_undoable', ...(changesetId ? { items: notUndoable.map((r) => ({ item: r.item, operation: r.operation })) } : {}) },
      });
      continue;
    }
    if (row.undone_by) {
      problems.push({ write: id, code: 'conflict', message: `${row.operation} ${id} was undone already (by ${row.undone_by})`, details: { reason: 'already_undone', undone_by: row.undone_by } });
      continue;
    }
    if (row.too_old) {
      problems.push({
        write: id,
        code: 'conflict',
        message: `${row.operation} ${id} was applied more than ${row.undo_window_days} days ago, past the organization's undo window; change the record by hand instead`,
        details: { reason: 'undo_window_passed', applied_at: (row.applied_at as Date).toISOString(), undo_window_days: row.undo_window_days },
      });
      continue;
    }
    // A record several items of a changeset wrote is checked against the last of them: the earlier ones left
    // versions the later ones changed, which the undo takes back first.
    const lastOnRecord = new Map<string, AppliedRecord>();
    for (const record of applied) lastOnRecord.set(`${record.table}:${record.resourceId}`, record);
    const records: RecordUndo[] = [];
    const changes: { record: AppliedRecord; message: string; details: Record<string, unknown> }[] = [];
    for (const record of applied) {
      const write = writeOf(record.operation)!.record!;
      const kind = record.kind!;
      const after = kind === 'delete' ? null : (record.result as Record<string, unknown>);
      if (lastOnRecord.get(`${record.table}:${record.resourceId}`) === record) {
        // The family's own lock (customers serialize their changes) before the record's row, in the order its
        // writes take them: a change of the record waiting on that lock would otherwise deadlock with this undo.
        if (lock) await write.lock?.(tx, orgId);
        const { rows: current } = await tx.query(`SELECT * FROM ${quoted(record.table!)} WHERE org_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [
          orgId,
          record.resourceId,
        ]);
        const changed = changeSince(write.what, record.resourceId, after, current[0] ? plainRecord(current[0]) : null);
        if (changed) changes.push({ record, ...changed });
      }
      records.push({
        item: record.item,
        operation: record.operation,
        resourceType: record.resourceType,
        resourceId: record.resourceId,
        kind,
        table: record.table!,
        what: write.what,
        before: record.before,
        after,
        restored: kind === 'create' ? null : record.before,
        lock: write.lock,
      });
    }
    if (changes.length && seenBy && !keyReadsWrite(seenBy, row.api_key_id ?? null)) {
      // The key may undo the write (the policy said so) but not read it, as writes.get would not show it: the
      // refusal says that its records changed, not which fields nor at which versions.
      problems.push({
        write: id,
        code: 'conflict',
        message: `${changesetId ? `changeset ${changesetId}` : row.operation} ${id} cannot be undone: ${changesetId ? 'records it wrote' : 'its record'} changed since the write; nothing was undone`,
        details: { reason: 'changed_since' },
      });
      continue;
    }
    if (changes.length && !changesetId) {
      problems.push({ write: id, code: 'conflict', message: changes[0]!.message, details: { reason: 'changed_since', ...changes[0]!.details } });
      continue;
    }
    if (changes.length) {
      problems.push({
        write: id,
        code: 'conflict',
        message: `changeset ${changesetId} (${id}) cannot be undone, nothing was undone: ${changes.map((c) => `item ${c.record.item} (${c.record.operation}): ${c.message}`).join('; ')}`,
        details: {
          reason: 'changed_since',
          changeset_id: changesetId,
          items: changes.map((c) => ({
            item: c.record.item,
            operation: c.record.operation,
            resource_type: c.record.resourceType,
            resource_id: c.record.resourceId,
            message: c.message,
            ...c.details,
          })),
        },
      });
      continue;
    }
    plans.push({
      write: id,
      operation: row.operation,
      resourceType: row.resource_type,
      resourceId: row.resource_id,
      appliedAt: (row.applied_at as Date).toISOString(),
      appliedBy: { type: 'api_key', id: row.api_key_id ?? null } as ActorRef,
      reviewId: row.review_id ?? null,
      changesetId,
      records,
    });
  }
  if (problems.length) throw refusal(problems);
  return plans;
}

/** Whether the record is no longer as the write left it: what changed, and its current version. */
function changeSince(
  what: string,
  id: string,
  after: Record<string, unknown> | null,
  now: Record<string, unknown> | null,
): { message: string; details: Record<string, unknown> } | undefined {
  if (after === null) {
    if (!now) return undefined;
    return {
      message: `${what} ${id} exists again (version ${String(now.version)}): a deleted record is restored only while its id is free`,
      details: { current_version: now.version, changed_fields: [] },
    };
  }
  if (!now) return { message: `${what} ${id} was deleted since; there is nothing to undo`, details: { current_version: null, deleted: true, changed_fields: [] } };
  if (now.version === after.version) return undefined;
  const fields = differingFields(after, now);
  return {
    message: `${what} ${id} changed since the write (now at version ${String(now.version)}, the write left version ${String(after.version)}${fields.length ? `; changed: ${fields.join(', ')}` : ''}); undo it by hand or undo the later change first`,
    details: { current_version: now.version, undone_version: after.version, changed_fields: fields },
  };
}

/**
 * Restores one record as the plan says, in the caller's transaction; the record as it is after (null: removed).
 * `version`: the record's version now, when an earlier undo of the same transaction changed it.
 */
async function restore(tx: Queryable, orgId: string, plan: RecordUndo, version?: number): Promise<Record<string, unknown> | null> {
  await plan.lock?.(tx, orgId);
  const table = quoted(plan.table);
  if (plan.kind === 'create') {
    const removed = await tx.query(`DELETE FROM ${table} WHERE org_id = $1 AND id = $2 AND version = $3`, [orgId, plan.resourceId, version ?? plan.after!.version]);
    if (!removed.rowCount) throw new AppError('conflict', `${plan.what} ${plan.resourceId} changed while it was being undone; nothing was undone`);
    return null;
  }
  const before = plan.before!;
  if (plan.kind === 'update') {
    // The fields come back as they were; the record takes a new version, so every earlier ETag stays stale.
    const columns = Object.keys(before).filter((key) => !['id', 'org_id', 'version', 'created_at', 'updated_at'].includes(key)).map(quoted);
    const { rows } = await tx.query(
      `UPDATE ${table} AS t SET ${[...columns.map((c) => `${c} = r.${c}`), 'version = t.version + 1', 'updated_at = clock_timestamp()'].join(', ')}
       FROM jsonb_populate_record(NULL::${table}, $3::jsonb) AS r WHERE t.org_id = $1 AND t.id = $2 RETURNING t.*`,
      [orgId, plan.resourceId, JSON.stringify(before)],
    );
    if (!rows[0]) throw new AppError('conflict', `${plan.what} ${plan.resourceId} is gone; nothing was undone`);
    return plainRecord(rows[0]);
  }
  // A deleted record comes back with its id and every column as it was, at the next version.
  const { rows } = await tx.query(
    `INSERT INTO ${table} SELECT * FROM jsonb_populate_record(NULL::${table},
       $2::jsonb || jsonb_build_object('org_id', $1::text, 'version', ($2::jsonb->>'version')::int + 1, 'updated_at', clock_timestamp())) RETURNING *`,
    [orgId, JSON.stringify(before)],
  );
  return plainRecord(rows[0]);
}

const outcomeOf = (kind: RecordUndo['kind']): Outcome => (kind === 'create' ? 'removed' : kind === 'update' ? 'reverted' : 'restored');

/**
 * Undoes applied writes in the caller's transaction, all of them or none: checks every one (planUndo, with locks),
 * then restores each record, marks each write undone by `undoId` and records a write.undone audit event naming the
 * write it undoes. A changeset's items are undone in the reverse of the order they were applied, each recorded as
 * changeset.item_undone, the changeset as one write.undone (resource Changeset).
 */
export async function undoWrites(
  tx: Queryable,
  orgId: string,
  writeIds: string[],
  by: { actor: ActorRef; undoId: string; passkey?: NonNullable<VerdictProvenance['passkey']> },
  writeOf: (operation: string) => GatedWrite | undefined,
  { seenBy }: { seenBy?: UndoReader } = {},
): Promise<Undone[]> {
  if (writeIds.length === 0) throw new AppError('validation_failed', 'name at least one applied write to undo');
  const plans = await planUndo(tx, orgId, writeIds, writeOf, { lock: true, seenBy });
  const undone: Undone[] = [];
  for (const plan of [...plans].reverse()) {
    const versions = new Map<string, number>();
    const items: UndoneItem[] = [];
    for (const record of [...plan.records].reverse()) {
      const key = `${record.table}:${record.resourceId}`;
      const now = await restore(tx, orgId, record, versions.get(key));
      if (now) versions.set(key, now.version as number);
      else versions.delete(key);
      const outcome = outcomeOf(record.kind);
      items.push({ index: record.item ?? 0, operation: record.operation, resource_type: record.resourceType, resource_id: record.resourceId, outcome, record: now });
      if (plan.changesetId) {
        await recordAudit(tx, orgId, {
          type: 'changeset.item_undone',
          actor: by.actor,
          workflowId: by.undoId,
          reviewId: plan.reviewId ?? undefined,
          resourceType: record.resourceType,
          resourceId: record.resourceId,
          data: { changeset_id: plan.changesetId, undoes: plan.write, item: record.item!, operation: record.operation, outcome, version: (now?.version as number | undefined) ?? null },
        });
      }
    }
    items.reverse();
    const single = plan.changesetId ? undefined : items[0]!;
    const outcome = single?.outcome ?? 'undone';
    const audit = auditInsert(
      orgId,
      {
        type: 'write.undone',
        actor: by.actor,
        workflowId: by.undoId,
        reviewId: plan.reviewId ?? undefined,
        resourceType: plan.resourceType,
        resourceId: plan.resourceId,
        data: {
          operation: plan.operation,
          undoes: plan.write,
          outcome,
          version: (single?.record?.version as number | undefined) ?? null,
          // A person's undo signed with their passkey (where the organization needs approvals signed).
          ...(by.passkey ? { passkey: by.passkey } : {}),
        },
      },
      { first: 4, after: 'marked' },
    );
    const { rows } = await tx.query(
      `WITH marked AS (UPDATE applied_writes SET undone_by = $3, undone_at = now() WHERE org_id = $1 AND workflow_id = $2 AND undone_by IS NULL RETURNING 1)
       ${audit.sql} RETURNING id`,
      [orgId, plan.write, by.undoId, ...audit.values],
    );
    if (!rows[0]) throw new AppError('conflict', `${plan.operation} ${plan.write} was undone already`, { write: plan.write, reason: 'already_undone' });
    undone.push({
      write: plan.write,
      operation: plan.operation,
      resource_type: plan.resourceType,
      resource_id: plan.resourceId,
      outcome,
      record: single?.record ?? null,
      undone_by: by.undoId,
      ...(plan.changesetId ? { items } : {}),
    });
  }
  return undone.reverse();
}

/** An applied gated write as the API reads it: what it did, and whether it was undone or may be. */
export interface AppliedWriteView {
  write: string;
  operation: string;
  resource_type: string;
  resource_id: string;
  applied_at: string;
  api_key_id: string | null;
  review_id: string | null;
  result: unknown;
  undone_by: string | null;
  undone_at: string | null;
  undoable_until: string | null;
}

/**
 * One applied write of the organization. `apiKeyId`: a key reads only the writes it submitted; another's, or one
 * of another organization, is not found.
 */
/**
 * An applied write as a key other than the one that made it sees it: an agent's memories are its own, so what a
 * memory write (or a changeset holding one) wrote is redacted, as the review queue redacts it (asSeenByKey).
 */
export function appliedWriteAsSeenByKey(view: AppliedWriteView, apiKeyId: string): AppliedWriteView {
  if (view.api_key_id === apiKeyId) return view;
  const items = (view.result as { items?: { operation?: unknown }[] } | null)?.items;
  const holdsMemories = view.operation.startsWith('memories.') || (Array.isArray(items) && items.some((item) => String(item?.operation).startsWith('memories.')));
  return holdsMemories ? { ...view, result: { redacted: true } } : view;
}

export async function readAppliedWrite(db: Queryable, orgId: string, writeId: string, { apiKeyId }: { apiKeyId?: string } = {}): Promise<AppliedWriteView> {
  const { rows } = await db.query(
    `SELECT a.*, d.api_key_id, r.id AS review_id, ${undoableUntilSql('a')} AS undoable_until
     FROM applied_writes a LEFT JOIN gate_decisions d ON d.workflow_id = a.workflow_id
     LEFT JOIN reviews r ON r.workflow_id = a.workflow_id AND r.org_id = a.org_id
     WHERE a.org_id = $1 AND a.workflow_id = $2 AND ($3::text IS NULL OR d.api_key_id = $3)`,
    [orgId, writeId, apiKeyId ?? null],
  );
  const row = rows[0];
  if (!row || row.resource_id === '') throw new AppError('not_found', `applied write ${writeId} was not found`);
  const iso = (value: unknown) => (value ? (value as Date).toISOString() : null);
  return {
    write: row.workflow_id,
    operation: row.operation,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    applied_at: iso(row.applied_at)!,
    api_key_id: row.api_key_id ?? null,
    review_id: row.review_id ?? null,
    result: row.result,
    undone_by: row.undone_by ?? null,
    undone_at: iso(row.undone_at),
    undoable_until: iso(row.undoable_until),
  };
}
