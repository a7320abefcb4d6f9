import type { QueryResultRow } from 'pg';
import type { Queryable } from '../../db/database';
import { decodeCursor, toPage, type Page } from '../kit/pagination';
import { undoableUntilSql } from '../kit/undo-window';

/** An audit event as people read it (the API, the console, the export). */
export interface AuditEventView {
  id: string;
  type: string;
  /** `name`: the key's label or the person's email, as they are now (null for the system, or one since removed). */
  actor: { type: 'api_key' | 'user' | 'system'; id: string | null; name: string | null };
  workflow_id: string | null;
  review_id: string | null;
  resource_type: string | null;
  resource_id: string | null;
  /** The operation of a gate event (tasks.create), from its data. */
  operation: string | null;
  /** allow, review, deny or refused: the decision of a gate.decided event. */
  decision: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export interface AuditFilter {
  /** Events at or after this instant (RFC 3339). */
  since?: string;
  /** Events before this instant (RFC 3339). */
  until?: string;
  /** Events of this key: what it did (its gated writes' decisions) and what was done to it (created, revoked). */
  api_key_id?: string;
  /** Events of one person: what they did (approved, invited, signed in) and what was done to them. */
  user_id?: string;
  operation?: string;
  decision?: 'allow' | 'review' | 'deny' | 'refused';
  type?: string;
}

const columns = `e.id, e.type, e.actor_type, e.actor_id, e.workflow_id, e.review_id, e.resource_type, e.resource_id, e.data, e.created_at,
  COALESCE(k.label, u.email) AS actor_name`;
/** The events with their actors' names, within the organization only. */
const from = `audit_events e
  LEFT JOIN api_keys k ON e.actor_type = 'api_key' AND k.id = e.actor_id AND k.org_id = e.org_id
  LEFT JOIN users u ON e.actor_type = 'user' AND u.id = e.actor_id AND u.org_id = e.org_id`;

/** The filter as SQL conditions on audit_events, parameters from `$2` ($1 is the organization). */
function conditions(filter: AuditFilter): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const clauses: string[] = [];
  const add = (clause: (parameter: string) => string, value: unknown) => {
    if (value === undefined) return;
    values.push(value);
    clauses.push(clause(`$${values.length + 1}`));
  };
  add((p) => `e.created_at >= ${p}`, filter.since);
  add((p) => `e.created_at < ${p}`, filter.until);
  // A key's and a person's own events name them as the resource (key_…, usr_…: no other resource has those ids).
  add((p) => `((e.actor_type = 'api_key' AND e.actor_id = ${p}) OR e.resource_id = ${p})`, filter.api_key_id);
  add((p) => `((e.actor_type = 'user' AND e.actor_id = ${p}) OR e.resource_id = ${p})`, filter.user_id);
  add((p) => `e.data->>'operation' = ${p}`, filter.operation);
  add((p) => `(e.type = 'gate.decided' AND e.data->>'decision' = ${p})`, filter.decision);
  add((p) => `e.type = ${p}`, filter.type);
  return { where: clauses.map((clause) => ` AND ${clause}`).join(''), values };
}

/** An event as the trail lists it: a write.applied event also says whether the write was undone, or until when it may be. */
export interface ListedAuditEvent extends AuditEventView {
  /** For write.applied: the undo that took the write back (the undo's workflow id, or undo_… for a person's); else null. */
  undone_by: string | null;
  /** For write.applied: until when the write may be undone; null when it cannot be (or is not a write.applied). */
  undoable_until: string | null;
}

/** The organization's audit events, newest first, a page at a time (the cursor is the last id shown). */
export async function listAuditEvents(db: Queryable, orgId: string, input: AuditFilter & { limit: number; cursor?: string }): Promise<Page<ListedAuditEvent>> {
  const after = decodeCursor(input.cursor);
  const { where, values } = conditions(input);
  const cursorAt = values.length + 2;
  const { rows } = await db.query(
    `SELECT ${columns}, aw.undone_by, ${undoableUntilSql('aw')} AS undoable_until FROM ${from}
       LEFT JOIN applied_writes aw ON e.type = 'write.applied' AND aw.workflow_id = e.workflow_id AND aw.org_id = e.org_id
     WHERE e.org_id = $1${where}${after ? ` AND e.id < $${cursorAt}` : ''}
     ORDER BY e.id DESC
     LIMIT $${cursorAt + (after ? 1 : 0)}`,
    [orgId, ...values, ...(after ? [after] : []), input.limit + 1],
  );
  return toPage(
    rows.map((row) => ({
      ...auditEventFromRow(row),
      undone_by: (row.undone_by as string | null) ?? null,
      undoable_until: row.undoable_until ? (row.undoable_until as Date).toISOString() : null,
    })),
    input.limit,
  );
}

/** An event as an export carries it: with its place in the ledger (null until sealed), for offline verification. */
export interface LedgerEventView extends AuditEventView {
  seq: number | null;
  /** Hex of its content digest and of the chain's hash at it. */
  digest: string | null;
  chain: string | null;
}

/** Every event the filter keeps, oldest first, read in batches (an export of any size in bounded memory). */
export async function* allAuditEvents(db: Queryable, orgId: string, filter: AuditFilter, batch = 1000): AsyncGenerator<LedgerEventView> {
  const { where, values } = conditions(filter);
  let after = '';
  for (;;) {
    const { rows } = await db.query(
      `SELECT ${columns}, e.seq, e.digest, e.chain FROM ${from}
       WHERE e.org_id = $1${where} AND e.id > $${values.length + 2}
       ORDER BY e.id
       LIMIT $${values.length + 3}`,
      [orgId, ...values, after, batch],
    );
    for (const row of rows) {
      const hex = (value: Buffer | null) => (value ? value.toString('hex') : null);
      yield { ...auditEventFromRow(row), seq: row.seq === null ? null : Number(row.seq), digest: hex(row.digest), chain: hex(row.chain) };
    }
    if (rows.length < batch) return;
    after = rows.at(-1)!.id;
  }
}

function auditEventFromRow(row: QueryResultRow): AuditEventView {
  const data = (row.data ?? {}) as Record<string, unknown>;
  return {
    id: row.id,
    type: row.type,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name ?? null },
    workflow_id: row.workflow_id,
    review_id: row.review_id,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    operation: typeof data.operation === 'string' ? data.operation : null,
    decision: row.type === 'gate.decided' && typeof data.decision === 'string' ? data.decision : null,
    data,
    created_at: (row.created_at as Date).toISOString(),
  };
}

/** Where the organization's ledger ends now: what an export carries, for a copy to be checked against. */
export async function ledgerHead(db: Queryable, orgId: string): Promise<{ org_id: string; seq: number; chain: string }> {
  const { rows } = await db.query('SELECT seq, chain FROM audit_chain_heads WHERE org_id = $1', [orgId]);
  return { org_id: orgId, seq: rows[0] ? Number(rows[0].seq) : 0, chain: rows[0] ? (rows[0].chain as Buffer).toString('hex') : '0'.repeat(64) };
}
