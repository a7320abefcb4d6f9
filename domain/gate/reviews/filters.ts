import type { Queryable } from '../../../db/database';
import type { ReviewFilters } from './schema';
import { hasStatusSql, stillPendingSql } from './state';

// The queue's filters in SQL (one rule for its list and its count), the exact count of what they match, and the
// keys and operations a person can filter by.

/**
 * The WHERE clause of reviews `r` (joined to their decisions `d`) of one organization that pass the filters, with its
 * parameters; `first` is the number of the first parameter it may use.
 */
export function reviewFiltersSql(orgId: string, filters: ReviewFilters, first = 1): { where: string; params: unknown[] } {
  const params: unknown[] = [orgId];
  const next = (value: unknown) => {
    params.push(value);
    return `$${first + params.length - 1}`;
  };
  const clauses = [`r.org_id = $${first}`];
  if (filters.status) clauses.push(hasStatusSql('r', filters.status));
  if (filters.api_key_id !== undefined) clauses.push(`d.api_key_id = ${next(filters.api_key_id)}`);
  if (filters.operation !== undefined) clauses.push(`d.operation = ${next(filters.operation)}`);
  if (filters.held_before !== undefined) clauses.push(`r.created_at < ${next(filters.held_before)}::timestamptz`);
  if (filters.expires_before !== undefined) clauses.push(`r.expires_at < ${next(filters.expires_before)}::timestamptz`);
  return { where: clauses.join(' AND '), params };
}

/** How many reviews of the organization pass the filters: an exact count, the queue's "1,000 pending". */
export async function countReviews(db: Queryable, orgId: string, filters: ReviewFilters): Promise<number> {
  const { where, params } = reviewFiltersSql(orgId, filters);
  // The decision is joined only when a filter reads it: the plain count is the reviews' index alone.
  const joined = filters.api_key_id !== undefined || filters.operation !== undefined;
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM reviews r ${joined ? 'JOIN gate_decisions d ON d.id = r.decision_id' : ''} WHERE ${where}`, params);
  return rows[0].n as number;
}

export interface ReviewFilterChoices {
  keys: { api_key_id: string; label: string; pending: number }[];
  operations: { operation: string; pending: number }[];
}

/**
 * Every key and operation with a review in the organization (whatever its status), each with how many wait now. The
 * pairs come from the decisions that opened a review, one index step a pair (gate_decisions_org_reviewed): a
 * year of reviews costs no more than a day's. The waiting ones are few (the plan caps them).
 */
export async function reviewFilterChoices(db: Queryable, orgId: string): Promise<ReviewFilterChoices> {
  const { rows } = await db.query(
    `WITH RECURSIVE pairs AS (
       (SELECT api_key_id, operation FROM gate_decisions WHERE org_id = $1 AND decision = 'review' ORDER BY api_key_id, operation LIMIT 1)
       UNION ALL
       SELECT next.api_key_id, next.operation FROM pairs p CROSS JOIN LATERAL (
         SELECT d.api_key_id, d.operation FROM gate_decisions d
         WHERE d.org_id = $1 AND d.decision = 'review' AND (d.api_key_id, d.operation) > (p.api_key_id, p.operation)
         ORDER BY d.api_key_id, d.operation LIMIT 1
       ) next
     ), waiting AS (
       SELECT d.api_key_id, d.operation, count(*)::int AS pending
       FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id
       WHERE r.org_id = $1 AND ${stillPendingSql('r')}
       GROUP BY d.api_key_id, d.operation
     )
     SELECT p.api_key_id, k.label, p.operation, coalesce(w.pending, 0) AS pending
     FROM pairs p JOIN api_keys k ON k.id = p.api_key_id LEFT JOIN waiting w ON w.api_key_id = p.api_key_id AND w.operation = p.operation`,
    [orgId],
  );
  const keys = new Map<string, ReviewFilterChoices['keys'][number]>();
  const operations = new Map<string, number>();
  for (const row of rows as { api_key_id: string; label: string; operation: string; pending: number }[]) {
    const key = keys.get(row.api_key_id) ?? { api_key_id: row.api_key_id, label: row.label, pending: 0 };
    key.pending += row.pending;
    keys.set(row.api_key_id, key);
    operations.set(row.operation, (operations.get(row.operation) ?? 0) + row.pending);
  }
  return {
    keys: [...keys.values()].sort((a, b) => a.label.localeCompare(b.label) || a.api_key_id.localeCompare(b.api_key_id)),
    operations: [...operations].map(([operation, pending]) => ({ operation, pending })).sort((a, b) => a.operation.localeCompare(b.operation)),
  };
}
