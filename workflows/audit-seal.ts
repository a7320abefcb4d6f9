import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { sealAuditChains, emitAuditHeads } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Chains the audit events written since the last run into each organization's ledger. A Temporal Schedule starts
 * it every minute (runtime/schedules.ts); a run that overlaps the previous one is skipped.
 */
export async function sealAuditLedger(): Promise<{ sealed: number; refused: number }> {
  return sealAuditChains();
}

/**
 * Sends each organization's ledger head, sealed first, to its endpoints that ask for `audit.head` (an outside
 * witness of the chain). A Temporal Schedule starts it daily.
 */
export async function witnessAuditLedger(): Promise<{ heads: number }> {
  await sealAuditChains();
  return { heads: await emitAuditHeads() };
}
