// The soak: the service run as `npm run bench` runs it (a scratch PostgreSQL database, the Temporal dev server on
// its file database, separate `gatehouse api` and `gatehouse worker` processes), the bench organization seeded with
// the large demo data, and a webhook endpoint on a receiver of the soak's own; then an open-loop mixed load at
// stated rates (gated Allow writes, reads, MCP calls, Review-held writes approved) for minutes, every answer
// checked and every webhook event matched to the write that raised it, while the RSS and the event loop's delay of
// the api and the worker are sampled. What it reports: growth after warm-up, the loop's delay, errors, rates,
// latencies, deliveries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { connectDatabase } from '../db/database';
import { eventLoopResolutionMs } from '../metrics';
import { createScratchDatabase, type ScratchDatabase } from '../db/scratch-database';
import { createWebhookEndpoint } from '../domain/notify/endpoints';
import { findTemporalCli } from '../runtime/temporal-binary';
import { fileDatabasePragmas, freePort, startTemporalDevServer, type TemporalDevServer } from '../runtime/temporal-dev-server';
import { connectBenchMcp } from './mcp';
import { gatedWrite } from './measure';
import { createBenchOrganization, type BenchOrganization } from './organization';
import { countSearchMatches, seedLarge, taskPagesPerWalk } from './reads';
import { benchSecrets, cleanUp, startService, waitForHealth, type Service } from './services';
import { lateStartMs, startOpenLoad } from './soak-load';
import { soakOperations } from './soak-operations';
import { buildSoakResult, soakKinds, type SoakRates, type SoakResult } from './soak-result';
import { processSampler, type SoakSample } from './soak-samples';
import { soakWebhookTypes, startWebhookReceiver, type WebhookReceiver } from './soak-webhooks';

export { printableSoak, soakKinds, soakTargets, type SoakKind, type SoakRates, type SoakResult } from './soak-result';
export type { SoakSample } from './soak-samples';

export interface SoakOptions {
  /** PostgreSQL to make the scratch database on (default the local server, as createScratchDatabase has it). */
  adminUrl?: string;
  /** The measured span, after the warm-up (so the load runs warmupMinutes + minutes in all). */
  minutes: number;
  /** Load at the full rates before the measured span: its arrivals are checked and counted, not measured. */
  warmupMinutes: number;
  rates: SoakRates;
  sampleSeconds: number;
  log: (line: string) => void;
  /** Stops the load early (the figures are then of what ran). */
  signal?: AbortSignal;
}

/** The lead's defaults for the soak. */
export const defaultSoakOptions = {
  minutes: 30,
  warmupMinutes: 5,
  rates: { gatedWrites: 5, reads: 20, mcpCalls: 2, reviewsDecided: 1 },
  sampleSeconds: 10,
} as const satisfies Omit<SoakOptions, 'log'>;

/** How long the webhook events of the last writes are awaited once the load has stopped. */
const webhookDrainMs = 60_000;

