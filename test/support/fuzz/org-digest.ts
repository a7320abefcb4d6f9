import type { Database } from '../../../db/database';

// What "nothing was written" means for organizations: its business data, reviews and writes unchanged, and
// the gate's records (decisions, audit events) grown only by the decisions the policy was asked for.

/** The organization's tables whose rows only a write may change; the call log and the counters change on every request. */
const dataTables = [
  'tasks',
  'projects',
  'customers',
  'events',
  'products',
  'invoices',
  'bookings',
  'expenses',
  'work_logs',
  'team_members',
  'meeting_ingests',
  'agent_memories',
  'reviews',
  'applied_writes',
  'mcp_tasks',
  'policy_sets',
] as const;

export interface OrgState {
  /** One md5 per table over its rows as text, in a stable order. */
  data: Record<string, string>;
  decisions: { count: number; notDenied: number };
  audit: { count: number; notDenials: number };
  /** Idempotency keys claimed but never answered: a request that died half-way would leave one. */
  unansweredIdempotencyKeys: number;
}

/** The state of the organizations named, taken together. */
export async function orgState(db: Database, orgIds: string[]): Promise<OrgState> {
  const data: Record<string, string> = {};
  for (const table of dataTables) {
    const { rows } = await db.query(`SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM ${table} t WHERE org_id = ANY($1)`, [orgIds]);
    data[table] = `${rows[0].n}:${rows[0].digest}`;
  }
  const organization = await db.query(`SELECT md5(string_agg(o::text, '|' ORDER BY o.id)) AS digest FROM organizations o WHERE id = ANY($1)`, [orgIds]);
  data.organizations = organization.rows[0].digest;
  const decisions = await db.query(
    `SELECT count(*)::int AS count, count(*) FILTER (WHERE decision <> 'deny')::int AS not_denied FROM gate_decisions WHERE org_id = ANY($1)`,
    [orgIds],
  );
  const audit = await db.query(
    `SELECT count(*)::int AS count,
            count(*) FILTER (WHERE type <> 'gate.decided' OR data->>'decision' <> 'deny')::int AS not_denials
     FROM audit_events WHERE org_id = ANY($1)`,
    [orgIds],
  );
  const unanswered = await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE org_id = ANY($1) AND answer IS NULL`, [orgIds]);
  return {
    data,
    decisions: { count: decisions.rows[0].count, notDenied: decisions.rows[0].not_denied },
    audit: { count: audit.rows[0].count, notDenials: audit.rows[0].not_denials },
    unansweredIdempotencyKeys: unanswered.rows[0].n,
  };
}

/**
 * What changed between two states that a run of refused and denied requests may not change: any data table, a
 * decision other than deny, an audit event other than a denial, more decisions than denials answered, or a
 * claimed Idempotency-Key left without its answer.
 */
export function writesBetween(before: OrgState, after: OrgState, deniedAnswers: number): string[] {
  const changes: string[] = [];
  for (const [table, digest] of Object.entries(before.data)) {
    if (after.data[table] !== digest) changes.push(`${table} changed (${digest} → ${after.data[table]})`);
  }
  if (after.decisions.notDenied !== before.decisions.notDenied) changes.push(`${after.decisions.notDenied - before.decisions.notDenied} gate decisions other than deny`);
  if (after.audit.notDenials !== before.audit.notDenials) changes.push(`${after.audit.notDenials - before.audit.notDenials} audit events other than a denial`);
  const decided = after.decisions.count - before.decisions.count;
  if (decided !== deniedAnswers) changes.push(`${decided} gate decisions recorded for ${deniedAnswers} denials answered`);
  if (after.audit.count - before.audit.count !== decided) changes.push(`${after.audit.count - before.audit.count} audit events for ${decided} decisions`);
  if (after.unansweredIdempotencyKeys !== before.unansweredIdempotencyKeys) changes.push(`${after.unansweredIdempotencyKeys - before.unansweredIdempotencyKeys} Idempotency-Keys claimed and never answered`);
  return changes;
}
