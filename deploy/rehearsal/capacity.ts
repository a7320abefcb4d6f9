import { setTimeout as sleep } from 'node:timers/promises';
import { cpuMeter, type Measured } from '../../bench/cpu';
import { gatedWrite } from '../../bench/measure';
import { round } from '../../bench/stats';
import { combine, runWindow, type ThroughputResult, type Window } from '../../bench/throughput';
import { connectDatabase } from '../../db/database';
import { createChaosOrganization } from '../../test/chaos/fixture';
import { applicationNames } from '../../test/chaos/stack';
import type { Deployment } from './deployment';
import { temporalServices } from './temporal';

/** A shape of the deployment: how many api and worker processes run (Temporal, PostgreSQL and the proxy, always one). */
interface Shape {
  apis: number;
  workers: number;
}

const shapeName = (shape: Shape) => `apis${shape.apis}-workers${shape.workers}`;

/** The shapes in the order they are measured: each differs from the one before by one process started or stopped. */
const shapes: Shape[] = [
  { apis: 2, workers: 2 },
  { apis: 2, workers: 1 },
  { apis: 1, workers: 1 },
  { apis: 1, workers: 2 },
];

/** The parts whose CPU per write is measured, as the README's sizing section names them. */
export const components = ['proxy', 'api', 'worker', 'temporalFrontend', 'temporalHistory', 'temporalMatching', 'temporalWorker', 'postgres', 'loadGenerator'] as const;
export type Component = (typeof components)[number];

export interface CapacitySettings {
  writers: number;
  secondsPerWindow: number;
  repeats: number;
  warmupSeconds: number;
  /** A window without writes after each loaded one: the shape's cost at rest. */
  idleSeconds: number;
}

export interface ShapeResult {
  apis: number;
  workers: number;
  writesPerSecond: number;
  /** Each window's writes a second, in the order run: the spread. */
  writesPerSecondByWindow: number[];
  p50Ms: number | null;
  p99Ms: number | null;
  errors: number;
  errorSamples: string[];
  /** CPU milliseconds per write of each part, over all this shape's windows. */
  cpuMsPerWrite: Record<Component, number | null>;
  /** CPU milliseconds a second each part uses with no writes at all. */
  idleCpuMsPerSecond: Record<Component, number | null>;
  /** CPU per write beyond the cost at rest: cpuMsPerWrite − idleCpuMsPerSecond ÷ writesPerSecond. */
  marginalCpuMsPerWrite: Record<Component, number | null>;
  /** The api and worker processes' main threads (their JavaScript), per write. */
  mainThreadMsPerWrite: { api: number | null; worker: number | null };
}

export interface CapacityResults {
  settings: CapacitySettings;
  /** One writer at a time on the production shape: a write's own time, nothing queued before it. */
  sequential: { writesPerSecond: number; p50Ms: number | null; p99Ms: number | null; errors: number };
  shapes: Record<string, ShapeResult>;
  /** Stable names the README quotes: 2 apis with 1 and 2 workers; 1 and 2 apis with 2 workers. */
  workers1: ShapeResult;
  workers2: ShapeResult;
  apis1: ShapeResult;
  apis2: ShapeResult;
  /** Of the production shape (2 apis, 2 workers). */
  cpuMsPerWrite: Record<Component, number | null>;
  /** 1000 ÷ CPU ms per write: the writes a second one core of each part carries. */
  writesPerCoreSecond: Record<Component, number | null>;
}

/**
 * Gated Allow writes through the proxy, as many writers as `settings.writers` sending back to back, in windows
 * interleaved over the four shapes and repeated; each window's writes a second, latencies, and the CPU each process
 * used (from /proc: Temporal's services one by one, PostgreSQL with all its backends).
 */
export async function measureCapacity(deployment: Deployment, settings: CapacitySettings, log: (line: string) => void, signal: AbortSignal): Promise<CapacityResults> {
  const db = connectDatabase(deployment.databaseUrl(applicationNames.driver), { maxConnections: 2 });
  const org = await createChaosOrganization(db, 1).finally(() => db.close());
  const write = gatedWrite(`${deployment.proxyUrl}`, org.agentTokens[0]!, 'allow');
  const windows: Window<string>[] = [];
  const idle: { shape: string; seconds: number; cpuMs: Record<string, number | null> }[] = [];
  let sequence = 0;
  for (let repeat = 0; repeat < settings.repeats && !signal.aborted; repeat += 1) {
    for (const shape of shapes) {
      if (signal.aborted) break;
      await setShape(deployment, shape);
      // Warm: the processes just started compile their hot paths, and the proxy takes back an api it had to leave out.
      await runWindow('warmup', write, { writers: settings.writers, seconds: settings.warmupSeconds, firstSequence: (sequence += 100_000), processes: [] });
      const window = await runWindow(shapeName(shape), write, { writers: settings.writers, seconds: settings.secondsPerWindow, firstSequence: (sequence += 100_000), processes: measured(deployment) });
      windows.push(window);
      // One writer: the time a write takes when nothing queues before it.
      if (shape.apis === 2 && shape.workers === 2) {
        windows.push(await runWindow('sequential', write, { writers: 1, seconds: settings.secondsPerWindow / 2, firstSequence: (sequence += 100_000), processes: [] }));
      }
      // What the shape costs with nothing to do (polls, schedules, the outbox relay, health checks): the part of
      // the CPU per write that shrinks as throughput grows.
      const meter = cpuMeter(measured(deployment));
      await sleep(settings.idleSeconds * 1000);
      idle.push({ shape: shapeName(shape), seconds: settings.idleSeconds, cpuMs: meter() });
      log(`capacity ${shapeName(shape)} (${repeat + 1}/${settings.repeats}): ${(window.writes / window.seconds).toFixed(1)} writes/s, ${window.errors} errors`);
    }
  }
  await setShape(deployment, { apis: deployment.apis.length, workers: deployment.workers.length });
  const byShape = Object.fromEntries(
    shapes.map((shape) => {
      const name = shapeName(shape);
      return [name, shapeResult(shape, combine(windows.filter((window) => window.kind === name)), idle.filter((window) => window.shape === name))];
    }),
  );
  const production = byShape[shapeName({ apis: 2, workers: 2 })]!;
  const sequential = combine(windows.filter((window) => window.kind === 'sequential'));
  return {
    settings,
    sequential: {
      writesPerSecond: sequential.writesPerSecond,
      p50Ms: sequential.latency ? round(sequential.latency.p50, 1) : null,
      p99Ms: sequential.latency ? round(sequential.latency.p99, 1) : null,
      errors: sequential.errors,
    },
    shapes: byShape,
    workers1: byShape[shapeName({ apis: 2, workers: 1 })]!,
    workers2: production,
    apis1: byShape[shapeName({ apis: 1, workers: 2 })]!,
    apis2: production,
    cpuMsPerWrite: production.cpuMsPerWrite,
    writesPerCoreSecond: Object.fromEntries(components.map((component) => {
      const ms = production.cpuMsPerWrite[component];
      return [component, ms ? round(1000 / ms, 0) : null];
    })) as Record<Component, number | null>,
  };
}

