import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { resultTable, type Outcome } from '../../test/chaos/report';
import type { RestoreResults } from './backup';
import { components, type CapacityResults } from './capacity';
import type { ClusterFloorResults } from './floors';
import type { PinnedVersions } from './compose';
import type { JourneyResult } from './journeys';

/** One fault scenario's result under the stable names the README quotes: faults.<scenario>.lost, .doubled, .exits. */
export interface FaultResult {
  title: string;
  did: string;
  passed: boolean;
  lost: number | null;
  doubled: number | null;
  exits: number | null;
  figures: Record<string, number | string>;
  failures: string[];
  seconds: number;
}

export interface Results {
  command: string;
  startedAt: string;
  short: boolean;
  machine: string;
  versions: PinnedVersions;
  /** How long building the binaries took (0 when they were built before). */
  buildSeconds: number;
  setup: { seconds: number; schemaScriptRuns: number; namespaceScriptRuns: number };
  journeys: Record<string, JourneyResult>;
  faults: Record<string, FaultResult>;
  capacity?: CapacityResults;
  /** Temporal's floors on the deployment's own cluster, beside the gated Allow through the proxy. */
  floors?: ClusterFloorResults;
  restore?: RestoreResults;
  /** Every exit of a process of the deployment that the rehearsal did not cause, in any phase. */
  unexpectedExits: { process: string; at: string; ended: string }[];
  passed: boolean;
  failures: string[];
  seconds?: number;
}

export function faultResults(outcomes: Outcome[]): Record<string, FaultResult> {
  return Object.fromEntries(
    outcomes.map(({ scenario, result, ms }) => [
      scenario.id,
      {
        title: scenario.title,
        did: result.did,
        passed: !result.skipped && result.failures.length === 0,
        lost: result.tally?.lost ?? null,
        doubled: result.tally?.doubled ?? null,
        exits: result.tally?.exits ?? null,
        figures: Object.fromEntries(result.figures),
        failures: result.failures,
        seconds: Math.round(ms / 1000),
      },
    ]),
  );
}

/** The results as the README shows them: the journeys, then the faults' table. */
export function resultsMarkdown(results: Results): string {
  const journeys = Object.values(results.journeys).map((journey) => `| ${journey.title} | ${journey.passed ? 'pass' : '**fail**'} |`);
  const faults = Object.values(results.faults).map((fault) => ({
    scenario: { title: fault.title },
    result: { did: fault.did, figures: Object.entries(fault.figures), failures: fault.failures },
  }));
  return [
    `Deployment rehearsal (${results.command}), ${results.startedAt}: ${results.passed ? 'passed' : 'FAILED'}`,
    '',
    ...(journeys.length ? ['| Journey | Result |', '|---|:-:|', ...journeys, ''] : []),
    ...(faults.length ? [resultTable(faults), ''] : []),
    ...(results.capacity ? [capacityTable(results.capacity), ''] : []),
    ...(results.floors ? [floorsTable(results.floors), ''] : []),
    ...(results.restore ? [restoreLine(results.restore), ''] : []),
    ...results.failures.map((failure) => `- ${failure}`),
  ].join('\n');
}

function floorsTable(floors: ClusterFloorResults): string {
  const rows = Object.entries(floors.latency).map(([kind, { p50, p99 }]) => `| ${kind} | ${p50} | ${p99} |`);
  return [
    `Temporal's floors on the deployment's cluster, ${floors.settings.samples} rounds (the fair floors carry a ${floors.carried.inputBytes}-byte input and a ${floors.carried.answerBytes}-byte answer, encrypted):`,
    '',
    '| kind | p50 ms | p99 ms |',
    '|---|--:|--:|',
    ...rows,
    '',
    `Allow ÷ fair floor + local activity, p50: ${floors.ratios.allowOverFairFloorLocalP50}× (the gate's own cost ${floors.gateOwnCostMsP50} ms); ` +
      `writes/s at ${floors.settings.writers} writers: ${floors.throughput.allow.writesPerSecond} against ${floors.throughput.fairFloorLocal.writesPerSecond} ` +
      `(${floors.ratios.allowOverFairFloorLocalWritesPerSecond}×)`,
  ].join('\n');
}

function capacityTable(capacity: CapacityResults): string {
  const rows = Object.entries(capacity.shapes).map(
    ([name, shape]) =>
      `| ${name} | ${shape.writesPerSecond} (${shape.writesPerSecondByWindow.join(' / ')}) | ${shape.p50Ms} | ${shape.p99Ms} | ${shape.errors} | ` +
      components.map((component) => shape.cpuMsPerWrite[component] ?? '–').join(' | ') +
      ' |',
  );
  return [
    `Capacity: gated Allow through the proxy, ${capacity.settings.writers} writers, ${capacity.settings.repeats} windows of ${capacity.settings.secondsPerWindow} s per shape; one writer alone: p50 ${capacity.sequential.p50Ms} ms, p99 ${capacity.sequential.p99Ms} ms. CPU ms per write:`,
    '',
    `| shape | writes/s (windows) | p50 ms | p99 ms | errors | ${components.join(' | ')} |`,
    `|---|---:|---:|---:|---:|${components.map(() => '---:').join('|')}|`,
    ...rows,
  ].join('\n');
}

function restoreLine(restore: RestoreResults): string {
  return (
    `Restore: ${restore.held} held writes approved on the restored deployment, ${restore.heldApproved} applied once; ` +
    `${restore.answeredBeforeBackupPresent} of ${restore.answeredBeforeBackup} writes answered before the backup present; ` +
    `${restore.answeredAfterBackup - restore.answeredAfterBackupPresent} of ${restore.answeredAfterBackup} answered after it gone and sent again; ` +
    `lost ${restore.lost}, doubled ${restore.doubled}; backup ${restore.backupSeconds} s, restore ${restore.restoreSeconds} s: ${restore.passed ? 'pass' : 'FAIL'}`
  );
}

export function writeResults(path: string, results: Results): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}
