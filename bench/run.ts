// `npm run bench`, on the service run as in production (a PostgreSQL server, the Temporal dev server on its file
// database as `gatehouse dev` runs it, separate api and worker processes), phase by phase:
//   1. latency, sequential and interleaved: gated Allow, Review, approve-to-applied, Deny over REST, Temporal's
//      floor (update-with-start of a workflow with no activity, the bench's own client and worker), a plain INSERT;
//      then the histories of those workflows (events, workflow tasks)
//   2. the floor on the dev server's default SQLite settings beside the floor on ours (journal_mode=wal)
//   3. throughput of gated Allow writes and of the floor at 1, 4 and 16 concurrent writers, with the CPU time of
//      the api, the worker, the Temporal server and the bench process per write, from /proc
//   4. reads (customer search, task list page) on the `large` seed, alone and while gated writes run
//   5. MCP tool calls (a read and a gated Allow write) beside their REST twins
//   6. the cost of the plan's request limits: the same read on an api that counts every request and on one
//      started with RATE_LIMITS=off
//   7. the cost of payload encryption: the same gated Allow write on two fresh api + worker pairs, one with plain
//      payloads and one with a PAYLOAD_ENCRYPTION_KEYS key (checked to store ciphertext); and the codec's own cost
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pg from 'pg';
import { formatPayloadKeys, newPayloadKey } from '../runtime/payload-codec';
import { findTemporalCli } from '../runtime/temporal-binary';
import { freePort, startTemporalDevServer, type TemporalDevServer } from '../runtime/temporal-dev-server';
import { createScratchDatabase, type ScratchDatabase } from '../db/scratch-database';
import { checkPayloadEncodings, codecMicroseconds, encryptionOperations } from './encryption';
import { limitOperations } from './limits';
import { connectBenchMcp, mcpOperations, type McpKind } from './mcp';
import { type Measured } from './cpu';
import { startFloor, type Floor } from './floor/index';
import { historyShapes } from './history';
import { approveHeld, gatedWrite, plainInsert, runRounds, type Kind, type Operation, type RoundsResult } from './measure';
import { runWindow, throughputKinds, writerLevels, type Window } from './throughput';
import { createBenchOrganization } from './organization';
import { countSearchMatches, customerSearch, seedLarge, startWriteLoad, taskListPage, type ReadKind } from './reads';
import { buildReport, machineOf, printableReport, printableTuning, writeJson, writeReport } from './report';
import { measureTuning } from './tuning';
import { measureQueueAndAuditAtSize } from './size/queue-audit';
import { measureCallLogAtSize } from './size/call-log';
import { printableSize } from './size/report';
import { defaultSoakOptions, printableSoak, runSoak, soakKinds, type SoakOptions, type SoakRates } from './soak';
import { cleanUp, startService, waitForHealth, type Service } from './services';

const resultsPath = fileURLToPath(new URL('./results/latest.json', import.meta.url));
const tuningResultsPath = fileURLToPath(new URL('./results/tuning.json', import.meta.url));
const soakResultsPath = fileURLToPath(new URL('./results/soak.json', import.meta.url));
const sizeResultsPath = fileURLToPath(new URL('./results/size.json', import.meta.url));

