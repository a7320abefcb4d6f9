import { performance } from 'node:perf_hooks';
import { cpuMeter, type Measured } from './cpu';
import type { Operation } from './measure';
import { round, summarize, type Summary } from './stats';

/** Concurrent writers of each window; the levels. */
export const writerLevels = [1, 4, 16] as const;
export type WriterLevel = (typeof writerLevels)[number];
export const throughputKinds = ['allow', 'floor', 'floorLocal', 'fairFloor', 'fairFloorLocal'] as const;
export type ThroughputKind = (typeof throughputKinds)[number];

/** One window: `writers` loops, each running the operation back to back until the window closes. */
export interface Window<Kind extends string = ThroughputKind> {
  kind: Kind;
  writers: number;
  seconds: number;
  writes: number;
  errors: number;
  errorSamples: string[];
  latencyMs: number[];
  /** CPU milliseconds each measured process used in the window. */
  cpuMs: Record<string, number | null>;
}

export async function runWindow<Kind extends string>(
  kind: Kind,
  operation: Operation,
  options: { writers: number; seconds: number; firstSequence: number; processes: Measured[] },
): Promise<Window<Kind>> {
  const latencyMs: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let sequence = options.firstSequence;
  const meter = cpuMeter(options.processes);
  const started = performance.now();
  const closesAt = started + options.seconds * 1000;
  const writer = async () => {
    while (performance.now() < closesAt) {
      const begun = performance.now();
      try {
        await operation(sequence++);
        latencyMs.push(performance.now() - begun);
      } catch (error) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push((error as Error).message.slice(0, 300));
      }
    }
  };
  await Promise.all(Array.from({ length: options.writers }, writer));
  // The window ends when its last write has answered: every write it started is counted, and its time too.
  const seconds = (performance.now() - started) / 1000;
  return { kind, writers: options.writers, seconds, writes: latencyMs.length, errors, errorSamples, latencyMs, cpuMs: meter() };
}

export interface ThroughputResult<Kind extends string = ThroughputKind> {
  kind: Kind;
  writers: number;
  windows: number;
  seconds: number;
  writes: number;
  writesPerSecond: number;
  /** writes/s of each window, in the order run: the spread. */
  writesPerSecondByWindow: number[];
  errors: number;
  errorSamples: string[];
  latency: Summary | null;
  p99OverP50: number | null;
  /** CPU milliseconds per write of each measured process, over all windows of this kind and level. */
  cpuMsPerWrite: Record<string, number | null>;
}

/** The windows of one kind and level, taken together. */
export function combine<Kind extends string>(windows: Window<Kind>[]): ThroughputResult<Kind> {
  const [first] = windows;
  if (!first) throw new Error('no window to combine');
  const writes = windows.reduce((sum, w) => sum + w.writes, 0);
  const seconds = windows.reduce((sum, w) => sum + w.seconds, 0);
  const latency = windows.flatMap((w) => w.latencyMs);
  const summary = latency.length ? summarize(latency) : null;
  const names = Object.keys(first.cpuMs);
  const cpuMsPerWrite = Object.fromEntries(
    names.map((name) => {
      const used = windows.map((w) => w.cpuMs[name]);
      if (writes === 0 || used.some((ms) => ms === null || ms === undefined)) return [name, null];
      return [name, round(used.reduce((sum: number, ms) => sum + ms!, 0) / writes, 2)];
    }),
  );
  return {
    kind: first.kind,
    writers: first.writers,
    windows: windows.length,
    seconds: round(seconds, 2),
    writes,
    writesPerSecond: round(writes / seconds, 1),
    writesPerSecondByWindow: windows.map((w) => round(w.writes / w.seconds, 1)),
    errors: windows.reduce((sum, w) => sum + w.errors, 0),
    errorSamples: windows.flatMap((w) => w.errorSamples).slice(0, 5),
    latency: summary && (Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, k === 'n' ? v : round(v)])) as unknown as Summary),
    p99OverP50: summary ? round(summary.p99 / summary.p50, 2) : null,
    cpuMsPerWrite,
  };
}
