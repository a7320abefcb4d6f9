import { formatTable } from '../stats';
import type { CallLogSizeResult, RetentionSizeResult } from './call-log';
import type { AuditSizeResult, QueueSizeResult } from './queue-audit';

/** What `npm run bench -- --size` prints: each request's p50 / p99 by size, and the ratios the targets name. */
export function printableSize(size: { queue: QueueSizeResult; audit: AuditSizeResult; callLog: CallLogSizeResult; retention: RetentionSizeResult }): string {
  const thousands = (value: number) => value.toLocaleString('en-US');
  const cell = ({ p50, p99 }: { p50: number; p99: number }) => `${p50.toFixed(1)} / ${p99.toFixed(1)}`;
  const times = (value: number) => `${value.toFixed(2)}×`;
  const { queue, audit, callLog, retention } = size;
  const reads = Object.keys(callLog.p50RatiosLargestOverSmallest) as (keyof CallLogSizeResult['p50RatiosLargestOverSmallest'])[];
  const queueNames = Object.keys(queue.p50Ratios) as (keyof QueueSizeResult['p50Ratios'])[];
  const auditNames = Object.keys(audit.p50Ratios) as (keyof AuditSizeResult['p50Ratios'])[];
  return [
    `The review queue: ${thousands(queue.pending)} pending among the decided reviews of each size; p50 / p99 ms`,
    '',
    formatTable([
      ['request', ...queue.sizes.map((entry) => `${thousands(entry.decided)} decided`), 'largest ÷ smallest p50'],
      ...queueNames.map((name) => [name, ...queue.sizes.map((entry) => cell(entry.operations[name])), times(queue.p50Ratios[name].value)]),
    ]),
    '',
    `The audit trail; p50 / p99 ms, and the export and verify in events a second`,
    '',
    formatTable([
      ['request', ...audit.sizes.map((entry) => `${thousands(entry.events)} events`), 'largest ÷ smallest p50'],
      ...auditNames.map((name) => [name, ...audit.sizes.map((entry) => cell(entry.operations[name])), times(audit.p50Ratios[name].value)]),
      ['export (events/s)', ...audit.sizes.map((entry) => thousands(Math.round(entry.export.eventsPerSecond))), `${times(audit.exportRatio.value)} (÷ the next smaller)`],
      ['verify (events/s)', ...audit.sizes.map((entry) => thousands(Math.round(entry.verify.eventsPerSecond))), `${times(audit.verifyRatio.value)} (÷ the next smaller)`],
    ]),
    '',
    `The Agent Command Center over the call log; p50 / p99 ms (each size timed in the same rounds as a reference organization of ${thousands(callLog.sizes[0]!)} rows)`,
    '',
    formatTable([
      ['read', ...callLog.runs.map((run) => `${thousands(run.rows)} rows`), 'largest ÷ reference p50'],
      ...reads.map((name) => [name, ...callLog.runs.map((run) => cell(run.reads[name])), times(callLog.runs.at(-1)!.p50RatiosOverReference[name])]),
    ]),
    '',
    `Retention: the year's backlog of ${thousands(retention.rows)} rows pruned to ${retention.retentionDays} days in ${retention.backlog.seconds.toFixed(1)} s ` +
      `(${thousands(Math.round(retention.rowsPerSecond))} rows/s); the next hour's prune ${retention.hourly.seconds.toFixed(2)} s`,
    '',
    formatTable([
      ['target', 'figure', 'met'],
      ['queue list p50, largest ÷ smallest ≤ 1.3', times(queue.p50Ratio1mOver10k), queue.p50Ratio1mOver10k <= 1.3 ? 'yes' : 'no'],
      ['audit page p50, largest ÷ smallest ≤ 1.3', times(audit.p50Ratio1mOver10k), audit.p50Ratio1mOver10k <= 1.3 ? 'yes' : 'no'],
      ['export events/s, largest ÷ next ≥ 0.8', times(audit.exportRatio1mOver100k), audit.exportRatio1mOver100k >= 0.8 ? 'yes' : 'no'],
      ['verify events/s, largest ÷ next ≥ 0.8', times(audit.verifyRatio1mOver100k), audit.verifyRatio1mOver100k >= 0.8 ? 'yes' : 'no'],
      [`Command Center (${callLog.mainRead}) p50, largest ÷ reference ≤ 1.3`, times(callLog.p50Ratio10mOver100k), callLog.p50Ratio10mOver100k <= 1.3 ? 'yes' : 'no'],
    ]),
  ].join('\n');
}