function options() {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: '200' },
      warmup: { type: 'string', default: '20' },
      'read-samples': { type: 'string', default: '200' },
      'mcp-samples': { type: 'string', default: '200' },
      'limit-samples': { type: 'string', default: '1000' },
      'encryption-samples': { type: 'string', default: '200' },
      'journal-samples': { type: 'string', default: '100' },
      'throughput-seconds': { type: 'string', default: '4' },
      'throughput-repeats': { type: 'string', default: '2' },
      tuning: { type: 'boolean', default: false },
      size: { type: 'boolean', default: false },
      'size-queue': { type: 'string', default: '10000,100000,1000000' },
      'size-audit': { type: 'string', default: '10000,100000,1000000' },
      'size-calls': { type: 'string', default: '100000,1000000,10000000' },
      'size-samples': { type: 'string', default: '40' },
      'size-passes': { type: 'string', default: '3' },
      soak: { type: 'boolean', default: false },
      'soak-minutes': { type: 'string', default: String(defaultSoakOptions.minutes) },
      'soak-warmup-minutes': { type: 'string', default: String(defaultSoakOptions.warmupMinutes) },
      'soak-rates': { type: 'string', default: soakKinds.map((kind) => defaultSoakOptions.rates[kind]).join(',') },
      'soak-sample-seconds': { type: 'string', default: String(defaultSoakOptions.sampleSeconds) },
    },
    strict: true,
  });
  const count = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer of at least ${min}, not "${value}"`);
    return n;
  };
  return {
    samples: count('samples', values.samples, 1),
    warmup: count('warmup', values.warmup, 0),
    readSamples: count('read-samples', values['read-samples'], 1),
    mcpSamples: count('mcp-samples', values['mcp-samples'], 1),
    limitSamples: count('limit-samples', values['limit-samples'], 1),
    encryptionSamples: count('encryption-samples', values['encryption-samples'], 1),
    journalSamples: count('journal-samples', values['journal-samples'], 1),
    throughputSeconds: count('throughput-seconds', values['throughput-seconds'], 1),
    throughputRepeats: count('throughput-repeats', values['throughput-repeats'], 1),
    tuning: values.tuning,
    soak: values.soak ? soakOptions(values) : undefined,
    size: values.size ? sizeOptions(values) : undefined,
  };
}

/** `--size`'s options: the sizes of each phase (increasing, comma-separated), timed rounds and whole passes. */
function sizeOptions(values: Record<string, string | boolean | undefined>) {
  const sizes = (name: string) => {
    const list = String(values[name]).split(',').map(Number);
    if (list.length < 2 || list.some((size, index) => !Number.isInteger(size) || size < 1000 || (index > 0 && size <= list[index - 1]!))) {
      throw new Error(`--${name} takes two or more increasing sizes of at least 1000, comma-separated, not "${values[name]}"`);
    }
    return list;
  };
  const count = (name: string) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not "${values[name]}"`);
    return n;
  };
  return {
    queueSizes: sizes('size-queue'),
    auditSizes: sizes('size-audit'),
    callLogSizes: sizes('size-calls'),
    samples: count('size-samples'),
    passes: count('size-passes'),
  };
}

