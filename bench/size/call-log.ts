// The call log at size: one organization's log grown to each size (a year of calls over several keys, REST and
// MCP, every outcome), and at each the Agent Command Center's reads of it, timed over the console's API and every
// answer checked against the model of what was seeded; after the largest, the retention prune of that year.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { connectDatabase } from '../../db/database';
import type { ScratchDatabase } from '../../db/scratch-database';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization, updateOrganization } from '../../domain/identity/organizations';
import { createUser } from '../../domain/identity/people';
import { startSession } from '../../domain/identity/sessions';
import { loadConfig } from '../../runtime/config';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { freePort, type TemporalDevServer } from '../../runtime/temporal-dev-server';
import { runRounds } from '../measure';
import { benchPlan, createBenchOrganization } from '../organization';
import { cleanUp, startDatabaseAndTemporal, startService, waitForHealth, type Service } from '../services';
import { round, summarize, type Summary } from '../stats';
import { pruneAt, type PruneRun } from './call-log-retention';
import { CallLogModel, insertRows, keyLabels, type SeedContext } from './call-log-rows';
import { commandCenterOperations, commandCenterReads, keptPerFilter, listFilters, type CommandCenterRead } from './command-center';

/** The read whose ratio is the phase's headline: what the page asks of the call log when it opens. */
export const mainRead: CommandCenterRead = 'pageOpen';
/** The organization's zone: Berlin has daylight saving time, and its days begin on the hour of UTC. */
const timezone = 'Europe/Berlin';

export interface CallLogSizeRun {
  rows: number;
  /** Wall time of seeding the rows added for this size (INSERT … SELECT generate_series), and of the VACUUM ANALYZE after. */
  seedSeconds: number;
  vacuumAnalyzeSeconds: number;
  /** Milliseconds per read, warm-up left out. */
  reads: Record<CommandCenterRead, Summary>;
  /** The same reads of the reference organization (the smallest size), in the same rounds, turn about. */
  referenceReads: Record<CommandCenterRead, Summary>;
  /** Each read's p50 over the reference's, measured in the same rounds: about 1 at the smallest size. */
  p50RatiosOverReference: Record<CommandCenterRead, number>;
  /** Answers checked, warm-up included, the reference's too. */
  checked: Record<string, number>;
}

export interface CallLogSizeResult {
  sizes: number[];
  mainRead: CommandCenterRead;
  mainReadIs: string;
  /**
   * The main read's p50 at the largest size over its p50 at the smallest, both measured in the same rounds (the
   * reference organization holds the smallest size throughout); named for the default sizes, 10M and 100k.
   */
  p50Ratio10mOver100k: number;
  /** Each read's p50 at the largest size over the reference's in the same rounds. */
  p50RatiosLargestOverSmallest: Record<CommandCenterRead, number>;
  /** The same ratios from the runs one after the other (the largest size's run over the smallest's), which load on a shared machine can move. */
  p50RatiosSequential: Record<CommandCenterRead, number>;
  runs: CallLogSizeRun[];
}

export interface RetentionSizeResult {
  /** Call log rows before the prune: a year of calls, the largest size and the reference organization's. */
  rows: number;
  retentionDays: number;
  /** The first prune of the year, down to the retention. */
  backlog: PruneRun;
  rowsPerSecond: number;
  /** The hourly prune after it (an hour later): what the schedule removes each hour at this size. */
  hourly: PruneRun;
}

export interface CallLogSizeOptions {
  adminUrl?: string;
  sizes: number[];
  samples: number;
  warmup: number;
  log: (line: string) => void;
}

const ratio = (a: number, b: number) => round(a / b, 3);