/** Starts and stops api and worker processes (as an operator scales them) until `shape` runs; the proxy finds the apis by name. */
async function setShape(deployment: Deployment, shape: Shape): Promise<void> {
  const wanted = [...deployment.apis.map((api, i) => [api, i < shape.apis] as const), ...deployment.workers.map((worker, i) => [worker, i < shape.workers] as const)];
  for (const [process, runs] of wanted) {
    if (runs && !process.running) await process.start(180_000);
    if (!runs && process.running) await process.stop();
  }
  await deployment.ready();
  await sleep(1000);
}

/** Every process of the deployment, by name, for /proc's CPU times; stopped ones read as nothing. */
function measured(deployment: Deployment): Measured[] {
  return [
    { name: 'proxy', pid: deployment.proxy.pid },
    ...deployment.apis.flatMap((api) => [{ name: `api:${api.name}`, pid: api.pid }, { name: `apiMain:${api.name}`, mainThread: api.pid }]),
    ...deployment.workers.flatMap((worker) => [{ name: `worker:${worker.name}`, pid: worker.pid }, { name: `workerMain:${worker.name}`, mainThread: worker.pid }]),
    ...temporalServices.map((service) => ({ name: `temporal:${service}`, pid: deployment.temporal.services[service].pid })),
    { name: 'postgres', tree: deployment.postgres.pid() },
    { name: 'loadGenerator', self: true as const },
  ];
}

/** The sum of the measured processes' figures whose names start with `prefix` (null when none ran). */
function sumOf(figures: Record<string, number | null>, prefix: string, digits = 2): number | null {
  const present = Object.entries(figures).filter(([name, value]) => name.startsWith(prefix) && value !== null);
  return present.length ? round(present.reduce((sum, [, value]) => sum + value!, 0), digits) : null;
}

/** Each measured process's figure summed into its part. */
function byComponent(figures: Record<string, number | null>, digits = 2): Record<Component, number | null> {
  const prefixes: Record<Component, string> = {
    proxy: 'proxy',
    api: 'api:',
    worker: 'worker:',
    temporalFrontend: 'temporal:frontend',
    temporalHistory: 'temporal:history',
    temporalMatching: 'temporal:matching',
    temporalWorker: 'temporal:worker',
    postgres: 'postgres',
    loadGenerator: 'loadGenerator',
  };
  return Object.fromEntries(components.map((component) => [component, sumOf(figures, prefixes[component], digits)])) as Record<Component, number | null>;
}

/** The shape's windows, with each process's CPU summed into its part, and its cost at rest taken apart. */
function shapeResult(shape: Shape, result: ThroughputResult<string>, idle: { seconds: number; cpuMs: Record<string, number | null> }[]): ShapeResult {
  const cpuMsPerWrite = byComponent(result.cpuMsPerWrite);
  const idleSeconds = idle.reduce((sum, window) => sum + window.seconds, 0);
  const idleMs = Object.fromEntries(
    Object.keys(idle[0]?.cpuMs ?? {}).map((name) => {
      const values = idle.map((window) => window.cpuMs[name]);
      return [name, values.some((value) => value === null || value === undefined) ? null : values.reduce((sum: number, value) => sum + value!, 0) / idleSeconds];
    }),
  );
  const idleCpuMsPerSecond = byComponent(idleMs, 1);
  const marginalCpuMsPerWrite = Object.fromEntries(
    components.map((component) => {
      const total = cpuMsPerWrite[component];
      const rest = idleCpuMsPerSecond[component];
      return [component, total === null || rest === null || result.writesPerSecond === 0 ? null : round(Math.max(0, total - rest / result.writesPerSecond), 2)];
    }),
  ) as Record<Component, number | null>;
  return {
    ...shape,
    writesPerSecond: result.writesPerSecond,
    writesPerSecondByWindow: result.writesPerSecondByWindow,
    p50Ms: result.latency ? round(result.latency.p50, 1) : null,
    p99Ms: result.latency ? round(result.latency.p99, 1) : null,
    errors: result.errors,
    errorSamples: result.errorSamples,
    cpuMsPerWrite,
    idleCpuMsPerSecond,
    marginalCpuMsPerWrite,
    mainThreadMsPerWrite: { api: sumOf(result.cpuMsPerWrite, 'apiMain:'), worker: sumOf(result.cpuMsPerWrite, 'workerMain:') },
  };
}

