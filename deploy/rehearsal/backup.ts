import { join } from 'node:path';
import { connectDatabase, type Database } from '../../db/database';
import { createChaosOrganization, type ChaosOrganization } from '../../test/chaos/fixture';
import { settleAndCount } from '../../test/chaos/ledger';
import { applicationNames } from '../../test/chaos/stack';
import { appliedOnce, decide, holdWrites, reviewIdsOf, waitForReviews } from '../../test/chaos/reviews';
import { Checks } from '../../test/chaos/scenario';
import { WriteLoad, type WriteRecord } from '../../test/chaos/writers';
import type { Deployment } from './deployment';

export interface RestoreResults {
  passed: boolean;
  failures: string[];
  /** Writes held for review when the backup was taken. */
  held: number;
  /** Of those, approved on the restored deployment and then applied exactly once. */
  heldApproved: number;
  /** Writes answered 201 before the backup began: each must be in the restored database exactly once. */
  answeredBeforeBackup: number;
  answeredBeforeBackupPresent: number;
  /** Writes answered after the backup ended: gone with the restore unless committed before its end. */
  answeredAfterBackup: number;
  answeredAfterBackupPresent: number;
  /** Every write sent, restored or sent again by its agent with the same Idempotency-Key: titles with more than one row. */
  doubled: number;
  /** Writes still missing after their agents sent them again with the same Idempotency-Key. */
  lost: number;
  backupSeconds: number;
  restoreSeconds: number;
}

/**
 * The README's backup and restore, rehearsed: while writes wait for review and writers write, one pg_basebackup of
 * the server that holds Gatehouse's and Temporal's databases; then the deployment stopped, a fresh PostgreSQL made
 * from the backup, fresh Temporal services, apis and workers started on it; the held writes approved there, and
 * every write of the backup's moment checked present once. Last: the agents send again, with the same
 * Idempotency-Key, the writes the restore took back, as an agent retrying would.
 */
export async function rehearseRestore(deployment: Deployment, options: { folder: string; held: number; log: (line: string) => void }): Promise<RestoreResults> {
  const { log } = options;
  const checks = new Checks();
  const exitsBefore = deployment.unexpectedExits();
  let db = driver(deployment);
  const org: ChaosOrganization = await createChaosOrganization(db, 8);
  const stack = { apiUrl: `${deployment.proxyUrl}/api`, org };
  const held = await holdWrites(stack, 'restore', options.held, AbortSignal.timeout(120_000));
  const reviewIds = reviewIdsOf(held);
  checks.equal('writes held before the backup', reviewIds.length, options.held);

  const load = new WriteLoad({ apiUrl: stack.apiUrl, tokens: org.agentTokens, prefix: 'restore', maxWritesPerWriter: 400 });
  await load.progressed(40, 60_000);
  const backupStarted = Date.now();
  log('pg_basebackup of the whole server while writers write and held writes wait…');
  await deployment.postgres.backup(join(options.folder, 'backup'));
  const backupEnded = Date.now();
  await load.progressed(16, 60_000);
  const records = await load.stop();
  await db.close();

  log('the deployment stopped; a fresh PostgreSQL from the backup, fresh Temporal services, apis and workers…');
  const restoreStarted = Date.now();
  await deployment.restoreFrom(join(options.folder, 'backup'), join(options.folder, 'postgres-restored'));
  const restoreSeconds = Math.round((Date.now() - restoreStarted) / 1000);
  db = driver(deployment);
  try {
    const applied = records.filter((record) => record.end === 'applied');
    const before = applied.filter((record) => record.answeredAt! < backupStarted);
    const after = applied.filter((record) => record.answeredAt! > backupEnded);
    const restoredBefore = await settleAndCount(db, org.orgId, before.map((record) => record.title), 0);
    const restoredAfter = await settleAndCount(db, org.orgId, after.map((record) => record.title), 0);
    checks.equal('writes answered before the backup began, missing after the restore', restoredBefore.lost.length, 0);

    log(`approving the ${reviewIds.length} held writes on the restored deployment…`);
    const decisions = await Promise.all(reviewIds.map((id) => decide(stack, id, 'approve')));
    checks.equal('held writes approved (200) on the restored deployment', decisions.filter((decision) => decision.status === 200).length, reviewIds.length);
    const heldApplied = await waitForReviews(db, reviewIds, appliedOnce, 120_000);
    checks.equal('held writes applied once approved', heldApplied, reviewIds.length);

    // What the restore took back, its agents send again with the same key: decided afresh, written once.
    const gone = (await settleAndCount(db, org.orgId, records.map((record) => record.title), 0)).lost;
    const resend = new WriteLoad({ apiUrl: stack.apiUrl, tokens: [], prefix: 'restore-again', maxWritesPerWriter: 0 });
    const byTitle = new Map<string, WriteRecord>(records.map((record) => [record.title, record]));
    await Promise.all(gone.map((title, i) => resend.send(org.agentTokens[i % org.agentTokens.length]!, byTitle.get(title)!.title)));
    const all = await settleAndCount(db, org.orgId, [...records, ...held].map((record) => record.title), 30_000);
    checks.equal('writes missing after their agents sent them again', all.lost.length, 0);
    checks.equal('writes written twice', all.duplicated.length, 0);
    const exits = deployment.unexpectedExits() - exitsBefore;
    checks.equal('exits of the service not caused by the rehearsal', exits, 0);
    return {
      passed: checks.failures.length === 0,
      failures: checks.failures,
      held: reviewIds.length,
      heldApproved: heldApplied,
      answeredBeforeBackup: before.length,
      answeredBeforeBackupPresent: before.length - restoredBefore.lost.length,
      answeredAfterBackup: after.length,
      answeredAfterBackupPresent: after.length - restoredAfter.lost.length,
      doubled: all.duplicated.length,
      lost: all.lost.length,
      backupSeconds: Math.round((backupEnded - backupStarted) / 1000),
      restoreSeconds,
    };
  } finally {
    await db.close();
  }
}

function driver(deployment: Deployment): Database {
  return connectDatabase(deployment.databaseUrl(applicationNames.driver), { maxConnections: 4 });
}