export async function measureCallLogAtSize(options: CallLogSizeOptions): Promise<{ callLog: CallLogSizeResult; retention: RetentionSizeResult }> {
  const { sizes, samples, warmup, log } = options;
  if (sizes.length === 0 || sizes.some((size, index) => !Number.isInteger(size) || size < 1 || (index > 0 && size <= sizes[index - 1]!))) {
    throw new Error(`sizes must be growing positive integers, not ${sizes.join(', ')}`);
  }
  const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!cliPath) throw new Error('the api needs a Temporal server: install Go, or set TEMPORAL_CLI to the binary');
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-size-calls-'));
  let database: ScratchDatabase | undefined;
  let temporal: TemporalDevServer | undefined;
  const services: Service[] = [];
  let pool: pg.Pool | undefined;
  try {
    // The api connects to Temporal on start (it serves gated writes); these reads never reach it, so no worker runs.
    ({ database, temporal } = await startDatabaseAndTemporal('size_calls', { adminUrl: options.adminUrl, cliPath, dbFile: join(dataDir, 'temporal.db') }));

    // The organization that grows, and a reference one seeded once at the smallest size: each size's reads are
    // measured in the same rounds as the reference's, turn about, so their ratio holds when the machine's load moves.
    const seeded = await prepareOrganization(database.url);
    const reference = await prepareOrganization(database.url, seeded);
    const port = await freePort();
    const apiUrl = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: apiUrl, LOG_LEVEL: 'warn', GATEHOUSE_DATA_DIR: dataDir };
    services.push(startService('api', env));
    await waitForHealth(apiUrl, services, 60_000, 'healthz');
    pool = new pg.Pool({ connectionString: database.url, max: 2 });

    const runs: CallLogSizeRun[] = [];
    let seededRows = 0;
    log(`call log: seeding the reference organization with ${sizes[0]!.toLocaleString('en')} rows…`);
    await insertRows(pool, reference, 0, sizes[0]!, log);
    const referenceModel = new CallLogModel(sizes[0]!, reference.anchorMs, listFilters, keptPerFilter);
    for (const size of sizes) {
      log(`call log: growing to ${size.toLocaleString('en')} rows…`);
      const seedSeconds = await insertRows(pool, seeded, seededRows, size, log);
      seededRows = size;
      const vacuumStarted = performance.now();
      await pool.query('VACUUM ANALYZE call_log');
      const vacuumAnalyzeSeconds = (performance.now() - vacuumStarted) / 1000;
      const modelStarted = performance.now();
      const model = new CallLogModel(size, seeded.anchorMs, listFilters, keptPerFilter);
      log(`call log: ${size.toLocaleString('en')} rows in ${seedSeconds.toFixed(1)} s + VACUUM ANALYZE ${vacuumAnalyzeSeconds.toFixed(1)} s; answers modelled in ${((performance.now() - modelStarted) / 1000).toFixed(1)} s; measuring ${warmup} + ${samples} rounds…`);
      // A fresh session per size: seeding the largest may outlast the api's idle timeout.
      const [cookie, referenceCookie] = [await sessionCookie(database.url, seeded), await sessionCookie(database.url, reference)];
      const measuredReads = commandCenterOperations({ apiUrl, cookie, keyIds: seeded.keyIds, timezone, model, pool });
      const referenceReads = commandCenterOperations({ apiUrl, cookie: referenceCookie, keyIds: reference.keyIds, timezone, model: referenceModel, pool });
      const operations = Object.fromEntries(commandCenterReads.flatMap((read) => [[read, measuredReads[read]], [`reference ${read}`, referenceReads[read]]]));
      let lastShown = Date.now();
      const measured = await runRounds(operations, {
        samples,
        warmup,
        alternate: true,
        onProgress: (done, total) => {
          for (const service of services) service.assertRunning();
          if (done === total || Date.now() - lastShown > 10_000) {
            lastShown = Date.now();
            log(`call log at ${size.toLocaleString('en')}: ${done}/${total} rounds`);
          }
        },
      });
      const summaries = (prefix: string) =>
        Object.fromEntries(commandCenterReads.map((read) => [read, summarize(measured.samples[`${prefix}${read}`]!)])) as Record<CommandCenterRead, Summary>;
      const [reads, referenceSummaries] = [summaries(''), summaries('reference ')];
      const p50RatiosOverReference = Object.fromEntries(
        commandCenterReads.map((read) => [read, ratio(reads[read].p50, referenceSummaries[read].p50)]),
      ) as Record<CommandCenterRead, number>;
      runs.push({
        rows: size,
        seedSeconds: round(seedSeconds, 1),
        vacuumAnalyzeSeconds: round(vacuumAnalyzeSeconds, 1),
        reads,
        referenceReads: referenceSummaries,
        p50RatiosOverReference,
        checked: measured.checked,
      });
      log(`call log at ${size.toLocaleString('en')}: ${commandCenterReads.map((read) => `${read} ${reads[read].p50.toFixed(1)} (${p50RatiosOverReference[read]}×)`).join(', ')} ms p50 (× the reference's)`);
    }

    const [smallest, largest] = [runs[0]!, runs.at(-1)!];
    const p50RatiosSequential = Object.fromEntries(
      commandCenterReads.map((read) => [read, ratio(largest.reads[read].p50, smallest.reads[read].p50)]),
    ) as Record<CommandCenterRead, number>;
    const p50RatiosLargestOverSmallest = largest.p50RatiosOverReference;
    const callLog: CallLogSizeResult = {
      sizes,
      mainRead,
      mainReadIs: "the Agents page's reads of the call log as it opens them, at once: the agents of the day (agents.list), the newest calls, the last 24 hours' chart, then the busiest key's run",
      p50Ratio10mOver100k: p50RatiosLargestOverSmallest[mainRead],
      p50RatiosLargestOverSmallest,
      p50RatiosSequential,
      runs,
    };

    const retentionMs = loadConfig({ DATABASE_URL: database.url }).retention.callLogMs;
    if (retentionMs === undefined) throw new Error('the default call log retention keeps everything');
    log(`retention: pruning ${(seededRows + sizes[0]!).toLocaleString('en')} rows of a year down to ${retentionMs / 86_400_000} days…`);
    const db = connectDatabase(database.url, { maxConnections: 2 });
    try {
      const seededLog = [{ ...seeded, size: seededRows }, { ...reference, size: sizes[0]! }];
      const backlog = await pruneAt(db, pool, seededLog, retentionMs, Date.now());
      log(`retention: ${backlog.pruned.callLog.toLocaleString('en')} rows in ${backlog.seconds.toFixed(1)} s (${Math.round(backlog.rowsPerSecond).toLocaleString('en')} rows/s); the hour after…`);
      const hourly = await pruneAt(db, pool, seededLog, retentionMs, Date.parse(backlog.at) + 60 * 60 * 1000, Date.parse(backlog.cutoff));
      log(`retention: the hour after, ${hourly.pruned.callLog.toLocaleString('en')} rows in ${(hourly.seconds * 1000).toFixed(0)} ms`);
      return {
        callLog,
        retention: { rows: seededRows + sizes[0]!, retentionDays: retentionMs / 86_400_000, backlog, rowsPerSecond: round(backlog.rowsPerSecond, 0), hourly },
      };
    } finally {
      await db.close();
    }
  } finally {
    await cleanUp(
      [
        ['closing the pool', () => pool?.end()],
        ['stopping the api', async () => void (await Promise.all(services.map((service) => service.stop())))],
        ['stopping the Temporal dev server', () => temporal?.stop()],
        ['dropping the database', () => database?.drop()],
        ['removing the data folder', async () => rmSync(dataDir, { recursive: true, force: true })],
      ],
      log,
    );
  }
}

