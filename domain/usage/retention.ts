import type { Database } from '../../db/database';

export interface RetentionPolicy {
  /** Call log rows older than this many milliseconds are removed; undefined keeps them all. */
  callLogMs: number | undefined;
  /** Reviews decided longer ago than this are removed (their decisions and audit records stay); undefined keeps them. */
  reviewsMs: number | undefined;
}

export interface Pruned {
  callLog: number;
  reviews: number;
}

/** Rows removed per statement, so that a large backlog never holds long locks or one huge transaction. */
const batch = 5000;

/**
 * Removes what the retention policy no longer keeps: call log rows by age, and decided reviews (with the MCP task
 * that followed one) by when they were decided. A review is kept while its write may still run: an approved one
 * until it was applied or its failure recorded. Decisions and the audit trail are not pruned. Runs in batches;
 * safe to run again at any time.
 */
export async function pruneExpiredRecords(db: Database, policy: RetentionPolicy, now: Date = new Date()): Promise<Pruned> {
  const pruned: Pruned = { callLog: 0, reviews: 0 };
  if (policy.callLogMs !== undefined) {
    const before = new Date(now.getTime() - policy.callLogMs);
    for (;;) {
      const { rowCount } = await db.query(
        `DELETE FROM call_log WHERE id IN (SELECT id FROM call_log WHERE created_at < $1 LIMIT ${batch})`,
        [before],
      );
      pruned.callLog += rowCount ?? 0;
      if ((rowCount ?? 0) < batch) break;
    }
  }
  if (policy.reviewsMs !== undefined) {
    const before = new Date(now.getTime() - policy.reviewsMs);
    for (;;) {
      const removed = await db.transaction(async (tx) => {
        const { rows } = await tx.query(
          `SELECT id FROM reviews
            WHERE status <> 'pending' AND decided_at < $1
              AND (status <> 'approved' OR applied_at IS NOT NULL OR failure IS NOT NULL)
            ORDER BY decided_at LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
          [before],
        );
        const ids = rows.map((row) => row.id as string);
        if (ids.length === 0) return 0;
        await tx.query('DELETE FROM mcp_tasks WHERE review_id = ANY($1)', [ids]);
        const { rowCount } = await tx.query('DELETE FROM reviews WHERE id = ANY($1)', [ids]);
        return rowCount ?? 0;
      });
      pruned.reviews += removed;
      if (removed < batch) break;
    }
  }
  return pruned;
}
