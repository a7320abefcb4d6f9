import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

const { pruneExpiredRecords } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 10 },
});

/**
 * Removes the call log rows and decided reviews the retention settings no longer keep. A Temporal Schedule
 * starts it every hour (runtime/schedules.ts); a run that overlaps the previous one is skipped.
 */
export async function pruneRetention(): Promise<{ callLog: number; reviews: number }> {
  return pruneExpiredRecords();
}
