import type { Database } from '../../db/database';

export interface RetentionRules {
  /** Call log rows, and webhook deliveries and their events, older than this many milliseconds are removed; undefined keeps them all. */
  callLogMs: number | undefined;
  /** Reviews decided longer ago than this are removed (their decisions and audit records stay); undefined keeps them. */
  reviewsMs: number | undefined;
}

export interface Pruned {
  callLog: number;
  reviews: number;
  /** Webhook deliveries settled (delivered or failed) before the call log's cut-off, and the events left with none. */
  webhookDeliveries: number;
}

/** Rows removed per statement, so that a large backlog never holds long locks or one huge transaction. */
const batch = 5000;

/**
 * Removes what the retention rules no longer keep: call log rows and the webhook delivery log by age, and decided reviews (with the MCP task
 * that followed one) by when they were decided. A review is kept while its write may still run: an approved one
 * until it was applied or its failure recorded. Decisions and the audit trail are not pruned. Runs in batches;
 * safe to run again at any time.
 */
export async function pruneExpiredRecords(db: Database, policy: RetentionRules, now: Date = new Date()): Promise<Pruned> {
  const pruned: Pruned = { callLog: 0, reviews: 0, webhookDeliveries: 0 };
  if (policy.callLogMs !== undefined) {
    const before = new Date(now.getTime() - policy.callLogMs);
    // Oldest first, each batch starting where the last ended: a batch never walks the index entries of the rows the
    // batches before it removed (not yet vacuumed away), so the prune of a year's backlog takes time in proportion to it.
    let from = '-infinity';
    for (;;) {
      const { rows } = await db.query<{ removed: number; last: string | null }>(
        `WITH removed AS (
           DELETE FROM call_log WHERE id IN (
             SELECT id FROM call_log WHERE created_at >= $2::timestamptz AND created_at < $1 ORDER BY created_at LIMIT ${batch})
           RETURNING created_at)
         SELECT count(*)::int AS removed, max(created_at)::text AS last FROM removed`,
        [before, from],
      );
      const { removed, last } = rows[0]!;
      pruned.callLog += removed;
      if (removed < batch || last === null) break;
      from = last;
    }
    // The webhook delivery log goes with the call log; an event goes once it is relayed and none of its deliveries is left.
    for (;;) {
      const { rowCount } = await db.query(
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 LIMIT ${batch})`,
        [before],
      );
      pruned.webhookDeliveries += rowCount ?? 0;
      if ((rowCount ?? 0) < batch) break;
    }
    for (;;) {
      const { rowCount } = await db.query(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e
           WHERE e.relayed_at IS NOT NULL AND e.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
           LIMIT ${batch})`,
        [before],
      );
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
