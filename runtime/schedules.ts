import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleHandle } from '@temporalio/client';

/** A Temporal Schedule the worker keeps: a workflow run every so often on its task queue, never two at once. */
interface Upkeep {
  scheduleId: string;
  workflowType: string;
  every: string;
  purpose: string;
}

export const retentionScheduleId = 'gatehouse-retention';
export const auditSealScheduleId = 'gatehouse-audit-seal';
export const auditWitnessScheduleId = 'gatehouse-audit-witness';

/** Prunes what the retention settings no longer keep (workflows/retention.ts). */
const retention: Upkeep = {
  scheduleId: retentionScheduleId,
  workflowType: 'pruneRetention',
  every: '1 hour',
  purpose: 'Gatehouse retention: removes old call log rows and decided reviews (CALL_LOG_RETENTION, REVIEW_RETENTION)',
};

/** Chains the audit events written since the last run into each organization's ledger (workflows/audit-seal.ts). */
const auditSeal: Upkeep = {
  scheduleId: auditSealScheduleId,
  workflowType: 'sealAuditLedger',
  every: '1 minute',
  purpose: "Gatehouse audit ledger: chains new audit events into each organization's hash chain",
};

/** Sends each organization's ledger head to its witnessing webhook endpoints (workflows/audit-seal.ts). */
const auditWitness: Upkeep = {
  scheduleId: auditWitnessScheduleId,
  workflowType: 'witnessAuditLedger',
  every: '1 day',
  purpose: "Gatehouse audit ledger: sends each organization's head to the webhook endpoints that witness it (audit.head)",
};

/**
 * Makes the schedule, or brings one that exists to this worker's task queue and interval: every run skipped
 * while the previous one still works, and missed runs caught up for an hour at most.
 */
async function ensureSchedule(client: Client, upkeep: Upkeep, options: { taskQueue: string; every?: string }): Promise<ScheduleHandle> {
  const every = options.every ?? upkeep.every;
  const action = {
    type: 'startWorkflow' as const,
    workflowType: upkeep.workflowType,
    workflowId: `${upkeep.scheduleId}-run`,
    taskQueue: options.taskQueue,
  };
  try {
    return await client.schedule.create({
      scheduleId: upkeep.scheduleId,
      spec: { intervals: [{ every }] },
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      memo: { purpose: upkeep.purpose },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(upkeep.scheduleId);
    await handle.update((previous) => ({ ...previous, spec: { intervals: [{ every }] }, action }));
    return handle;
  }
}

/** The hourly retention schedule. */
export function ensureRetentionSchedule(client: Client, options: { taskQueue: string; every?: string }): Promise<ScheduleHandle> {
  return ensureSchedule(client, retention, options);
}

/** The audit ledger's sealing, every minute. */
export function ensureAuditSealSchedule(client: Client, options: { taskQueue: string; every?: string }): Promise<ScheduleHandle> {
  return ensureSchedule(client, auditSeal, options);
}

/** The audit ledger's daily witness. */
export function ensureAuditWitnessSchedule(client: Client, options: { taskQueue: string; every?: string }): Promise<ScheduleHandle> {
  return ensureSchedule(client, auditWitness, options);
}
