// The size phases of the review queue and the audit trail: each size is an organization of its own in one scratch
// database, seeded by SQL with a year of use (queue-fixtures.ts, audit-fixtures.ts), then every size measured in
// the same rounds (sizes and requests interleaved), over REST and the console as people reach them, on an api
// process of its own (it needs Temporal to start, so a dev server runs beside it; nothing here writes through it).
// Every answer is checked against the database. The export and `audit verify` run whole, a few passes per size.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDatabase, type Database } from '../../db/database';
import type { ScratchDatabase } from '../../db/scratch-database';
import { startSession } from '../../domain/identity/sessions';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { freePort, type TemporalDevServer } from '../../runtime/temporal-dev-server';
import { runRounds, type Operation } from '../measure';
import { cleanUp, startDatabaseAndTemporal, startService, waitForHealth, type Service } from '../services';
import { round, summarize } from '../stats';
import { auditOperationNames, auditOperations, exportPass, verifyPass, type AuditOperationName, type Pass } from './audit-operations';
import { seedAuditTrail, type AuditSeed } from './audit-fixtures';
import { createSizeOrganization, dayMs, fixtureIds, type SizeOrganization } from './fixtures';
import { queueOperationNames, queueOperations, type QueueOperationName } from './queue-operations';
import { seedReviewQueue, type QueueSeed } from './queue-fixtures';

/** Pending reviews among the decided ones at every size: the largest plan's cap on the queue. */
export const pendingReviews = 1000;

export interface SizeQueueAuditOptions {
  /** The PostgreSQL server's admin URL (db/scratch-database.ts's default: the local server). */
  adminUrl?: string;
  /** Decided reviews of each size (default 10k, 100k, 1M), each with `pendingReviews` pending among them. */
  queueSizes: number[];
  /** Audit events of each size (default 10k, 100k, 1M). */
  auditSizes: number[];
  /** Timed rounds of every request at every size, after `warmup` untimed ones. */
  samples: number;
  warmup: number;
  /** Whole exports and verifications per size (default 3), sizes interleaved. */
  passes?: number;
  log: (line: string) => void;
}

/** One request's latency at one size (ms). */
export interface Figures {
  p50: number;
  p99: number;
  n: number;
}

/** A ratio of the largest size's figure to a smaller size's, with the sizes it compares. */
export interface SizeRatio {
  value: number;
  of: number;
  over: number;
}

export interface QueueSizeResult {
  pending: number;
  sizes: Array<{ decided: number; seed: QueueSeed; operations: Record<QueueOperationName, Figures> }>;
  /** The main list's (pending, first page) p50 at the largest size ÷ at the smallest: the target is ≤ 1.3. */
  p50Ratio1mOver10k: number;
  /** Every request's p50 at the largest size ÷ at the smallest. */
  p50Ratios: Record<QueueOperationName, SizeRatio>;
}

export interface PassFigures {
  passes: Pass[];
  /** The median pass's events per second. */
  eventsPerSecond: number;
}

export interface AuditSizeResult {
  sizes: Array<{ events: number; seed: AuditSeed; operations: Record<AuditOperationName, Figures>; export: PassFigures; verify: PassFigures }>;
  /** The trail's first page p50 at the largest size ÷ at the smallest: the target is ≤ 1.3. */
  p50Ratio1mOver10k: number;
  p50Ratios: Record<AuditOperationName, SizeRatio>;
  /** Export and verify events/s at the largest size ÷ at the next smaller one: the target is ≥ 0.8. */
  exportRatio1mOver100k: number;
  verifyRatio1mOver100k: number;
  exportRatio: SizeRatio;
  verifyRatio: SizeRatio;
}

const consoleSessionRules = { idleMs: dayMs, lifetimeMs: dayMs };

