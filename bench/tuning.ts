// `npm run bench -- --tuning`: each setting the issue names, measured alone against the settings before it, on the
// same machine in the same run. One database and bench organization; a Temporal dev server per server setting;
// an api + worker pair per variant, each on a task queue and port of its own. Gated Allow writes are timed one at
// a time in rounds that visit every variant in a rotating order, then in 16-writer windows, variants interleaved;
// the fair floor with a local activity on each server shows what the server setting alone is worth.
import { join } from 'node:path';
import { freePort, startTemporalDevServer, type TemporalDevServer } from '../runtime/temporal-dev-server';
import { startFloor, type Floor } from './floor/index';
import { gatedWrite, runRounds, type Operation } from './measure';
import { startService, waitForHealth, type Service } from './services';
import { round, summarize } from './stats';
import { combine, runWindow, type Window } from './throughput';

/** Where the service's Temporal server lives: the CLI's default (search attributes read on every lookup), or not. */
type ServerSetting = 'refreshOnRead' | 'cached';

export interface TuningVariant {
  name: string;
  /** What it changes from `before`. */
  change: string;
  server: ServerSetting;
  env: Record<string, string>;
}

/** The settings before this tuning: the CLI's refresh on read, gzip on loopback, the SDK's pollers, nothing preloaded. */
const before = { TEMPORAL_GRPC_COMPRESSION: 'gzip', TEMPORAL_NON_STICKY_POLL_RATIO: '0.2', TEMPORAL_PRELOAD_WORKFLOW_MODULES: 'off' };

export const tuningVariants: TuningVariant[] = [
  { name: 'before', change: 'nothing: the settings before this tuning', server: 'refreshOnRead', env: before },
  {
    name: 'cachedSearchAttributes',
    change: 'system.forceSearchAttributesCacheRefreshOnRead=false on the dev server',
    server: 'cached',
    env: before,
  },
  { name: 'noCompression', change: 'TEMPORAL_GRPC_COMPRESSION=none (loopback)', server: 'refreshOnRead', env: { ...before, TEMPORAL_GRPC_COMPRESSION: 'none' } },
  {
    name: 'moreTaskQueuePollers',
    change: 'TEMPORAL_NON_STICKY_POLL_RATIO=0.5 (5 of 10 pollers on the task queue, not 2)',
    server: 'refreshOnRead',
    env: { ...before, TEMPORAL_NON_STICKY_POLL_RATIO: '0.5' },
  },
  {
    name: 'preloadedModules',
    change: "TEMPORAL_PRELOAD_WORKFLOW_MODULES=on (the workflows' stateless modules loaded once per sandbox)",
    server: 'refreshOnRead',
    env: { ...before, TEMPORAL_PRELOAD_WORKFLOW_MODULES: 'on' },
  },
];

export interface TuningOptions {
  databaseUrl: string;
  dataDir: string;
  cliPath: string;
  token: string;
  samples: number;
  warmup: number;
  throughputSeconds: number;
  throughputRepeats: number;
  log: (line: string) => void;
  aborted: () => boolean;
}

export interface TuningReport {
  variants: Record<string, { change: string; server: ServerSetting; env: Record<string, string> }>;
  /** One write at a time, rounds rotating through the variants. */
  latency: Record<string, { n: number; p50: number; p99: number; mean: number }>;
  /** 16 writers back to back, windows interleaved. */
  throughput16: Record<string, { writesPerSecond: number; byWindow: number[]; p50: number | null; p99: number | null; errors: number }>;
  /** Each variant ÷ before: p50 and p99 latency (lower is better), writes a second at 16 writers (higher is better). */
  ratios: Record<string, { p50: number; p99: number; writesPerSecond16: number }>;
  /** The fair floor with a local activity on each server setting, interleaved. */
  fairFloorByServer: Record<ServerSetting, { n: number; p50: number; p99: number }> & { cachedOverRefreshOnReadP50: number };
  settings: { samples: number; warmup: number; throughputSeconds: number; throughputRepeats: number };
}

/** Titles of each variant's writes count from its own base, so no two variants share a workflow id. */
const sequenceBase = (index: number) => 10_000_000 * (index + 1);

