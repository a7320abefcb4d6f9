import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** One arrival of the load: its number within its kind, and whether it falls in the measured window (after warm-up). */
export interface Arrival {
  sequence: number;
  measured: boolean;
}

/** What an arrival does: resolves once every answer is in and checked, throws on a wrong one. */
export type ArrivalOperation = (arrival: Arrival) => Promise<void>;

/** A start later than this after its scheduled time counts as late (the bench's own timers fell behind). */
export const lateStartMs = 20;
/** Errors of each kind kept as samples, the first ones. */
const errorSamplesKept = 5;

export interface KindCounts {
  /** Arrivals scheduled and started, warm-up included. */
  started: number;
  succeeded: number;
  errors: number;
  errorSamples: string[];
  /** Arrivals of the measured window that succeeded, and their latencies (ms, from the start to the last answer). */
  measuredSucceeded: number;
  latencyMs: number[];
  lateStarts: number;
  /** The largest delay of a start after its scheduled time (ms). */
  maxStartDelayMs: number;
}

export interface OpenLoad<K extends string> {
  /** Resolves once the schedule has run out and every arrival in flight has answered. */
  done: Promise<void>;
  counts: Record<K, KindCounts>;
  inFlight(): number;
  maxInFlight(): number;
  /** Errors so far, all kinds. */
  errors(): number;
  /** Stops scheduling new arrivals (those in flight finish). */
  stop(): void;
}

/**
 * An open-loop load: each kind's arrivals start at fixed times, `rate` a second (the kinds' first arrivals
 * staggered so they do not all start together), whether or not earlier ones have answered, for `seconds`; those
 * scheduled after `warmupSeconds` are measured. A slow service makes arrivals pile up rather than slow down.
 */
export function startOpenLoad<K extends string>(
  operations: Record<K, ArrivalOperation>,
  options: { rates: Record<K, number>; seconds: number; warmupSeconds: number },
): OpenLoad<K> {
  const kinds = (Object.keys(operations) as K[]).filter((kind) => options.rates[kind] > 0);
  const empty = (): KindCounts => ({ started: 0, succeeded: 0, errors: 0, errorSamples: [], measuredSucceeded: 0, latencyMs: [], lateStarts: 0, maxStartDelayMs: 0 });
  const counts = Object.fromEntries((Object.keys(operations) as K[]).map((kind) => [kind, empty()])) as Record<K, KindCounts>;
  const next = kinds.map((kind, index) => ({ kind, sequence: 0, interval: 1000 / options.rates[kind], offset: (index / kinds.length) * (1000 / options.rates[kind]) }));
  const endMs = options.seconds * 1000;
  const warmupMs = options.warmupSeconds * 1000;
  let inFlight = 0;
  let maxInFlight = 0;
  let stopped = false;
  const running = new Set<Promise<void>>();

  const launch = (kind: K, sequence: number, dueMs: number, startedMs: number) => {
    const tally = counts[kind];
    tally.started++;
    const delay = startedMs - dueMs;
    if (delay > lateStartMs) tally.lateStarts++;
    tally.maxStartDelayMs = Math.max(tally.maxStartDelayMs, delay);
    const measured = dueMs >= warmupMs;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const started = performance.now();
    const run = operations[kind]({ sequence, measured }).then(
      () => {
        tally.succeeded++;
        if (measured) {
          tally.measuredSucceeded++;
          tally.latencyMs.push(performance.now() - started);
        }
      },
      (error: unknown) => {
        tally.errors++;
        if (tally.errorSamples.length < errorSamplesKept) tally.errorSamples.push((error instanceof Error ? error.message : String(error)).slice(0, 500));
      },
    );
    const tracked = run.finally(() => {
      inFlight--;
      running.delete(tracked);
    });
    running.add(tracked);
  };

  const schedule = async () => {
    const origin = performance.now();
    for (;;) {
      if (stopped) return;
      let soonest = next[0];
      for (const entry of next) if (entry.offset + entry.sequence * entry.interval < soonest!.offset + soonest!.sequence * soonest!.interval) soonest = entry;
      if (!soonest) return;
      const dueMs = soonest.offset + soonest.sequence * soonest.interval;
      if (dueMs >= endMs) return;
      const wait = dueMs - (performance.now() - origin);
      if (wait > 0) await sleep(wait);
      if (stopped) return;
      launch(soonest.kind, soonest.sequence, dueMs, performance.now() - origin);
      soonest.sequence++;
    }
  };

  const done = schedule().then(async () => {
    while (running.size) await Promise.all([...running]);
  });
  return {
    done,
    counts,
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    errors: () => Object.values<KindCounts>(counts).reduce((sum, tally) => sum + tally.errors, 0),
    stop() {
      stopped = true;
    },
  };
}