export async function measureQueueAndAuditAtSize(options: SizeQueueAuditOptions): Promise<{ queue: QueueSizeResult; audit: AuditSizeResult }> {
  const { queueSizes, auditSizes, samples, warmup, log } = options;
  const passes = options.passes ?? 3;
  for (const [name, sizes] of [['queueSizes', queueSizes], ['auditSizes', auditSizes]] as const) {
    if (sizes.length < 2 || sizes.length > 5 || sizes.some((size, index) => !Number.isInteger(size) || size < 1000 || (index > 0 && size <= sizes[index - 1]!))) {
      throw new Error(`${name} must be 2 to 5 sizes of at least 1,000, growing: ${sizes.join(', ')}`);
    }
  }
  const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!cliPath) throw new Error('the size phases need the Temporal CLI (the api connects to Temporal as it starts): install Go, or set TEMPORAL_CLI');

  let database: ScratchDatabase | undefined;
  let temporal: TemporalDevServer | undefined;
  let db: Database | undefined;
  let api: Service | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-size-'));
  try {
    log('creating the database and starting the Temporal dev server…');
    ({ database, temporal } = await startDatabaseAndTemporal('size', { adminUrl: options.adminUrl, cliPath, dbFile: join(dataDir, 'temporal.db') }));
    db = connectDatabase(database.url, { maxConnections: 2 });

    // Organizations 0–4 hold the queues, 5–9 the trails (their seeded ids differ by that digit).
    const queues: Array<{ decided: number; organization: SizeOrganization; seed: QueueSeed; sessionCookie: string }> = [];
    for (const [index, decided] of queueSizes.entries()) {
      const organization = await createSizeOrganization(db);
      log(`seeding ${decided.toLocaleString('en')} decided and ${pendingReviews} pending reviews…`);
      const seed = await seedReviewQueue(db, organization, fixtureIds(index), { decided, pending: pendingReviews });
      log(`seeded in ${seed.seconds.toFixed(1)} s (VACUUM ANALYZE ${seed.vacuumAnalyzeSeconds.toFixed(1)} s)`);
      const { token } = await startSession(db, { userId: organization.reviewerId, orgId: organization.orgId }, consoleSessionRules);
      queues.push({ decided, organization, seed, sessionCookie: `gatehouse_session=${token}` });
    }
    const trails: Array<{ events: number; organization: SizeOrganization; seed: AuditSeed }> = [];
    for (const [index, events] of auditSizes.entries()) {
      const organization = await createSizeOrganization(db);
      log(`seeding ${events.toLocaleString('en')} audit events, chained…`);
      const seed = await seedAuditTrail(db, organization, fixtureIds(5 + index), events);
      log(`seeded in ${seed.seconds.toFixed(1)} s (VACUUM ANALYZE ${seed.vacuumAnalyzeSeconds.toFixed(1)} s)`);
      trails.push({ events, organization, seed });
    }

    const port = await freePort();
    const apiUrl = `http://127.0.0.1:${port}`;
    api = startService('api', {
      DATABASE_URL: database!.url,
      TEMPORAL_ADDRESS: temporal!.address,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: apiUrl,
      LOG_LEVEL: 'warn',
      GATEHOUSE_DATA_DIR: dataDir,
    });
    await waitForHealth(apiUrl, [api], 60_000, 'healthz');

    log('working out the answers every request must give…');
    const operations: Record<string, Operation> = {};
    for (const queue of queues) {
      const requests = await queueOperations(db, queue.organization, { apiUrl, sessionCookie: queue.sessionCookie }, { decided: queue.decided, pending: pendingReviews });
      for (const name of queueOperationNames) operations[`queue ${queue.decided} ${name}`] = requests[name];
    }
    for (const trail of trails) {
      const requests = await auditOperations(db, trail.organization, apiUrl, trail.seed.chained);
      for (const name of auditOperationNames) operations[`audit ${trail.events} ${name}`] = requests[name];
    }
    const requestCount = Object.keys(operations).length;
    log(`measuring ${requestCount} requests (every size), ${warmup} + ${samples} rounds…`);
    let lastShown = Date.now();
    const measured = await runRounds(operations, {
      samples,
      warmup,
      alternate: true,
      onProgress: (done, total) => {
        api!.assertRunning();
        if (done === total || Date.now() - lastShown > 10_000) {
          lastShown = Date.now();
          log(`size requests: ${done}/${total} rounds`);
        }
      },
    });
    const figures = (key: string): Figures => {
      const summary = summarize(measured.samples[key]!);
      return { p50: round(summary.p50), p99: round(summary.p99), n: summary.n };
    };

    log(`exporting and verifying every trail whole, ${passes} passes…`);
    const exports = trails.map(() => [] as Pass[]);
    const verifications = trails.map(() => [] as Pass[]);
    for (let pass = 0; pass < passes; pass++) {
      const order = pass % 2 === 0 ? trails.map((_, index) => index) : trails.map((_, index) => trails.length - 1 - index);
      for (const index of order) {
        const trail = trails[index]!;
        exports[index]!.push(await exportPass(db, trail.organization, trail.seed.chained));
        verifications[index]!.push(await verifyPass(db, trail.organization, trail.seed.chained));
        log(`pass ${pass + 1}: ${trail.events.toLocaleString('en')} events: export ${exports[index]!.at(-1)!.seconds.toFixed(2)} s, verify ${verifications[index]!.at(-1)!.seconds.toFixed(2)} s`);
      }
    }

    const queueSizesResult = queues.map((queue) => ({
      decided: queue.decided,
      seed: queue.seed,
      operations: Object.fromEntries(queueOperationNames.map((name) => [name, figures(`queue ${queue.decided} ${name}`)])) as Record<QueueOperationName, Figures>,
    }));
    const auditSizesResult = trails.map((trail, index) => ({
      events: trail.events,
      seed: trail.seed,
      operations: Object.fromEntries(auditOperationNames.map((name) => [name, figures(`audit ${trail.events} ${name}`)])) as Record<AuditOperationName, Figures>,
      export: passFigures(exports[index]!),
      verify: passFigures(verifications[index]!),
    }));
    const queueRatios = p50Ratios(queueOperationNames, queueSizesResult.map((size) => ({ size: size.decided, operations: size.operations })));
    const auditRatios = p50Ratios(auditOperationNames, auditSizesResult.map((size) => ({ size: size.events, operations: size.operations })));
    const [largest, nextSmaller] = [auditSizesResult.at(-1)!, auditSizesResult.at(-2)!];
    const throughputRatio = (what: 'export' | 'verify'): SizeRatio => ({
      value: round(largest[what].eventsPerSecond / nextSmaller[what].eventsPerSecond),
      of: largest.events,
      over: nextSmaller.events,
    });
    const exportRatio = throughputRatio('export');
    const verifyRatio = throughputRatio('verify');
    return {
      queue: { pending: pendingReviews, sizes: queueSizesResult, p50Ratio1mOver10k: queueRatios.pendingFirst.value, p50Ratios: queueRatios },
      audit: {
        sizes: auditSizesResult,
        p50Ratio1mOver10k: auditRatios.first.value,
        p50Ratios: auditRatios,
        exportRatio1mOver100k: exportRatio.value,
        verifyRatio1mOver100k: verifyRatio.value,
        exportRatio,
        verifyRatio,
      },
    };
  } finally {
    const steps: Parameters<typeof cleanUp>[0] = [
      ['stopping the api', () => api?.stop()],
      ['closing the database pool', () => db?.close()],
      ['stopping the Temporal dev server', () => temporal?.stop()],
      ['dropping the database', () => database?.drop()],
      ['removing the data folder', async () => rmSync(dataDir, { recursive: true, force: true })],
    ];
    await cleanUp(steps, log);
  }
}

function passFigures(passes: Pass[]): PassFigures {
  const rates = passes.map((pass) => pass.events / pass.seconds).sort((a, b) => a - b);
  return { passes: passes.map((pass) => ({ seconds: round(pass.seconds), events: pass.events })), eventsPerSecond: round(rates[Math.floor((rates.length - 1) / 2)]!, 1) };
}

function p50Ratios<Name extends string>(names: readonly Name[], sizes: Array<{ size: number; operations: Record<Name, Figures> }>): Record<Name, SizeRatio> {
  const [smallest, largest] = [sizes[0]!, sizes.at(-1)!];
  return Object.fromEntries(
    names.map((name) => [name, { value: round(largest.operations[name].p50 / smallest.operations[name].p50), of: largest.size, over: smallest.size }]),
  ) as Record<Name, SizeRatio>;
}