/** A gated write answers 201 only once a worker polls the task queue; until then it waits or answers 503. */
async function provePolling(apiUrl: string, token: string, services: Service[]): Promise<void> {
  const allow = gatedWrite(apiUrl, token, 'allow');
  const deadline = Date.now() + 90_000;
  for (let attempt = 0; ; attempt++) {
    for (const service of services) service.assertRunning();
    try {
      return await allow(-1 - attempt);
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no gated write answered 201 within 90 s: ${(error as Error).message}`, { cause: error });
      await sleep(500);
    }
  }
}

/** Registers the soak's endpoint for the events its writes raise, as an owner would (the domain function, loopback allowed). */
async function registerEndpoint(databaseUrl: string, organization: BenchOrganization, receiver: WebhookReceiver): Promise<void> {
  const db = connectDatabase(databaseUrl, { maxConnections: 1 });
  try {
    const { secret } = await createWebhookEndpoint(
      db,
      benchSecrets,
      organization.orgId,
      { url: receiver.url, description: 'the soak receiver', eventTypes: [...soakWebhookTypes] },
      { allowLoopback: true, allowPrivate: false },
    );
    receiver.useSecret(secret);
  } finally {
    await db.close();
  }
}

function checkOptions(options: SoakOptions): void {
  const positive = (name: string, value: number) => {
    if (!(value > 0) || !Number.isFinite(value)) throw new Error(`soak: ${name} must be a positive number, not ${value}`);
  };
  positive('minutes', options.minutes);
  positive('sampleSeconds', options.sampleSeconds);
  if (!(options.warmupMinutes >= 0)) throw new Error(`soak: warmupMinutes must be 0 or more, not ${options.warmupMinutes}`);
  for (const kind of soakKinds) if (!(options.rates[kind] >= 0)) throw new Error(`soak: rates.${kind} must be 0 or more`);
  if (options.minutes * 60 < 3 * options.sampleSeconds) throw new Error('soak: the measured span must hold at least three samples');
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  checkOptions(options);
  const { log } = options;
  const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!cliPath) throw new Error('the soak needs the Temporal CLI: install Go, or set TEMPORAL_CLI to the binary');

  let database: ScratchDatabase | undefined;
  let temporal: TemporalDevServer | undefined;
  let receiver: WebhookReceiver | undefined;
  let mcp: Client | undefined;
  const services: Service[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-soak-'));
  try {
    log('creating the database and starting the Temporal dev server…');
    const [createdDatabase, startedTemporal, startedReceiver] = await Promise.allSettled([
      createScratchDatabase('soak', options.adminUrl),
      startTemporalDevServer({ cliPath, headless: true, dbFile: join(dataDir, 'temporal.db') }),
      startWebhookReceiver(),
    ]);
    if (createdDatabase.status === 'fulfilled') database = createdDatabase.value;
    if (startedTemporal.status === 'fulfilled') temporal = startedTemporal.value;
    if (startedReceiver.status === 'fulfilled') receiver = startedReceiver.value;
    for (const started of [createdDatabase, startedTemporal, startedReceiver]) if (started.status === 'rejected') throw started.reason;
    if (!database || !temporal || !receiver) throw new Error('unreachable');
    const organization = await createBenchOrganization(database.url);

    const [port, apiMetricsPort, workerMetricsPort, temporalMetricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEHOUSE_DATA_DIR: dataDir,
      // The receiver is on loopback, as a developer's is.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    };
    const apiUrl = `http://127.0.0.1:${port}`;
    log(`database ${database.name}, Temporal at ${temporal.address}; starting the api on port ${port}, then the worker…`);
    services.push(startService('api', { ...env, METRICS_PORT: String(apiMetricsPort) }));
    await waitForHealth(apiUrl, services, 60_000, 'healthz');
    services.push(startService('worker', { ...env, METRICS_PORT: String(workerMetricsPort), TEMPORAL_METRICS_PORT: String(temporalMetricsPort) }));
    await waitForHealth(apiUrl, services, 60_000);
    await provePolling(apiUrl, organization.token, services);

    log('seeding the bench organization with the large demo data (for the reads)…');
    const seed = await seedLarge(database.url, organization);
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      await countSearchMatches(pool, organization.orgId);
    } finally {
      await pool.end();
    }
    await registerEndpoint(database.url, organization, receiver);
    mcp = await connectBenchMcp(apiUrl, organization.token);
    log(`seeded in ${seed.seconds.toFixed(1)} s; webhook endpoint at ${receiver.url}; MCP client connected`);

    const sampler = processSampler(
      { api: services[0]!.pid, worker: services[1]!.pid, temporal: temporal.pid },
      { api: `http://127.0.0.1:${apiMetricsPort}/metrics`, worker: `http://127.0.0.1:${workerMetricsPort}/metrics` },
    );
    const { operations, callLatencyMs } = soakOperations(apiUrl, organization, mcp, receiver);
    const warmupSeconds = options.warmupMinutes * 60;
    const totalSeconds = warmupSeconds + options.minutes * 60;
    const rates = options.rates;
    log(
      `load for ${options.warmupMinutes} min warm-up + ${options.minutes} min measured: ${rates.gatedWrites} gated writes, ${rates.reads} reads, ` +
        `${rates.mcpCalls} MCP calls and ${rates.reviewsDecided} reviews decided a second; samples every ${options.sampleSeconds} s`,
    );
    if (options.signal?.aborted) throw new Error('interrupted before the load started');
    await sampler.prime();
    const load = startOpenLoad(operations, { rates, seconds: totalSeconds, warmupSeconds });
    const started = performance.now();
    const samples: SoakSample[] = [];
    let failure: Error | undefined;
    const stopOnAbort = () => load.stop();
    options.signal?.addEventListener('abort', stopOnAbort);
    if (options.signal?.aborted) load.stop();
    const sampling = (async () => {
      let lastLogged = 0;
      for (let n = 1; ; n++) {
        const dueMs = n * options.sampleSeconds * 1000;
        if (dueMs > totalSeconds * 1000) return;
        await Promise.race([sleep(Math.max(0, dueMs - (performance.now() - started))), load.done]);
        if (performance.now() - started < dueMs - 5) return;
        for (const service of services) service.assertRunning();
        const atSeconds = (performance.now() - started) / 1000;
        const sample = await sampler.take(atSeconds, atSeconds > warmupSeconds, { inFlight: load.inFlight(), errors: load.errors(), webhooksAwaited: receiver!.pending() });
        samples.push(sample);
        if (atSeconds - lastLogged >= 60 || n === 1) {
          lastLogged = atSeconds;
          const mb = (value: number | null) => (value === null ? '–' : value.toFixed(0));
          log(
            `${atSeconds.toFixed(0)} s: RSS api ${mb(sample.rssMb.api)} MiB, worker ${mb(sample.rssMb.worker)} MiB, temporal ${mb(sample.rssMb.temporal)} MiB; ` +
              `loop delay p99 api ${sample.eventLoopDelayP99Ms.api?.toFixed(1)} ms, worker ${sample.eventLoopDelayP99Ms.worker?.toFixed(1)} ms ` +
              `(the soak's own ${sample.eventLoopDelayP99Ms.bench?.toFixed(1)} ms); ` +
              `${sample.inFlight} in flight, ${sample.errors} errors, ${sample.webhooksAwaited} webhooks awaited`,
          );
        }
      }
    })().catch((error: Error) => {
      failure = error;
      load.stop();
    });
    await load.done;
    const ranSeconds = Math.min(totalSeconds, (performance.now() - started) / 1000);
    await sampling;
    sampler.stop();
    options.signal?.removeEventListener('abort', stopOnAbort);
    if (failure) throw failure;

    log(`load done; awaiting ${receiver.pending()} webhook events at most ${webhookDrainMs / 1000} s…`);
    await receiver.drain(webhookDrainMs);
    const { rows } = await connectAndQuery(database.url, `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status ORDER BY status`);
    const stoppedEarly = options.signal?.aborted ?? false;
    if (stoppedEarly) log(`stopped early, after ${ranSeconds.toFixed(0)} s of load`);
    return buildSoakResult({
      options: { minutes: options.minutes, warmupMinutes: options.warmupMinutes, rates, sampleSeconds: options.sampleSeconds },
      measuredSeconds: stoppedEarly ? Math.max(0, ranSeconds - warmupSeconds) : options.minutes * 60,
      stoppedEarly,
      setup: {
        service:
          `node bin/gatehouse.js api and worker as separate processes on a scratch PostgreSQL database and temporal server start-dev ` +
          `(file database, ${fileDatabasePragmas.join(', ')}), as npm run bench runs them; the bench organization (bench plan, decide-by-title policy) ` +
          `seeded with the large demo data`,
        load:
          `open loop: each kind's arrivals start at fixed times, rate a second, whether or not earlier ones have answered (a start more than ` +
          `${lateStartMs} ms after its time counts as late); gatedWrites: POST /api/v1/tasks (Allow, 201); reads: GET /api/v1/customers?search= ` +
          `and GET /api/v1/tasks?status=todo (walking ${taskPagesPerWalk} pages) by turns; mcpCalls: list_tasks and create_task (Allow) by turns ` +
          `on one @modelcontextprotocol/sdk client over Streamable HTTP; reviewsDecided: POST /api/v1/tasks (Review, 202) then ` +
          `POST /api/v1/reviews/<id>/approve by the reviewer (200, applied); every answer checked`,
        webhooks:
          `one endpoint for ${soakWebhookTypes.join(', ')} on a loopback receiver of the soak's (WEBHOOK_ALLOW_LOOPBACK=true); each request's ` +
          `Standard Webhooks signature verified and its event matched to the write (workflow id) that raised it; lag from the request that raised it`,
        sampling:
          `every ${options.sampleSeconds} s: VmRSS of /proc/<pid>/status of the api, the worker and the Temporal server; the event loop's ` +
          `delay of the api and the worker from their metrics port (nodejs_eventloop_lag_p99_seconds and _max_seconds of prom-client, ` +
          `monitorEventLoopDelay since the previous sample, less its ${eventLoopResolutionMs} ms sampling interval), and the soak process's own the same way; ` +
          `CPU time from /proc/<pid>/stat`,
      },
      counts: load.counts,
      callLatencyMs,
      maxInFlight: load.maxInFlight(),
      samples,
      webhooks: receiver.tally(),
      deliveryLog: Object.fromEntries(rows.map((row) => [row.status, row.n])),
    });
  } finally {
    const steps: Parameters<typeof cleanUp>[0] = [
      ['closing the MCP client', () => mcp?.close()],
      ['stopping the api and the worker', async () => void (await Promise.all(services.map((service) => service.stop())))],
      ['stopping the Temporal dev server', () => temporal?.stop()],
      ['closing the webhook receiver', () => receiver?.close()],
      ['dropping the database', () => database?.drop()],
      ['removing the data folder', async () => rmSync(dataDir, { recursive: true, force: true })],
    ];
    await cleanUp(steps, log);
  }
}

async function connectAndQuery(databaseUrl: string, sql: string): Promise<{ rows: Array<{ status: string; n: number }> }> {
  const db = connectDatabase(databaseUrl, { maxConnections: 1 });
  try {
    return await db.query<{ status: string; n: number }>(sql);
  } finally {
    await db.close();
  }
}
