import type { Queryable } from '../../db/database';
import type { Interface } from '../gate/contract';
import { outcomeCategorySql, type CallOutcomeCategory } from './call-log';

/** One of an agent's calls before a moment, as a review card lists them. */
export interface CallBefore {
  id: string;
  interface: Interface;
  operation: string;
  outcome: CallOutcomeCategory;
  code: string;
  created_at: string;
}

/**
 * A key's last calls (REST and MCP) that ended at or before `at`, within `withinMinutes` of it, newest first: what
 * the agent did just before a write was held. Only that key's, of that organization.
 */
export async function callsBefore(db: Queryable, orgId: string, apiKeyId: string, at: string, { limit = 5, withinMinutes = 60 } = {}): Promise<CallBefore[]> {
  const { rows } = await db.query(
    `SELECT c.id, c.interface, c.operation, ${outcomeCategorySql} AS category, c.outcome, c.created_at
     FROM call_log c
     WHERE c.org_id = $1 AND c.api_key_id = $2 AND c.interface IN ('rest', 'mcp')
       AND c.created_at <= $3::timestamptz AND c.created_at > $3::timestamptz - make_interval(mins => $4)
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT $5`,
    [orgId, apiKeyId, at, withinMinutes, limit],
  );
  return rows.map((row) => ({
    id: row.id,
    interface: row.interface,
    operation: row.operation,
    outcome: row.category,
    code: row.outcome,
    created_at: (row.created_at as Date).toISOString(),
  }));
}
