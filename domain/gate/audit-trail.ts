import type { QueryResultRow } from 'pg';
import type { Queryable } from '../../db/database';
import { decodeCursor, toPage, type Page } from '../kit/pagination';

/** An audit event as people read it (the API, the console, the export). */
export interface AuditEventView {
  id: string;
  type: string;
  actor: { type: 'api_key' | 'user' | 'system'; id: string | null };
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

const columns = 'id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data, created_at';

/** The filter as SQL conditions on audit_events, parameters from `$2` ($1 is the organization). */
function conditions(filter: AuditFilter): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const clauses: string[] = [];
  const add = (clause: (parameter: string) => string, value: unknown) => {
    if (value === undefined) return;
    values.push(value);
    clauses.push(clause(`$${values.length + 1}`));
  };
  add((p) => `created_at >= ${p}`, filter.since);
  add((p) => `created_at < ${p}`, filter.until);
  // A key's and a person's own events name them as the resource (key_…, usr_…: no other resource has those ids).
  add((p) => `((actor_type = 'api_key' AND actor_id = ${p}) OR resource_id = ${p})`, filter.api_key_id);
  add((p) => `((actor_type = 'user' AND actor_id = ${p}) OR resource_id = ${p})`, filter.user_id);
  add((p) => `data->>'operation' = ${p}`, filter.operation);
  add((p) => `(type = 'gate.decided' AND data->>'decision' = ${p})`, filter.decision);
  add((p) => `type = ${p}`, filter.type);
  return { where: clauses.map((clause) => ` AND ${clause}`).join(''), values };
}

/** The organization's audit events, newest first, a page at a time (the cursor is the last id shown). */
export async function listAuditEvents(db: Queryable, orgId: string, input: AuditFilter & { limit: number; cursor?: string }): Promise<Page<AuditEventView>> {
  const after = decodeCursor(input.cursor);
  const { where, values } = conditions(input);
  const cursorAt = values.length + 2;
  const { rows } = await db.query(
    `SELECT ${columns} FROM audit_events
     WHERE org_id = $1${where}${after ? ` AND id < $${cursorAt}` : ''}
     ORDER BY id DESC
     LIMIT $${cursorAt + (after ? 1 : 0)}`,
    [orgId, ...values, ...(after ? [after] : []), input.limit + 1],
  );
  return toPage(rows.map(auditEventFromRow), input.limit);
}

/** Every event the filter keeps, oldest first, read in batches (an export of any size in bounded memory). */
export async function* allAuditEvents(db: Queryable, orgId: string, filter: AuditFilter, batch = 1000): AsyncGenerator<AuditEventView> {
  const { where, values } = conditions(filter);
  let after = '';
  for (;;) {
    const { rows } = await db.query(
      `SELECT ${columns} FROM audit_events
       WHERE org_id = $1${where} AND id > $${values.length + 2}
       ORDER BY id
       LIMIT $${values.length + 3}`,
      [orgId, ...values, after, batch],
    );
    for (const row of rows) yield auditEventFromRow(row);
    if (rows.length < batch) return;
    after = rows.at(-1)!.id;
  }
}

function auditEventFromRow(row: QueryResultRow): AuditEventView {
  const data = (row.data ?? {}) as Record<string, unknown>;
  return {
    id: row.id,
    type: row.type,
    actor: { type: row.actor_type, id: row.actor_id },
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
