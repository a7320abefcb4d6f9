import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { createActivities } from '../../activities/index';
import type { Database } from '../../db/database';
import type { Pruned } from '../../domain/usage/retention';
import { WrongAnswerError } from '../measure';
import { benchSecrets } from '../services';
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

/** A seeded organization's log: rows 0…size-1 of the model. */
export type SeededLog = SeedContext & { size: number };

/**
 * The retention schedule's activity (createActivities' pruneExpiredRecords, as the worker runs it) at `atMs`,
 * timed; then, in each seeded organization, every seeded row older than the cut-off must be gone and every newer
 * one still there, by slot.
 */
export async function pruneAt(
  db: Database,
  pool: pg.Pool,
  logs: SeededLog[],
  retentionMs: number,
  atMs: number,
  /** The cut-off of the prune before this one, whose rows are gone already. */
  previousCutoffMs?: number,
): Promise<PruneRun> {
  const activities = createActivities({ db, secrets: benchSecrets, reviewExpiryMs: 24 * 60 * 60 * 1000, retention: { callLogMs: retentionMs, reviewsMs: undefined }, clock: () => new Date(atMs) });
  const cutoffMs = atMs - retentionMs;
  const expected = logs.map((log) => ({
    ...rowsBefore(log.size, log.anchorMs, cutoffMs),
    gone: previousCutoffMs === undefined ? 0 : rowsBefore(log.size, log.anchorMs, previousCutoffMs).before,
  }));
  const expectedRemoved = expected.reduce((sum, one) => sum + one.before - one.gone, 0);
  const started = performance.now();
  const pruned = await activities.pruneExpiredRecords();
  const seconds = (performance.now() - started) / 1000;
  // Rows written while the phases ran (the console's own calls) are newer than any cut-off: only seeded ones go.
  if (pruned.callLog !== expectedRemoved) throw new WrongAnswerError(`the prune removed ${pruned.callLog} call log rows, expected ${expectedRemoved}`);
  let kept = 0;
  for (const [index, log] of logs.entries()) {
    const { rows } = await pool.query<{ slot: number; n: number }>(
      `SELECT CASE WHEN api_key_id IS NOT NULL THEN array_position($2::text[], api_key_id) - 1 WHEN interface = 'console' THEN 9 ELSE 8 END AS slot,
              count(*)::int AS n
       FROM call_log WHERE org_id = $1 AND id LIKE 'call\\_s%' GROUP BY 1 ORDER BY 1`,
      [log.orgId, log.keyIds],
    );
    const bySlot = Array<number>(10).fill(0);
    for (const row of rows) bySlot[row.slot] = row.n;
    if (JSON.stringify(bySlot) !== JSON.stringify(expected[index]!.keptBySlot)) {
      throw new WrongAnswerError(`after the prune the seeded rows by slot are ${JSON.stringify(bySlot)}, expected ${JSON.stringify(expected[index]!.keptBySlot)}`);
    }
    kept += bySlot.reduce((sum, n) => sum + n, 0);
  }
  const { rows: older } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM call_log WHERE created_at < $1', [new Date(cutoffMs)]);
  if (older[0]!.n !== 0) throw new WrongAnswerError(`${older[0]!.n} call log rows older than the cut-off are left`);
  return {
    at: new Date(atMs).toISOString(),
    cutoff: new Date(cutoffMs).toISOString(),
    seconds,
    pruned,
    rowsPerSecond: seconds > 0 ? pruned.callLog / seconds : 0,
    kept,
  };
}
