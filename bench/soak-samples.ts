import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { eventLoopResolutionMs } from '../metrics';
import { cpuMs } from './cpu';

/** The processes the soak watches: api and worker (their RSS and event loop), the Temporal server (its RSS, for information). */
export const sampledProcesses = ['api', 'worker', 'temporal'] as const;
export type SampledProcess = (typeof sampledProcesses)[number];
export type NodeProcess = Exclude<SampledProcess, 'temporal'>;
/** The event loops sampled: the api's and the worker's, and the soak's own (mostly idle: what the machine alone costs a loop). */
export type SampledLoop = NodeProcess | 'bench';

export interface SoakSample {
  /** Seconds since the load started. */
  atSeconds: number;
  /** Taken after the warm-up. */
  measured: boolean;
  /** Resident set (VmRSS of /proc/<pid>/status), MiB. */
  rssMb: Record<SampledProcess, number | null>;
  /**
   * The event loop's delay since the previous sample, p99 and maximum (ms): perf_hooks' monitorEventLoopDelay as
   * the process serves it (nodejs_eventloop_lag_p99_seconds, …_max_seconds), less its sampling interval (each
   * sample is the time between two ticks of that interval); and the soak process's own, measured the same way.
   */
  eventLoopDelayP99Ms: Record<SampledLoop, number | null>;
  eventLoopDelayMaxMs: Record<SampledLoop, number | null>;
  /** CPU time used since the previous sample, as a share of one core. */
  cpuCores: Record<SampledProcess, number | null>;
  /** Arrivals awaiting their answers, errors so far, and webhook events raised and not yet arrived (a backlog grows here). */
  inFlight: number;
  errors: number;
  webhooksAwaited: number;
}

/** Resident set size in MiB, from VmRSS; null once the process is gone. */
export function residentMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** The values of the named metrics (no labels) in a Prometheus scrape. */
async function scrape(url: string, names: string[]): Promise<Record<string, number | undefined>> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  const values: Record<string, number | undefined> = {};
  for (const name of names) {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    values[name] = match ? Number(match[1]) : undefined;
  }
  return values;
}

const delayMs = (seconds: number | undefined) => (seconds === undefined ? null : Math.max(0, seconds * 1000 - eventLoopResolutionMs));

export interface Sampler {
  /** Scrapes once without keeping it: the event loop's figures then start from here. */
  prime(): Promise<void>;
  take(atSeconds: number, measured: boolean, load: { inFlight: number; errors: number; webhooksAwaited: number }): Promise<SoakSample>;
  stop(): void;
}

/** Samples the api, the worker and the Temporal server by pid, and the api's and worker's metrics by URL. */
export function processSampler(pids: Record<SampledProcess, number | undefined>, metricsUrls: Record<NodeProcess, string>): Sampler {
  const names = ['nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds'];
  let lastCpu = Object.fromEntries(sampledProcesses.map((name) => [name, cpuMs({ name, pid: pids[name] })])) as Record<SampledProcess, number | undefined>;
  let lastAt = performance.now();
  const ownLoop = monitorEventLoopDelay({ resolution: eventLoopResolutionMs });
  return {
    async prime() {
      ownLoop.enable();
      await Promise.all(Object.values(metricsUrls).map((url) => scrape(url, names)));
      lastCpu = Object.fromEntries(sampledProcesses.map((name) => [name, cpuMs({ name, pid: pids[name] })])) as Record<SampledProcess, number | undefined>;
      lastAt = performance.now();
    },
    async take(atSeconds, measured, load) {
      const [api, worker] = await Promise.all([scrape(metricsUrls.api, names), scrape(metricsUrls.worker, names)]);
      const now = performance.now();
      const cpu = Object.fromEntries(sampledProcesses.map((name) => [name, cpuMs({ name, pid: pids[name] })])) as Record<SampledProcess, number | undefined>;
      const cpuCores = Object.fromEntries(
        sampledProcesses.map((name) => {
          const [before, after] = [lastCpu[name], cpu[name]];
          return [name, before === undefined || after === undefined ? null : (after - before) / (now - lastAt)];
        }),
      ) as Record<SampledProcess, number | null>;
      lastCpu = cpu;
      lastAt = now;
      const own = { p99: ownLoop.percentile(99) / 1e9, max: ownLoop.max / 1e9 };
      ownLoop.reset();
      return {
        atSeconds,
        measured,
        rssMb: { api: residentMb(pids.api), worker: residentMb(pids.worker), temporal: residentMb(pids.temporal) },
        eventLoopDelayP99Ms: { api: delayMs(api.nodejs_eventloop_lag_p99_seconds), worker: delayMs(worker.nodejs_eventloop_lag_p99_seconds), bench: delayMs(own.p99) },
        eventLoopDelayMaxMs: { api: delayMs(api.nodejs_eventloop_lag_max_seconds), worker: delayMs(worker.nodejs_eventloop_lag_max_seconds), bench: delayMs(own.max) },
        cpuCores,
        ...load,
      };
    },
    stop: () => ownLoop.disable(),
  };
}
