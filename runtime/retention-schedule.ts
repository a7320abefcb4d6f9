import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleHandle } from '@temporalio/client';

export const retentionScheduleId = 'gatehouse-retention';

/**
 * The Temporal Schedule that prunes what the retention settings no longer keep: every hour, on the worker's task
 * queue, skipped while the previous run still works. Made by a worker when it starts; one that exists is brought
 * to this worker's task queue and interval.
 */
export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string; every?: string }): Promise<ScheduleHandle> {
  const every = options.every ?? '1 hour';
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'pruneRetention',
    workflowId: `${retentionScheduleId}-run`,
    taskQueue: options.taskQueue,
  };
  try {
    return await client.schedule.create({
      scheduleId: retentionScheduleId,
      spec: { intervals: [{ every }] },
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      memo: { purpose: 'Gatehouse retention: removes old call log rows and decided reviews (CALL_LOG_RETENTION, REVIEW_RETENTION)' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(retentionScheduleId);
    await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every }] }, action }));
    return handle;
  }
}