/**
 * The bench organization in Berlin's zone with eight keys (the bench's own first) and a person; or, given the
 * first, another on the bench plan (the reference), whose rows end a few milliseconds apart from the first's.
 */
async function prepareOrganization(databaseUrl: string, first?: SeedContext): Promise<SeedContext> {
  const db = connectDatabase(databaseUrl, { maxConnections: 2 });
  try {
    const keyIds: string[] = [];
    let orgId: string;
    let slug: string;
    if (first) {
      ({ id: orgId, slug } = await createOrganization(db, { slug: `bench-reference-${Date.now().toString(36)}`, name: 'Benchmark reference', plan: benchPlan.name, timezone }));
    } else {
      ({ orgId, slug } = await createBenchOrganization(databaseUrl));
      await updateOrganization(db, slug, { timezone });
      const { rows } = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE org_id = $1', [orgId]);
      keyIds.push(rows[0]!.id);
    }
    for (const label of keyLabels.slice(keyIds.length)) keyIds.push((await createApiKey(db, { orgId, label, access: 'read_write' })).key.id);
    const person = await createUser(db, { orgId, email: `watcher@${slug}.bench`, role: 'member' });
    // Anchored a minute back, so that the newest rows are never in the api's future; the reference's ids differ.
    return { orgId, keyIds, userId: person.id, anchorMs: first ? first.anchorMs - 7 : Date.now() - 60_000 };
  } finally {
    await db.close();
  }
}

async function sessionCookie(databaseUrl: string, seeded: SeedContext): Promise<string> {
  const db = connectDatabase(databaseUrl, { maxConnections: 1 });
  try {
    const { token } = await startSession(db, { userId: seeded.userId, orgId: seeded.orgId }, { idleMs: 24 * 3_600_000, lifetimeMs: 24 * 3_600_000 });
    return `gatehouse_session=${token}`;
  } finally {
    await db.close();
  }
}