/** `--soak`'s options: minutes measured, warm-up minutes, rates a second (gated writes, reads, MCP calls, reviews), sampling. */
function soakOptions(values: Record<string, string | boolean | undefined>) {
  const number = (name: string, min: number) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number of at least ${min}, not "${values[name]}"`);
    return value;
  };
  const rates = String(values['soak-rates']).split(',').map(Number);
  if (rates.length !== soakKinds.length || rates.some((rate) => !Number.isFinite(rate) || rate < 0)) {
    throw new Error(`--soak-rates takes ${soakKinds.length} numbers a second, comma-separated (${soakKinds.join(', ')}), not "${values['soak-rates']}"`);
  }
  return {
    minutes: number('soak-minutes', 0.1),
    warmupMinutes: number('soak-warmup-minutes', 0),
    rates: Object.fromEntries(soakKinds.map((kind, index) => [kind, rates[index]!])) as unknown as SoakRates,
    sampleSeconds: number('soak-sample-seconds', 1),
  };
}

/** Concurrent loops of gated Allow writes while the reads are measured a second time. */
const writeLoadConcurrency = 4;
/** Titles of the load's writes count from here, apart from the rounds' (a workflow id includes the body). */
const writeLoadFirstSequence = 1_000_000;
/** Writes each loop completes before the reads start (about a second), so they run under steady load. */
const writeLoadRampUp = 10;
/** Titles of the MCP phase's writes (MCP and REST) count from here. */
const mcpFirstSequence = 2_000_000;
/** Titles of the throughput windows' writes count from here. */
const throughputFirstSequence = 3_000_000;
/**
 * Titles of the encryption phase's writes count from here, on the plain pair and on the encrypted one (whose
 * proving writes, numbered -1, -2, …, come just below its first).
 */
const encryptionPlainFirstSequence = 4_000_000;
const encryptionEncryptedFirstSequence = 5_000_000;
/** The encryption phase's task queues, apart from the main pair's (TEMPORAL_TASK_QUEUE's default). */
const encryptedTaskQueue = 'bench-encrypted';
const plainTaskQueue = 'bench-plain';
/** Workflows of each kind whose histories are read back. */
const historiesPerKind = 20;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function main(): Promise<void> {
  const chosen = options();
  if ([chosen.tuning, chosen.soak, chosen.size].filter(Boolean).length > 1) throw new Error('--tuning, --size and --soak are runs of their own: choose one');
  if (chosen.tuning) return tuning();
  if (chosen.soak) return soak(chosen.soak);
  if (chosen.size) return size(chosen.size, chosen.warmup);
  const { samples, warmup, readSamples, mcpSamples, limitSamples, encryptionSamples, journalSamples, throughputSeconds, throughputRepeats } = options();
  const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL;
  const { cliPath, interrupted } = await benchStart();

  let database: ScratchDatabase | undefined;
  let temporal: TemporalDevServer | undefined;
  let defaultJournalTemporal: TemporalDevServer | undefined;
  const floors: Floor[] = [];
  let pool: pg.Pool | undefined;
  const services: Service[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const started = Date.now();
  try {
    log('creating the database and starting the Temporal dev server…');
    // Both settle before anything throws, so the finally below cleans up whichever one started.
    // The service's server runs as `gatehouse dev` runs it (a file database, our SQLite settings); a second one on
    // the dev server's own settings serves only the floor, to show what those settings are worth.
    const [createdDatabase, startedTemporal, startedDefaultJournal] = await Promise.allSettled([
      createScratchDatabase('bench', adminUrl),
      startTemporalDevServer({ cliPath, headless: true, dbFile: join(dataDir, 'temporal.db') }),
      startTemporalDevServer({ cliPath, headless: true, dbFile: join(dataDir, 'temporal-default-journal.db'), sqlitePragmas: [] }),
    ]);
    if (createdDatabase.status === 'fulfilled') database = createdDatabase.value;
    if (startedTemporal.status === 'fulfilled') temporal = startedTemporal.value;
    if (startedDefaultJournal.status === 'fulfilled') defaultJournalTemporal = startedDefaultJournal.value;
    for (const started of [createdDatabase, startedTemporal, startedDefaultJournal]) if (started.status === 'rejected') throw started.reason;
    if (!database || !temporal || !defaultJournalTemporal) throw new Error('unreachable');
    const organization = await createBenchOrganization(database.url);

    const port = await freePort();
    const env = {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEHOUSE_DATA_DIR: dataDir,
    };
    // One after the other: both migrate on start, and a second migrator exits instead of waiting for the lock. The
    // api is live once it has migrated, and ready (/readyz) only once a worker polls its task queue.
    log(`database ${database.name}, Temporal at ${temporal.address}; starting the api on port ${port}, then the worker…`);
    services.push(startService('api', env));
    const apiUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(apiUrl, services, 60_000, 'healthz');
    services.push(startService('worker', env));
    await waitForHealth(apiUrl, services, 60_000);
    // A second api on the same database and Temporal, counting nothing: the baseline of the limits' cost.
    const limitsOffPort = await freePort();
    const limitsOffUrl = `http://127.0.0.1:${limitsOffPort}`;
    services.push(startService('api', { ...env, PORT: String(limitsOffPort), RATE_LIMITS: 'off' }, 'api (RATE_LIMITS=off)'));

    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    const floor = await startFloor(temporal.address, 'bench-floor');
    floors.push(floor);
    const workflowIds = {
      allow: [] as string[],
      review: [] as string[],
      deny: [] as string[],
      floor: [] as string[],
      floorLocal: [] as string[],
      fairFloor: [] as string[],
      fairFloorLocal: [] as string[],
    };
    const held: string[] = [];
    const operations: Record<Kind, Operation> = {
      allow: gatedWrite(apiUrl, organization.token, 'allow', { workflowIds: workflowIds.allow }),
      review: gatedWrite(apiUrl, organization.token, 'review', { workflowIds: workflowIds.review, reviewIds: held }),
      approve: approveHeld(apiUrl, organization.reviewerToken, held),
      deny: gatedWrite(apiUrl, organization.token, 'deny', { workflowIds: workflowIds.deny }),
      floor: floor.operation('floor', 'floor', workflowIds.floor),
      floorLocal: floor.operation('floor with a local activity', 'floorLocal', workflowIds.floorLocal),
      fairFloor: floor.operation('fair floor', 'fairFloor', workflowIds.fairFloor),
      fairFloorLocal: floor.operation('fair floor with a local activity', 'fairFloorLocal', workflowIds.fairFloorLocal),
      insert: plainInsert(pool, organization.orgId),
    };
    const provingIds: string[] = [];
    await provePolling(gatedWrite(apiUrl, organization.token, 'allow', { workflowIds: provingIds }), services);
    // The fair floors carry what this Allow carried through Temporal.
    const fairSample = await floor.useGatedAllow(provingIds.at(-1)!);
    const fairFloor = {
      inputBytes: fairSample.inputBytes,
      answerBytes: fairSample.answerBytes,
      searchAttributes: fairSample.searchAttributes.map(({ key }) => key.name),
      sampleWorkflowId: provingIds.at(-1)!,
    };
    log(`api healthy and worker polling after ${((Date.now() - started) / 1000).toFixed(1)} s; measuring ${warmup} + ${samples} rounds…`);

    const progress = (what: string, check?: () => void) => {
      let lastShown = 0;
      return (done: number, total: number) => {
        check?.();
        if (done === total || Date.now() - lastShown > 5000) {
          lastShown = Date.now();
          log(`${what}: ${done}/${total} rounds`);
        }
      };
    };
    const measured = await runRounds(operations, { samples, warmup, aborted: interrupted, onProgress: progress('gated writes') });

    log(`reading back the histories of ${historiesPerKind} workflows of each kind…`);
    const histories = {
      allow: await historyShapes(floor.client, workflowIds.allow.slice(-historiesPerKind)),
      reviewApproved: await historyShapes(floor.client, workflowIds.review.slice(-historiesPerKind)),
      deny: await historyShapes(floor.client, workflowIds.deny.slice(-historiesPerKind)),
      floor: await historyShapes(floor.client, workflowIds.floor.slice(-historiesPerKind)),
      floorLocal: await historyShapes(floor.client, workflowIds.floorLocal.slice(-historiesPerKind)),
      fairFloor: await historyShapes(floor.client, workflowIds.fairFloor.slice(-historiesPerKind)),
      fairFloorLocal: await historyShapes(floor.client, workflowIds.fairFloorLocal.slice(-historiesPerKind)),
    };

    log(`measuring the floor on the dev server's default SQLite settings beside ours, ${warmup} + ${journalSamples} rounds…`);
    const defaultJournalFloor = await startFloor(defaultJournalTemporal.address, 'bench-floor');
    floors.push(defaultJournalFloor);
    const journals = await runRounds(
      { wal: floor.operation('floor (journal_mode=wal)', 'floor'), defaultJournal: defaultJournalFloor.operation('floor (default journal)', 'floor') },
      { samples: journalSamples, warmup, alternate: true, aborted: interrupted, onProgress: progress('SQLite settings') },
    );
    await defaultJournalFloor.close();
    floors.pop();
    await defaultJournalTemporal.stop();
    defaultJournalTemporal = undefined;

    const measuredProcesses: Measured[] = [
      { name: 'api', pid: services[0]!.pid },
      { name: 'worker', pid: services[1]!.pid },
      { name: 'temporal', pid: temporal.pid },
      { name: 'bench', self: true },
    ];
    const windows: Window[] = [];
    let sequence = throughputFirstSequence;
    const throughputOperations = {
      allow: gatedWrite(apiUrl, organization.token, 'allow'),
      floor: floor.operation('floor', 'floor'),
      floorLocal: floor.operation('floor with a local activity', 'floorLocal'),
      fairFloor: floor.operation('fair floor', 'fairFloor'),
      fairFloorLocal: floor.operation('fair floor with a local activity', 'fairFloorLocal'),
    };
    log(`measuring throughput at ${writerLevels.join(', ')} writers, ${throughputRepeats} × ${throughputSeconds} s windows of each kind…`);
    for (let repeat = 0; repeat < throughputRepeats; repeat++) {
      for (const writers of writerLevels) {
        const order = (repeat + writers) % 2 === 0 ? throughputKinds : [...throughputKinds].reverse();
        for (const kind of order) {
          if (interrupted()) throw new Error('interrupted');
          for (const service of services) service.assertRunning();
          const window = await runWindow(kind, throughputOperations[kind], { writers, seconds: throughputSeconds, firstSequence: sequence, processes: measuredProcesses });
          sequence += window.writes + window.errors + writers;
          windows.push(window);
          log(`throughput: ${kind} × ${writers}: ${(window.writes / window.seconds).toFixed(1)} writes/s, ${window.errors} errors`);
        }
      }
    }

    // Reads come after the writes, so the writes' figures stay those of an organization without data.
    log('seeding the bench organization with the large demo data…');
    const seed = await seedLarge(database.url, organization);
    log(`seeded in ${seed.seconds.toFixed(1)} s (VACUUM ANALYZE ${seed.vacuumAnalyzeSeconds.toFixed(1)} s); checking the search terms…`);
    const searchMatches = await countSearchMatches(pool, organization.orgId);
    const reads: Record<ReadKind, Operation> = {
      search: customerSearch(apiUrl, organization.token),
      taskPage: taskListPage(apiUrl, organization.token),
    };
    log(`measuring reads alone, ${warmup} + ${readSamples} rounds…`);
    const alone = await runRounds(reads, { samples: readSamples, warmup, aborted: interrupted, onProgress: progress('reads alone') });

    log(`starting ${writeLoadConcurrency} loops of gated writes, then measuring the same reads under that load…`);
    const load = startWriteLoad(apiUrl, organization.token, writeLoadConcurrency, writeLoadFirstSequence);
    let underLoad;
    let loadResult;
    try {
      await load.rampedUp(writeLoadRampUp, 60_000);
      load.openWindow();
      underLoad = await runRounds(reads, {
        samples: readSamples,
        warmup,
        aborted: interrupted,
        onProgress: progress('reads under write load', () => {
          load.assertFlowing(15_000);
          for (const service of services) service.assertRunning();
        }),
      });
      load.closeWindow();
    } finally {
      loadResult = await load.stop();
    }
    log(`write load stopped: ${loadResult.writesInWindow} writes in the window, ${loadResult.errors} errors`);

    // Last, so the phases above run as before; the organization still holds the large seed.
    log(`connecting an MCP client, then measuring MCP tool calls beside their REST twins, ${warmup} + ${mcpSamples} rounds…`);
    const mcpClient = await connectBenchMcp(apiUrl, organization.token);
    let mcp: RoundsResult<McpKind>;
    try {
      const pairs = mcpOperations(mcpClient, apiUrl, organization.token, mcpFirstSequence);
      const rounds = <K extends McpKind>(operations: Record<K, Operation>, label: string) =>
        runRounds(operations, {
          samples: mcpSamples,
          warmup,
          alternate: true,
          aborted: interrupted,
          onProgress: progress(label, () => {
            for (const service of services) service.assertRunning();
          }),
        });
      const [read, write] = [await rounds(pairs.read, 'MCP and REST reads'), await rounds(pairs.write, 'MCP and REST writes')];
      mcp = { samples: { ...read.samples, ...write.samples }, checked: { ...read.checked, ...write.checked } };
    } finally {
      await mcpClient.close().catch(() => {});
    }

    // The same read, alternately on the api that counts (limits on, as always) and on the one that does not.
    await waitForHealth(limitsOffUrl, services, 60_000);
    log(`measuring GET /api/v1/tasks?limit=50 with limits on and off, ${warmup} + ${limitSamples} rounds…`);
    const limits = await runRounds(limitOperations(apiUrl, limitsOffUrl, organization.token), {
      samples: limitSamples,
      warmup,
      alternate: true,
      aborted: interrupted,
      onProgress: progress('limits on and off', () => {
        for (const service of services) service.assertRunning();
      }),
    });

    // Last: two more api + worker pairs on the same database and Temporal, started together now (so the phases above
    // run as before, with no other worker polling beside them), each on a task queue of its own: one plain, one with
    // a key made for this run, so that every payload it hands Temporal is encrypted. Both fresh, so that they differ
    // by the key alone; their metrics on ports of their own.
    const pairs = { plain: { port: await freePort(), taskQueue: plainTaskQueue, keys: {} }, encrypted: { port: await freePort(), taskQueue: encryptedTaskQueue, keys: { PAYLOAD_ENCRYPTION_KEYS: formatPayloadKeys([newPayloadKey('bench')]) } } };
    for (const [kind, pair] of Object.entries(pairs)) {
      log(`starting an api on port ${pair.port} and a worker on task queue ${pair.taskQueue} (${kind} payloads)…`);
      const pairEnv = { ...env, PORT: String(pair.port), TEMPORAL_TASK_QUEUE: pair.taskQueue, ...pair.keys };
      services.push(startService('api', { ...pairEnv, METRICS_PORT: String(await freePort()) }, `api (${kind})`));
      services.push(startService('worker', { ...pairEnv, METRICS_PORT: String(await freePort()), TEMPORAL_METRICS_PORT: String(await freePort()) }, `worker (${kind})`));
    }
    const [plainUrl, encryptedUrl] = [`http://127.0.0.1:${pairs.plain.port}`, `http://127.0.0.1:${pairs.encrypted.port}`];
    await waitForHealth(plainUrl, services, 60_000);
    await waitForHealth(encryptedUrl, services, 60_000);
    const encryptionWorkflowIds = { plain: [] as string[], encrypted: [] as string[] };
    const encryptionPairs = encryptionOperations(organization.token, {
      plain: { apiUrl: plainUrl, firstSequence: encryptionPlainFirstSequence, workflowIds: encryptionWorkflowIds.plain },
      encrypted: { apiUrl: encryptedUrl, firstSequence: encryptionEncryptedFirstSequence, workflowIds: encryptionWorkflowIds.encrypted },
    });
    await provePolling(encryptionPairs.plain, services);
    await provePolling(encryptionPairs.encrypted, services);
    // Read back through the floor's client, which has no codec: the payloads as Temporal stores them.
    await checkPayloadEncodings(floor.client, { plain: encryptionWorkflowIds.plain.at(-1), encrypted: encryptionWorkflowIds.encrypted.at(-1) });
    log(`the encrypted pair answers and stores ciphertext; measuring gated Allow writes, plain and encrypted, ${warmup} + ${encryptionSamples} rounds…`);
    const encryption = await runRounds(encryptionPairs, {
      samples: encryptionSamples,
      warmup,
      alternate: true,
      aborted: interrupted,
      onProgress: progress('plain and encrypted writes', () => {
        for (const service of services) service.assertRunning();
      }),
    });
    // Once more on the last write of each, so the figures are known to be those of what they say.
    const payloadEncodings = await checkPayloadEncodings(floor.client, {
      plain: encryptionWorkflowIds.plain.at(-1),
      encrypted: encryptionWorkflowIds.encrypted.at(-1),
    });
    log('measuring the codec alone, in this process…');
    const codec = await codecMicroseconds(floor.client, encryptionWorkflowIds.plain.at(-1)!);

    const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
    const report = await buildReport(measured, {
      samples,
      warmup,
      histories,
      fairFloor,
      journals: { samples: journalSamples, warmup, measured: journals },
      throughput: { seconds: throughputSeconds, repeats: throughputRepeats, windows },
      temporalCli: cliPath,
      postgresVersion: rows[0]?.server_version ?? 'unknown',
      reads: { samples: readSamples, warmup, seed, searchMatches, alone, underLoad, load: loadResult },
      mcp: { samples: mcpSamples, warmup, measured: mcp },
      limits: { samples: limitSamples, warmup, measured: limits },
      encryption: { samples: encryptionSamples, warmup, measured: encryption, payloadEncodings, taskQueues: pairs, codec },
    });
    process.stdout.write(`\n${printableReport(report)}\n\n`);
    writeReport(report, resultsPath);
    log(`wrote ${resultsPath} (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
  } finally {
    // Each step runs even when an earlier one fails.
    const steps: Parameters<typeof cleanUp>[0] = [
      ['stopping the floor workers', async () => void (await Promise.all(floors.map((floor) => floor.close())))],
      ['stopping the apis and the workers', async () => void (await Promise.all(services.map((service) => service.stop())))],
      ['closing the insert pool', () => pool?.end()],
      ['stopping the Temporal dev server', () => temporal?.stop()],
      ['stopping the second Temporal dev server', () => defaultJournalTemporal?.stop()],
      ['dropping the database', () => database?.drop()],
      ['removing the data folder', async () => rmSync(dataDir, { recursive: true, force: true })],
    ];
    await cleanUp(steps, log);
  }
}

/**
 * What every run of the bench with Temporal needs first: the CLI, Temporal's runtime in this process (the floors'
 * workers run here; it logs warnings and worse only), and Ctrl-C noted, so the run stops and cleans up.
 */
async function benchStart(): Promise<{ cliPath: string; interrupted: () => boolean }> {
  const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!cliPath) throw new Error('the benchmark needs the Temporal CLI: install Go, or set TEMPORAL_CLI to the binary');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    log('interrupted; cleaning up…');
  });
  return { cliPath, interrupted: () => interrupted };
}

/** `--tuning`: each of the settings alone against the settings before them (bench/tuning.ts). */
async function tuning(): Promise<void> {
  const { samples, warmup, throughputSeconds, throughputRepeats } = options();
  const { cliPath, interrupted } = await benchStart();
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-tuning-'));
  const database = await createScratchDatabase('bench', process.env.BENCH_DATABASE_ADMIN_URL);
  const started = Date.now();
  try {
    const organization = await createBenchOrganization(database.url);
    const report = await measureTuning({
      databaseUrl: database.url,
      dataDir,
      cliPath,
      token: organization.token,
      samples,
      warmup,
      throughputSeconds,
      throughputRepeats,
      log,
      aborted: interrupted,
    });
    const written = { date: new Date().toISOString(), machine: await machineOf(cliPath), tuning: report };
    process.stdout.write(`\n${printableTuning(report)}\n\n`);
    writeJson(written, tuningResultsPath);
    log(`wrote ${tuningResultsPath} (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
  } finally {
    await database.drop().catch((error: Error) => log(`dropping the database failed: ${error.message}`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `--size`: the review queue, the audit trail and the call log at the sizes of a year of use (bench/size/). */
async function size(settings: NonNullable<ReturnType<typeof options>['size']>, warmup: number): Promise<void> {
  const started = Date.now();
  const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL;
  const { callLogSizes, ...queueAndAudit } = settings;
  // One after the other, each on a scratch database of its own: the call log's seeding is the longest part.
  const { queue, audit } = await measureQueueAndAuditAtSize({ adminUrl, ...queueAndAudit, warmup, log });
  const { callLog, retention } = await measureCallLogAtSize({ adminUrl, sizes: callLogSizes, samples: settings.samples, warmup, log });
  const result = { date: new Date().toISOString(), machine: await machineOf(), settings: { ...settings, warmup }, size: { queue, audit, callLog, retention } };
  writeJson(result, sizeResultsPath);
  process.stdout.write(`\n${printableSize(result.size)}\n\n`);
  log(`wrote ${sizeResultsPath} (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
}

/** `--soak`: half an hour of mixed load at stated rates, memory and event-loop delay sampled (bench/soak.ts). */
async function soak(settings: Omit<SoakOptions, 'log'>): Promise<void> {
  const controller = new AbortController();
  process.once('SIGINT', () => {
    log('interrupted; stopping the load…');
    controller.abort();
  });
  const started = Date.now();
  const result = await runSoak({ ...settings, adminUrl: process.env.BENCH_DATABASE_ADMIN_URL, log, signal: controller.signal });
  process.stdout.write(`\n${printableSoak(result)}\n\n`);
  writeJson(result, soakResultsPath);
  log(`wrote ${soakResultsPath} (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
}

/** A gated write answers 201 only once a worker polls the task queue; until then it waits or answers 503. */
async function provePolling(allow: Operation, services: Service[]): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (let attempt = 0; ; attempt++) {
    for (const service of services) service.assertRunning();
    try {
      await allow(-1 - attempt);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no gated write answered 201 within 90 s: ${(error as Error).message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