export async function measureTuning(options: TuningOptions): Promise<TuningReport> {
  const { log } = options;
  const servers: Partial<Record<ServerSetting, TemporalDevServer>> = {};
  const services: Service[] = [];
  const floors: Floor[] = [];
  try {
    const needed = [...new Set(tuningVariants.map((variant) => variant.server))];
    log(`starting ${needed.length} Temporal dev servers (${needed.join(', ')})…`);
    const started = await Promise.allSettled(
      needed.map((setting) =>
        startTemporalDevServer({
          cliPath: options.cliPath,
          headless: true,
          dbFile: join(options.dataDir, `temporal-${setting}.db`),
          refreshSearchAttributesOnRead: setting === 'refreshOnRead',
        }).then((server) => (servers[setting] = server)),
      ),
    );
    for (const result of started) if (result.status === 'rejected') throw result.reason;

    const urls: Record<string, string> = {};
    for (const [index, variant] of tuningVariants.entries()) {
      const port = await freePort();
      const env = {
        DATABASE_URL: options.databaseUrl,
        TEMPORAL_ADDRESS: servers[variant.server]!.address,
        TEMPORAL_TASK_QUEUE: `bench-tuning-${variant.name}`,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        GATEHOUSE_DATA_DIR: options.dataDir,
        METRICS_PORT: String(await freePort()),
        ...variant.env,
      };
      urls[variant.name] = `http://127.0.0.1:${port}`;
      log(`starting the api on port ${port} and the worker of variant ${variant.name} (${index + 1}/${tuningVariants.length})…`);
      services.push(startService('api', env, `api (${variant.name})`));
      // One after the other: the first migrates, and a second migrator exits rather than wait.
      await waitForHealth(urls[variant.name]!, services, 60_000, 'healthz');
      services.push(startService('worker', { ...env, TEMPORAL_METRICS_PORT: String(await freePort()) }, `worker (${variant.name})`));
    }
    for (const variant of tuningVariants) await waitForHealth(urls[variant.name]!, services, 90_000);

    const writes: Record<string, Operation> = {};
    for (const [index, variant] of tuningVariants.entries()) {
      const write = gatedWrite(urls[variant.name]!, options.token, 'allow');
      writes[variant.name] = (sequence) => write(sequenceBase(index) + sequence);
    }
    const assertRunning = () => {
      for (const service of services) service.assertRunning();
    };

    log(`gated Allow on each variant, one at a time, ${options.warmup} + ${options.samples} rounds rotating through the variants…`);
    const latency = await runRounds(writes, { rotate: true, samples: options.samples, warmup: options.warmup, aborted: options.aborted, onProgress: assertRunning });

    // The fair floor on each server: what the server setting alone is worth, without the gate.
    const sampleIds: string[] = [];
    const floorByServer: Partial<Record<ServerSetting, Operation>> = {};
    for (const setting of needed) {
      const floor = await startFloor(servers[setting]!.address, 'bench-tuning-floor', { grpcCompression: 'none' });
      floors.push(floor);
      const variant = tuningVariants.find((candidate) => candidate.server === setting)!;
      await gatedWrite(urls[variant.name]!, options.token, 'allow', { workflowIds: sampleIds })(sequenceBase(tuningVariants.length) + floors.length);
      await floor.useGatedAllow(sampleIds.at(-1)!);
      floorByServer[setting] = floor.operation(`fair floor (${setting})`, 'fairFloorLocal');
    }
    log(`the fair floor with a local activity on each server, ${options.warmup} + ${options.samples} rounds…`);
    const floorRounds = await runRounds(floorByServer as Record<ServerSetting, Operation>, {
      rotate: true,
      samples: options.samples,
      warmup: options.warmup,
      aborted: options.aborted,
    });

    log(`16 writers on each variant, ${options.throughputRepeats} × ${options.throughputSeconds} s windows, interleaved…`);
    const windows: Window<string>[] = [];
    let sequence = sequenceBase(tuningVariants.length + 1);
    for (let repeat = 0; repeat < options.throughputRepeats; repeat++) {
      const order = tuningVariants.map((_, index) => tuningVariants[(index + repeat) % tuningVariants.length]!);
      for (const variant of repeat % 2 === 0 ? order : order.reverse()) {
        if (options.aborted()) throw new Error('interrupted');
        assertRunning();
        const write = gatedWrite(urls[variant.name]!, options.token, 'allow');
        const window = await runWindow(variant.name, write, { writers: 16, seconds: options.throughputSeconds, firstSequence: sequence, processes: [] });
        sequence += window.writes + window.errors + 16;
        windows.push(window);
        log(`throughput: ${variant.name} × 16: ${(window.writes / window.seconds).toFixed(1)} writes/s, ${window.errors} errors`);
      }
    }

    const summaries = Object.fromEntries(tuningVariants.map((variant) => [variant.name, summarize(latency.samples[variant.name]!)]));
    const throughput16 = Object.fromEntries(
      tuningVariants.map((variant) => {
        const combined = combine(windows.filter((window) => window.kind === variant.name));
        return [
          variant.name,
          {
            writesPerSecond: combined.writesPerSecond,
            byWindow: combined.writesPerSecondByWindow,
            p50: combined.latency?.p50 ?? null,
            p99: combined.latency?.p99 ?? null,
            errors: combined.errors,
          },
        ];
      }),
    );
    const base = summaries.before!;
    const floorSummaries = Object.fromEntries(needed.map((setting) => [setting, summarize(floorRounds.samples[setting])])) as Record<ServerSetting, ReturnType<typeof summarize>>;
    return {
      variants: Object.fromEntries(tuningVariants.map(({ name, change, server, env }) => [name, { change, server, env }])),
      latency: Object.fromEntries(
        Object.entries(summaries).map(([name, summary]) => [name, { n: summary.n, p50: round(summary.p50), p99: round(summary.p99), mean: round(summary.mean) }]),
      ),
      throughput16,
      ratios: Object.fromEntries(
        tuningVariants.map((variant) => [
          variant.name,
          {
            p50: round(summaries[variant.name]!.p50 / base.p50, 3),
            p99: round(summaries[variant.name]!.p99 / base.p99, 3),
            writesPerSecond16: round(throughput16[variant.name]!.writesPerSecond / throughput16.before!.writesPerSecond, 3),
          },
        ]),
      ),
      fairFloorByServer: {
        ...(Object.fromEntries(
          needed.map((setting) => [setting, { n: floorSummaries[setting].n, p50: round(floorSummaries[setting].p50), p99: round(floorSummaries[setting].p99) }]),
        ) as Record<ServerSetting, { n: number; p50: number; p99: number }>),
        cachedOverRefreshOnReadP50: round(floorSummaries.cached.p50 / floorSummaries.refreshOnRead.p50, 3),
      },
      settings: { samples: options.samples, warmup: options.warmup, throughputSeconds: options.throughputSeconds, throughputRepeats: options.throughputRepeats },
    };
  } finally {
    for (const floor of floors) await floor.close().catch(() => {});
    await Promise.all(services.map((service) => service.stop().catch(() => {})));
    for (const server of Object.values(servers)) await server?.stop().catch(() => {});
  }
}
