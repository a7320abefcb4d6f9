import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { createActivities } from '../../activities/index';
import type { Database } from '../../db/database';
import type { Pruned } from '../../domain/usage/retention';
import { WrongAnswerError } from '../measure';
import { rowsBefore, type SeedContext } from './call-log-rows';

export interface PruneRun {
  /** The prune's clock: rows that ended before it minus the retention are removed. */
  at: string;
  cutoff: string;
  seconds: number;
  pruned: Pruned;
  rowsPerSecond: number;
  /** Seeded rows left, checked by slot against the model. */
  kept: number;
}

/**
 * The retention schedule's activity (createActivities' pruneExpiredRecords, as the worker runs it) at `atMs`,
 * timed; then every seeded row older than the cut-off must be gone and every newer one still there, by slot.
 */
export async function pruneAt(
  db: Database,
  pool: pg.Pool,
  seeded: SeedContext & { size: number },
  retentionMs: number,
  atMs: number,
  /** The cut-off of the prune before this one, whose rows are gone already. */
  previousCutoffMs?: number,
): Promise<PruneRun> {
  const activities = createActivities({ db, reviewExpiryMs: 24 * 60 * 60 * 1000, retention: { callLogMs: retentionMs, reviewsMs: undefined }, clock: () => new Date(atMs) });
  const cutoffMs = atMs - retentionMs;
  const expected = rowsBefore(seeded.size, seeded.anchorMs, cutoffMs);
  const gone = previousCutoffMs === undefined ? 0 : rowsBefore(seeded.size, seeded.anchorMs, previousCutoffMs).before;
  const started = performance.now();
  const pruned = await activities.pruneExpiredRecords();
  const seconds = (performance.now() - started) / 1000;
  // Rows written while the phases ran (the console's own calls) are newer than any cut-off: only seeded ones go.
  if (pruned.callLog !== expected.before - gone) throw new WrongAnswerError(`the prune removed ${pruned.callLog} call log rows, expected ${expected.before - gone}`);
  const { rows } = await pool.query<{ slot: number; n: number }>(
    `SELECT CASE WHEN api_key_id IS NOT NULL THEN array_position($2::text[], api_key_id) - 1 WHEN interface = 'console' THEN 9 ELSE 8 END AS slot,
            count(*)::int AS n
     FROM call_log WHERE org_id = $1 AND id LIKE 'call\\_s%' GROUP BY 1 ORDER BY 1`,
    [seeded.orgId, seeded.keyIds],
  );
  const kept = Array<number>(10).fill(0);
  for (const row of rows) kept[row.slot] = row.n;
  if (JSON.stringify(kept) !== JSON.stringify(expected.keptBySlot)) {
    throw new WrongAnswerError(`after the prune the seeded rows by slot are ${JSON.stringify(kept)}, expected ${JSON.stringify(expected.keptBySlot)}`);
  }
  const { rows: older } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM call_log WHERE created_at < $1', [new Date(cutoffMs)]);
  if (older[0]!.n !== 0) throw new WrongAnswerError(`${older[0]!.n} call log rows older than the cut-off are left`);
  return {
    at: new Date(atMs).toISOString(),
    cutoff: new Date(cutoffMs).toISOString(),
    seconds,
    pruned,
    rowsPerSecond: seconds > 0 ? pruned.callLog / seconds : 0,
    kept: kept.reduce((sum, n) => sum + n, 0),
  };
}
