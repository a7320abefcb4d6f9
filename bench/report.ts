import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { mcpKinds, mcpPairs, type McpKind, type McpPair } from './mcp';
import { limitKinds, type LimitKind } from './limits';
import { encryptionKinds, type EncryptionKind } from './encryption';
import { fileDatabasePragmas } from '../runtime/temporal-dev-server';
import type { historyShapes } from './history';
import { kinds, type Kind, type RoundsResult } from './measure';
import { combine, throughputKinds, writerLevels, type ThroughputKind, type ThroughputResult, type Window } from './throughput';
import { readKinds, taskPagesPerWalk, type ReadKind, type SeedResult, type WriteLoadResult } from './reads';
import { formatTable, round, summarize, type Summary } from './stats';
import type { TuningReport } from './tuning';

const labels: Record<Kind, string> = {
  allow: 'gated write, Allow (201)',
  review: 'gated write, Review (202)',
  approve: 'approve → applied (200, record written)',
  deny: 'gated write, Deny (403)',
  floor: "Temporal's floor (update-with-start, no activity)",
  floorLocal: 'the floor + one local activity that does nothing',
  fairFloor: "the fair floor (a gated Allow's payloads and search attributes)",
  fairFloorLocal: 'the fair floor + an empty local activity',
  insert: 'plain INSERT (pg Pool)',
};

const throughputLabels: Record<ThroughputKind, string> = {
  allow: 'gated Allow (REST POST task)',
  floor: "Temporal's floor",
  floorLocal: 'the floor + an empty local activity',
  fairFloor: 'the fair floor',
  fairFloorLocal: 'the fair floor + an empty local activity',
};

/** What run.ts read back from the histories of the rounds' workflows. */
export type Histories = Record<'allow' | 'reviewApproved' | 'deny' | 'floor' | 'floorLocal' | 'fairFloor' | 'fairFloorLocal', Awaited<ReturnType<typeof historyShapes>>>;

/** The floor on the dev server's default SQLite settings and on ours, interleaved. */
export interface JournalMeasurement {
  samples: number;
  warmup: number;
  measured: RoundsResult<'wal' | 'defaultJournal'>;
}

export interface ThroughputMeasurement {
  seconds: number;
  repeats: number;
  windows: Window[];
}

const readLabels: Record<ReadKind, string> = {
  search: 'customer search (limit 50)',
  taskPage: 'task list page (todo, limit 50)',
};

const mcpLabels: Record<McpKind, string> = {
  mcpRead: 'MCP list_tasks (limit 50)',
  restRead: 'REST GET /api/v1/tasks?limit=50',
  mcpWrite: 'MCP create_task, Allow (applied)',
  restWrite: 'REST POST /api/v1/tasks, Allow (201)',
};

const mcpPairLabels: Record<McpPair, string> = {
  read: 'read: list_tasks ÷ GET tasks',
  write: 'gated write, Allow: create_task ÷ POST task',
};

const limitLabels: Record<LimitKind, string> = {
  limitsOn: 'GET /api/v1/tasks?limit=50, limits on',
  limitsOff: 'GET /api/v1/tasks?limit=50, RATE_LIMITS=off',
};

const encryptionLabels: Record<EncryptionKind, string> = {
  plain: 'gated write, Allow (201), plain payloads',
  encrypted: 'gated write, Allow (201), payloads encrypted',
};

type Result = Summary & { checked: number };

/** What run.ts measured last: the same read on an api counting every request and on one with RATE_LIMITS=off. */
export interface LimitMeasurement {
  samples: number;
  warmup: number;
  measured: RoundsResult<LimitKind>;
}

export interface LimitReport {
  samples: number;
  warmup: number;
  results: Record<LimitKind, Result>;
  /** Limits on ÷ off, p50: the figure the target names. */
  p50: number;
  /** Limits on ÷ off. */
  ratios: { p50: number; p99: number };
  /** Limits on − off, in ms. */
  addedMs: { p50: number; p99: number };
  samplesMs: Record<LimitKind, number[]>;
}

/** What run.ts measured last: the same gated Allow on the main pair (plain payloads) and on a pair that encrypts. */
export interface EncryptionMeasurement {
  samples: number;
  warmup: number;
  measured: RoundsResult<EncryptionKind>;
  /** The start input's encoding of the last workflow of each pair, as Temporal stores it (read without the codec). */
  payloadEncodings: Record<EncryptionKind, string>;
  /** The two pairs' task queues. */
  taskQueues: Record<EncryptionKind, { taskQueue: string }>;
  /** The codec alone, in the bench process: a start input's size, and µs per payload encrypted and decrypted, per round. */
  codec: { payloadBytes: number; perPayloadUs: number[] };
}

export interface EncryptionReport {
  samples: number;
  warmup: number;
  results: Record<EncryptionKind, Result>;
  /** Encrypted ÷ plain. */
  ratios: { p50: number; p99: number };
  /** Encrypted − plain, in ms. */
  addedMs: { p50: number; p99: number };
  /** What the bench checked in Temporal's history: `binary/encrypted` for the encrypted pair, not for the plain one. */
  payloadEncodings: Record<EncryptionKind, string>;
  codec: { payloadBytes: number; perPayloadUs: number[] };
  samplesMs: Record<EncryptionKind, number[]>;
}

/** What run.ts measured last: MCP tool calls through one SDK client, interleaved with their REST twins. */
export interface McpMeasurement {
  samples: number;
  warmup: number;
  measured: RoundsResult<McpKind>;
}

export interface McpReport {
  samples: number;
  warmup: number;
  results: Record<McpKind, Result>;
  /** MCP ÷ REST, per pair. */
  ratios: Record<McpPair, { p50: number; p99: number }>;
  samplesMs: Record<McpKind, number[]>;
}

/** What run.ts measured on the `large` seed: reads alone, then the same reads under a gated-write load. */
export interface ReadMeasurement {
  samples: number;
  warmup: number;
  seed: SeedResult;
  searchMatches: Record<string, number>;
  alone: RoundsResult<ReadKind>;
  underLoad: RoundsResult<ReadKind>;
  load: WriteLoadResult;
}

export interface ReadReport {
  samples: number;
  warmup: number;
  seed: { size: string; seconds: number; vacuumAnalyzeSeconds: number; counts: Record<string, number> };
  /** Customers each search term matches, of the organization's customers. */
  searchMatches: Record<string, number>;
  alone: Record<ReadKind, Result>;
  underLoad: Record<ReadKind, Result>;
  /** Under write load ÷ alone. */
  ratios: Record<ReadKind, { p50: number; p99: number }>;
  writeLoad: {
    concurrency: number;
    windowSeconds: number;
    writesInWindow: number;
    writesPerSecond: number;
    writesTotal: number;
    errors: number;
    errorSamples: string[];
    latency: Summary | null;
  };
  samplesMs: { alone: Record<ReadKind, number[]>; underLoad: Record<ReadKind, number[]> };
}

export interface Report {
  date: string;
  samples: number;
  warmup: number;
  machine: Record<string, unknown>;
  setup: Record<string, string>;
  results: Record<Kind, Summary & { checked: number }>;
  ratios: {
    allowOverFloorP50: number;
    /** The floor with one local activity that does nothing ÷ the floor: the SDK's own cost of a local activity. */
    floorLocalOverFloorP50: number;
    /** The gated Allow ÷ the floor with an empty local activity: what the api, the policy and the transaction add. */
    allowOverFloorLocalP50: number;
    /**
     * The gated Allow ÷ the fair floor with an empty local activity, which carries through Temporal what the Allow
     * carries (its start's input, memo, summary and search attributes, the decision's upsert, its answer): what the
     * gate itself adds (HTTP, authentication and counting, the policy, the transaction).
     */
    allowOverFairFloorLocalP50: number;
    allowOverFairFloorP50: number;
    /** The fair floor ÷ the floor: what a gated Allow's payloads and search attributes cost Temporal. */
    fairFloorOverFloorP50: number;
    allowOverInsertP50: number;
    reviewOverAllowP50: number;
    denyOverAllowP50: number;
    approveToAppliedOverAllowP50: number;
  };
  /** The gate's own cost: the gated Allow's p50 minus the fair floor with an empty local activity's, in ms. */
  gate: { ownCostMsP50: number; ownCostMsP99: number };
  /** What the fair floors carry, read back from a real gated Allow. */
  fairFloor: { inputBytes: number; answerBytes: number; searchAttributes: string[]; sampleWorkflowId: string };
  histories: Histories;
  sqlite: {
    samples: number;
    warmup: number;
    results: Record<'wal' | 'defaultJournal', Result>;
    /** The floor on the default settings ÷ on ours. */
    defaultOverWalP50: number;
  };
  /** By kind and writers: allow1 … allow16, floor1 … floor16, floorLocal1 … floorLocal16; and the ratios the targets name. */
  throughput: Record<string, ThroughputResult> & {
    settings: { secondsPerWindow: number; repeats: number };
    ratios: {
      allow16OverFloor16: number;
      allow4OverFloor4: number;
      allow1OverFloor1: number;
      allow16OverFloorLocal16: number;
      floorLocal16OverFloor16: number;
      allow16OverFairFloorLocal16: number;
      allow16OverFairFloor16: number;
      fairFloorLocal16OverFloorLocal16: number;
    };
  };
  samplesMs: Record<Kind, number[]>;
  reads: ReadReport;
  mcp: McpReport;
  limits: LimitReport;
  encryption: EncryptionReport;
}

function results<K extends string>(order: readonly K[], measured: RoundsResult<K>): Record<K, Result> {
  return Object.fromEntries(
    order.map((kind) => {
      const { n, p50, p99, mean, min, max } = summarize(measured.samples[kind]);
      return [kind, { n, p50: round(p50), p99: round(p99), mean: round(mean), min: round(min), max: round(max), checked: measured.checked[kind] }];
    }),
  ) as Record<K, Result>;
}

function roundedSummary(values: number[]): Summary | null {
  if (values.length === 0) return null;
  const summary = summarize(values);
  return Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, key === 'n' ? value : round(value)])) as unknown as Summary;
}

function buildReadReport(reads: ReadMeasurement): ReadReport {
  const alone = results(readKinds, reads.alone);
  const underLoad = results(readKinds, reads.underLoad);
  const exact = (measured: RoundsResult<ReadKind>, kind: ReadKind) => summarize(measured.samples[kind]);
  const { load } = reads;
  return {
    samples: reads.samples,
    warmup: reads.warmup,
    seed: {
      size: reads.seed.size,
      seconds: round(reads.seed.seconds, 2),
      vacuumAnalyzeSeconds: round(reads.seed.vacuumAnalyzeSeconds, 2),
      counts: reads.seed.counts,
    },
    searchMatches: reads.searchMatches,
    alone,
    underLoad,
    ratios: Object.fromEntries(
      readKinds.map((kind) => {
        const [before, after] = [exact(reads.alone, kind), exact(reads.underLoad, kind)];
        return [kind, { p50: round(after.p50 / before.p50, 2), p99: round(after.p99 / before.p99, 2) }];
      }),
    ) as ReadReport['ratios'],
    writeLoad: {
      concurrency: load.concurrency,
      windowSeconds: round(load.windowSeconds, 2),
      writesInWindow: load.writesInWindow,
      writesPerSecond: round(load.writesPerSecond, 1),
      writesTotal: load.writesTotal,
      errors: load.errors,
      errorSamples: load.errorSamples,
      latency: roundedSummary(load.latencyMs),
    },
    samplesMs: {
      alone: Object.fromEntries(readKinds.map((kind) => [kind, reads.alone.samples[kind].map((value) => round(value))])) as Record<ReadKind, number[]>,
      underLoad: Object.fromEntries(readKinds.map((kind) => [kind, reads.underLoad.samples[kind].map((value) => round(value))])) as Record<ReadKind, number[]>,
    },
  };
}

function buildMcpReport(mcp: McpMeasurement): McpReport {
  const exact = (kind: McpKind) => summarize(mcp.measured.samples[kind]);
  return {
    samples: mcp.samples,
    warmup: mcp.warmup,
    results: results(mcpKinds, mcp.measured),
    ratios: Object.fromEntries(
      Object.entries(mcpPairs).map(([pair, { mcp: over, rest: under }]) => {
        const [a, b] = [exact(over), exact(under)];
        return [pair, { p50: round(a.p50 / b.p50, 2), p99: round(a.p99 / b.p99, 2) }];
      }),
    ) as McpReport['ratios'],
    samplesMs: Object.fromEntries(mcpKinds.map((kind) => [kind, mcp.measured.samples[kind].map((value) => round(value))])) as Record<McpKind, number[]>,
  };
}

/**
 * Two kinds measured in alternating rounds, one over the other: results, ratios and the time added at p50 and p99,
 * and the samples (the limits' and the encryption's phases).
 */
function comparison<K extends string>(kinds: readonly K[], measured: RoundsResult<K>, over: K, under: K) {
  const [a, b] = [summarize(measured.samples[over]), summarize(measured.samples[under])];
  return {
    results: results(kinds, measured),
    ratios: { p50: round(a.p50 / b.p50, 2), p99: round(a.p99 / b.p99, 2) },
    addedMs: { p50: round(a.p50 - b.p50), p99: round(a.p99 - b.p99) },
    samplesMs: Object.fromEntries(kinds.map((kind) => [kind, measured.samples[kind].map((value) => round(value))])) as Record<K, number[]>,
  };
}

function buildLimitReport(limits: LimitMeasurement): LimitReport {
  const compared = comparison(limitKinds, limits.measured, 'limitsOn', 'limitsOff');
  return { samples: limits.samples, warmup: limits.warmup, ...compared, p50: compared.ratios.p50 };
}

function buildEncryptionReport(encryption: EncryptionMeasurement): EncryptionReport {
  return {
    samples: encryption.samples,
    warmup: encryption.warmup,
    ...comparison(encryptionKinds, encryption.measured, 'encrypted', 'plain'),
    payloadEncodings: encryption.payloadEncodings,
    codec: encryption.codec,
  };
}

function buildSqliteReport(journals: JournalMeasurement): Report['sqlite'] {
  const [wal, defaultJournal] = [summarize(journals.measured.samples.wal), summarize(journals.measured.samples.defaultJournal)];
  return {
    samples: journals.samples,
    warmup: journals.warmup,
    results: results(['wal', 'defaultJournal'] as const, journals.measured),
    defaultOverWalP50: round(defaultJournal.p50 / wal.p50, 2),
  };
}

function buildThroughputReport(throughput: ThroughputMeasurement): Report['throughput'] {
  const byLevel: Record<string, ThroughputResult> = {};
  for (const kind of throughputKinds) {
    for (const writers of writerLevels) {
      byLevel[`${kind}${writers}`] = combine(throughput.windows.filter((w) => w.kind === kind && w.writers === writers));
    }
  }
  const over = (writers: number, floor = 'floor') => round(byLevel[`allow${writers}`]!.writesPerSecond / byLevel[`${floor}${writers}`]!.writesPerSecond, 2);
  return Object.assign(byLevel, {
    settings: { secondsPerWindow: throughput.seconds, repeats: throughput.repeats },
    ratios: {
      allow16OverFloor16: over(16),
      allow4OverFloor4: over(4),
      allow1OverFloor1: over(1),
      allow16OverFloorLocal16: over(16, 'floorLocal'),
      floorLocal16OverFloor16: round(byLevel.floorLocal16!.writesPerSecond / byLevel.floor16!.writesPerSecond, 2),
      allow16OverFairFloorLocal16: over(16, 'fairFloorLocal'),
      allow16OverFairFloor16: over(16, 'fairFloor'),
      fairFloorLocal16OverFloorLocal16: round(byLevel.fairFloorLocal16!.writesPerSecond / byLevel.floorLocal16!.writesPerSecond, 2),
    },
  }) as Report['throughput'];
}

export async function buildReport(
  measured: RoundsResult,
  options: {
    samples: number;
    warmup: number;
    histories: Histories;
    fairFloor: Report['fairFloor'];
    journals: JournalMeasurement;
    throughput: ThroughputMeasurement;
    temporalCli: string;
    postgresVersion: string;
    reads: ReadMeasurement;
    mcp: McpMeasurement;
    limits: LimitMeasurement;
    encryption: EncryptionMeasurement;
  },
): Promise<Report> {
  const summaries = Object.fromEntries(kinds.map((kind) => [kind, summarize(measured.samples[kind])])) as Record<Kind, Summary>;
  return {
    date: new Date().toISOString(),
    samples: options.samples,
    warmup: options.warmup,
    machine: await machineOf(options.temporalCli),
    setup: {
      temporal:
        `temporal server start-dev on a file database with ${fileDatabasePragmas.join(', ')} (as gatehouse dev runs it), headless, ` +
        'via startTemporalDevServer; a second one on the default SQLite settings for the floor only',
      floor:
        "the bench's own @temporalio/client running executeUpdateWithStart of a workflow that answers the update and completes " +
        '(no activity), served by a @temporalio/worker in the bench process, on the same server and a task queue of its own; ' +
        'floorLocal: the same with one local activity that returns at once before the answer (the shape of the gated write); ' +
        "fairFloor: started with a real gated Allow's input, memo, summary and five search attributes, upserting the decision's " +
        "search attribute, answering the update with that Allow's answer (given as the update's argument) and completing with it; " +
        "fairFloorLocal: the same, the answer given by one local activity that takes the input (the gated write's shape and payloads)",
      throughput:
        `windows of ${options.throughput.seconds} s, ${options.throughput.repeats} of each kind and writer count, interleaved; each writer ` +
        'runs writes back to back; a window ends when its last write answers; CPU time of each process from /proc/<pid>/stat ' +
        '(user + system, all threads) and process.cpuUsage() for the bench process, which hosts the floor’s worker',
      postgres: `PostgreSQL ${options.postgresVersion}, a fresh database`,
      gatehouse: 'node bin/gatehouse.js api and node bin/gatehouse.js worker as separate processes',
      requests:
        'sequential, one at a time, interleaved allow, review, approve (a reviewer approving the held write of the round, with a ' +
        'personal token; answered once the write is applied), deny, floor, floorLocal, fairFloor, fairFloorLocal, insert; global fetch with keep-alive',
      reads:
        `after the writes, the organization seeded with the large demo data (seedOrganization, then VACUUM ANALYZE); ` +
        `sequential reads, interleaved customer search (a term from a fixed list) and task list page (status todo, walking ` +
        `${taskPagesPerWalk} pages with the cursor); then the same reads while ${options.reads.load.concurrency} loops of gated Allow writes ` +
        `(POST /api/v1/tasks) run back to back against the same api`,
      mcp:
        'last, on the same seeded organization: one @modelcontextprotocol/sdk Client over StreamableHTTPClientTransport to /mcp ' +
        '(bearer key; initialize and tools/list once, kept connected, so the client checks structured results against the output ' +
        'schemas), each beside its REST twin in rounds of its own that alternate which goes first (so that no read follows a ' +
        'write): MCP list_tasks {limit: 50} and GET /api/v1/tasks?limit=50, then MCP create_task {title, status: todo} (Allow) and ' +
        'POST /api/v1/tasks with the same body (Allow); sequential, every answer checked',
      limits:
        'last: GET /api/v1/tasks?limit=50 on the api (limits on: every request counted in PostgreSQL, on a plan whose limits it never ' +
        'reaches) and on a second gatehouse api process with RATE_LIMITS=off, same database and key; rounds alternate which goes first; ' +
        'every answer checked, the rate-limit headers present with limits on and absent with them off',
      encryption:
        'last: POST /api/v1/tasks (Allow) on two gatehouse api + worker pairs started together after the others, one plain (task queue ' +
        `${options.encryption.taskQueues.plain.taskQueue}) and one with PAYLOAD_ENCRYPTION_KEYS (a key made for the run: AES-256-GCM; task queue ` +
        `${options.encryption.taskQueues.encrypted.taskQueue}), same database, Temporal server and bench API key; rounds alternate which goes first; every answer ` +
        'checked; the start input of one workflow of each pair read back without the codec, before the rounds and after them: ' +
        `${options.encryption.payloadEncodings.encrypted} from the encrypted pair, ${options.encryption.payloadEncodings.plain} from the plain one`,
    },
    results: results(kinds, measured),
    ratios: {
      allowOverFloorP50: round(summaries.allow.p50 / summaries.floor.p50, 2),
      floorLocalOverFloorP50: round(summaries.floorLocal.p50 / summaries.floor.p50, 2),
      allowOverFloorLocalP50: round(summaries.allow.p50 / summaries.floorLocal.p50, 2),
      allowOverFairFloorLocalP50: round(summaries.allow.p50 / summaries.fairFloorLocal.p50, 2),
      allowOverFairFloorP50: round(summaries.allow.p50 / summaries.fairFloor.p50, 2),
      fairFloorOverFloorP50: round(summaries.fairFloor.p50 / summaries.floor.p50, 2),
      allowOverInsertP50: round(summaries.allow.p50 / summaries.insert.p50, 2),
      reviewOverAllowP50: round(summaries.review.p50 / summaries.allow.p50, 2),
      denyOverAllowP50: round(summaries.deny.p50 / summaries.allow.p50, 2),
      approveToAppliedOverAllowP50: round(summaries.approve.p50 / summaries.allow.p50, 2),
    },
    gate: {
      ownCostMsP50: round(summaries.allow.p50 - summaries.fairFloorLocal.p50, 2),
      ownCostMsP99: round(summaries.allow.p99 - summaries.fairFloorLocal.p99, 2),
    },
    fairFloor: options.fairFloor,
    histories: options.histories,
    sqlite: buildSqliteReport(options.journals),
    throughput: buildThroughputReport(options.throughput),
    samplesMs: Object.fromEntries(kinds.map((kind) => [kind, measured.samples[kind].map((value) => round(value))])) as Record<Kind, number[]>,
    reads: buildReadReport(options.reads),
    mcp: buildMcpReport(options.mcp),
    limits: buildLimitReport(options.limits),
    encryption: buildEncryptionReport(options.encryption),
  };
}

export function printableReport(report: Report): string {
  const ms = (value: number) => value.toFixed(2);
  const rows = [
    ['kind', 'n', 'p50 ms', 'p99 ms', 'mean ms'],
    ...kinds.map((kind) => {
      const result = report.results[kind];
      return [labels[kind], String(result.n), ms(result.p50), ms(result.p99), ms(result.mean)];
    }),
  ];
  const machine = report.machine;
  return [
    `Gatehouse gated-write latency, ${report.samples} sequential samples per kind (after ${report.warmup} warm-up), ${report.date}`,
    `${machine.cpuModel} × ${machine.cpuCount}, ${machine.totalMemoryGiB} GiB, Node ${machine.nodeVersion}`,
    '',
    formatTable(rows),
    '',
    formatTable([
      ['gated Allow p50 ÷ the floor p50', `${report.ratios.allowOverFloorP50.toFixed(2)}×`],
      ['the floor + an empty local activity p50 ÷ the floor p50', `${report.ratios.floorLocalOverFloorP50.toFixed(2)}×`],
      ['gated Allow p50 ÷ the floor + an empty local activity p50', `${report.ratios.allowOverFloorLocalP50.toFixed(2)}×`],
      ['the fair floor p50 ÷ the floor p50', `${report.ratios.fairFloorOverFloorP50.toFixed(2)}×`],
      ['gated Allow p50 ÷ the fair floor p50', `${report.ratios.allowOverFairFloorP50.toFixed(2)}×`],
      ['gated Allow p50 ÷ the fair floor + an empty local activity p50', `${report.ratios.allowOverFairFloorLocalP50.toFixed(2)}×`],
      ["the gate's own cost (Allow − fair floor + local activity), p50 / p99", `${report.gate.ownCostMsP50.toFixed(2)} / ${report.gate.ownCostMsP99.toFixed(2)} ms`],
      ['Review p50 ÷ Allow p50', `${report.ratios.reviewOverAllowP50.toFixed(2)}×`],
      ['Deny p50 ÷ Allow p50', `${report.ratios.denyOverAllowP50.toFixed(2)}×`],
      ['approve-to-applied p50 ÷ Allow p50', `${report.ratios.approveToAppliedOverAllowP50.toFixed(2)}×`],
      ['gated Allow p50 ÷ plain INSERT p50', `${report.ratios.allowOverInsertP50.toFixed(2)}×`],
    ]),
    '',
    printableHistories(report.histories),
    '',
    printableSqlite(report.sqlite),
    '',
    printableThroughput(report.throughput),
    '',
    printableReads(report.reads),
    '',
    printableMcp(report.mcp),
    '',
    printableLimits(report.limits),
    '',
    printableEncryption(report.encryption),
  ].join('\n');
}

function printableHistories(histories: Histories): string {
  const range = ({ min, max }: { min: number; max: number }) => (min === max ? String(min) : `${min}–${max}`);
  const names: Record<keyof Histories, string> = {
    allow: 'gated Allow',
    reviewApproved: 'gated Review, approved and applied',
    deny: 'gated Deny',
    floor: "Temporal's floor",
    floorLocal: 'the floor + an empty local activity',
    fairFloor: 'the fair floor',
    fairFloorLocal: 'the fair floor + an empty local activity',
  };
  return [
    'Workflow histories of the rounds (the last of each kind, read back through the client); worker ms: the workflow tasks, ' +
      "started to completed; start to answer: the workflow's start to its update's completion (the server's clock)",
    '',
    formatTable([
      ['workflow', 'n', 'events', 'workflow tasks', 'activity tasks', 'markers', 'worker ms p50', 'start to answer ms p50'],
      ...(Object.keys(names) as (keyof Histories)[]).map((kind) => {
        const shape = histories[kind];
        return [
          names[kind],
          String(shape.workflows),
          range(shape.events),
          range(shape.workflowTasks),
          range(shape.activityTasks),
          range(shape.markers),
          shape.workerMsP50.toFixed(1),
          shape.startToAnswerMsP50.toFixed(1),
        ];
      }),
    ]),
  ].join('\n');
}

function printableSqlite(sqlite: Report['sqlite']): string {
  const ms = (value: number) => value.toFixed(2);
  return [
    `The floor on the dev server's file database: its default SQLite settings beside ours (${fileDatabasePragmas.join(', ')}), ` +
      `${sqlite.samples} interleaved samples each (after ${sqlite.warmup} warm-up)`,
    '',
    formatTable([
      ['settings', 'n', 'p50 ms', 'p99 ms', 'mean ms'],
      ...(['wal', 'defaultJournal'] as const).map((kind) => {
        const result = sqlite.results[kind];
        return [kind === 'wal' ? fileDatabasePragmas.join(', ') : 'default (journal_mode=delete, synchronous=full)', String(result.n), ms(result.p50), ms(result.p99), ms(result.mean)];
      }),
    ]),
    '',
    `default ÷ ours, p50: ${sqlite.defaultOverWalP50.toFixed(2)}×`,
  ].join('\n');
}

function printableThroughput(throughput: Report['throughput']): string {
  const ms = (value: number | null | undefined) => (value === null || value === undefined ? '–' : value.toFixed(1));
  const { secondsPerWindow, repeats } = throughput.settings;
  const rows = throughputKinds.flatMap((kind) =>
    writerLevels.map((writers) => {
      const result = throughput[`${kind}${writers}`]!;
      const cpu = result.cpuMsPerWrite;
      return [
        throughputLabels[kind],
        String(writers),
        result.writesPerSecond.toFixed(1),
        result.writesPerSecondByWindow.map((value) => value.toFixed(0)).join(' / '),
        ms(result.latency?.p50),
        ms(result.latency?.p99),
        String(result.errors),
        ms(cpu.api),
        ms(cpu.worker),
        ms(cpu.temporal),
        ms(cpu.bench),
      ];
    }),
  );
  return [
    `Throughput: ${repeats} windows of ${secondsPerWindow} s per kind and writer count, interleaved; CPU ms per write from /proc ` +
      "(the bench process runs the floor's client and worker, and the gated writes' HTTP client)",
    '',
    formatTable([
      ['kind', 'writers', 'writes/s', 'by window', 'p50 ms', 'p99 ms', 'errors', 'api', 'worker', 'temporal', 'bench'],
      ...rows,
    ]),
    '',
    formatTable([
      ['gated Allow ÷ floor, writes/s', '1 writer', '4 writers', '16 writers'],
      ['', `${throughput.ratios.allow1OverFloor1.toFixed(2)}×`, `${throughput.ratios.allow4OverFloor4.toFixed(2)}×`, `${throughput.ratios.allow16OverFloor16.toFixed(2)}×`],
    ]),
    '',
    formatTable([
      ['writes/s at 16 writers', ''],
      ['the floor + an empty local activity ÷ the floor', `${throughput.ratios.floorLocal16OverFloor16.toFixed(2)}×`],
      ['gated Allow ÷ the floor + an empty local activity', `${throughput.ratios.allow16OverFloorLocal16.toFixed(2)}×`],
      ['the fair floor + an empty local activity ÷ the floor + an empty local activity', `${throughput.ratios.fairFloorLocal16OverFloorLocal16.toFixed(2)}×`],
      ['gated Allow ÷ the fair floor', `${throughput.ratios.allow16OverFairFloor16.toFixed(2)}×`],
      ['gated Allow ÷ the fair floor + an empty local activity', `${throughput.ratios.allow16OverFairFloorLocal16.toFixed(2)}×`],
    ]),
  ].join('\n');
}

/** A comparison's two tables: each kind's figures, then the one over the other. */
function printableComparison<K extends string>(
  report: { results: Record<K, Result>; ratios: { p50: number; p99: number }; addedMs: { p50: number; p99: number } },
  kinds: readonly K[],
  labels: Record<K, string>,
  names: { heading: string; ratio: string; added: string },
): string[] {
  const ms = (value: number) => value.toFixed(2);
  return [
    formatTable([
      ['kind', 'n', 'p50 ms', 'p99 ms', 'mean ms'],
      ...kinds.map((kind) => {
        const result = report.results[kind];
        return [labels[kind], String(result.n), ms(result.p50), ms(result.p99), ms(result.mean)];
      }),
    ]),
    '',
    formatTable([
      [names.heading, 'p50', 'p99'],
      [names.ratio, `${report.ratios.p50.toFixed(2)}×`, `${report.ratios.p99.toFixed(2)}×`],
      [names.added, `${ms(report.addedMs.p50)} ms`, `${ms(report.addedMs.p99)} ms`],
    ]),
  ];
}

function printableLimits(limits: LimitReport): string {
  return [
    `The cost of the request limits: the same read on an api counting every request and on one with RATE_LIMITS=off, ` +
      `${limits.samples} sequential samples per kind (after ${limits.warmup} warm-up)`,
    '',
    ...printableComparison(limits, limitKinds, limitLabels, { heading: 'limits on vs off', ratio: 'on ÷ off', added: 'on − off' }),
  ].join('\n');
}

function printableEncryption(encryption: EncryptionReport): string {
  return [
    `The cost of payload encryption: the same gated Allow on two fresh api + worker pairs, one with plain payloads and one that ` +
      `encrypts them, ${encryption.samples} sequential samples per kind (after ${encryption.warmup} warm-up), rounds alternating`,
    '',
    ...printableComparison(encryption, encryptionKinds, encryptionLabels, { heading: 'encrypted vs plain', ratio: 'encrypted ÷ plain', added: 'encrypted − plain' }),
    '',
    `start input as Temporal stores it: ${encryption.payloadEncodings.encrypted} (encrypted pair), ${encryption.payloadEncodings.plain} (plain pair)`,
    `the codec alone: a ${encryption.codec.payloadBytes}-byte start input encrypted and decrypted in ${encryption.codec.perPayloadUs.join(', ')} µs (rounds of 2,000)`,
  ].join('\n');
}

function printableReads(reads: ReadReport): string {
  const ms = (value: number) => value.toFixed(2);
  const times = (value: number) => `${value.toFixed(2)}×`;
  const load = reads.writeLoad;
  const thousands = (value: number | undefined) => (value ?? 0).toLocaleString('en-US');
  const row = (label: string, result: Result) => [label, String(result.n), ms(result.p50), ms(result.p99), ms(result.mean)];
  return [
    `Reads on the large seed (${thousands(reads.seed.counts.customers)} customers, ${thousands(reads.seed.counts.tasks)} tasks; ` +
      `seeded in ${reads.seed.seconds.toFixed(1)} s, VACUUM ANALYZE ${reads.seed.vacuumAnalyzeSeconds.toFixed(1)} s), ` +
      `${reads.samples} sequential samples per kind (after ${reads.warmup} warm-up)`,
    '',
    formatTable([
      ['read', 'n', 'p50 ms', 'p99 ms', 'mean ms'],
      ...readKinds.flatMap((kind) => [
        row(`${readLabels[kind]}, alone`, reads.alone[kind]),
        row(`${readLabels[kind]}, under write load`, reads.underLoad[kind]),
      ]),
    ]),
    '',
    formatTable([
      ['under write load ÷ alone', 'p50', 'p99'],
      ...readKinds.map((kind) => [readLabels[kind], times(reads.ratios[kind].p50), times(reads.ratios[kind].p99)]),
    ]),
    '',
    formatTable([
      ['write load', ''],
      ['concurrent loops of gated Allow writes', String(load.concurrency)],
      ['writes done while the reads ran', `${load.writesInWindow} in ${load.windowSeconds.toFixed(1)} s`],
      ['write throughput', `${load.writesPerSecond.toFixed(1)}/s`],
      ['gated Allow p50 / p99 under load', load.latency ? `${ms(load.latency.p50)} / ${ms(load.latency.p99)} ms` : 'none'],
      ['errors (whole load, ramp and drain included)', `${load.errors} of ${load.writesTotal + load.errors}`],
    ]),
  ].join('\n');
}

function printableMcp(mcp: McpReport): string {
  const ms = (value: number) => value.toFixed(2);
  const times = (value: number) => `${value.toFixed(2)}×`;
  return [
    `MCP tool calls beside their REST twins (one SDK client kept connected, the large seed), ` +
      `${mcp.samples} sequential samples per kind (after ${mcp.warmup} warm-up), each pair in alternating rounds of its own`,
    '',
    formatTable([
      ['kind', 'n', 'p50 ms', 'p99 ms', 'mean ms'],
      ...mcpKinds.map((kind) => {
        const result = mcp.results[kind];
        return [mcpLabels[kind], String(result.n), ms(result.p50), ms(result.p99), ms(result.mean)];
      }),
    ]),
    '',
    formatTable([
      ['MCP ÷ REST', 'p50', 'p99'],
      ...(Object.keys(mcpPairs) as McpPair[]).map((pair) => [mcpPairLabels[pair], times(mcp.ratios[pair].p50), times(mcp.ratios[pair].p99)]),
    ]),
  ].join('\n');
}

export function writeReport(report: Report, path: string): void {
  writeJson(report, path);
}

export function writeJson(value: unknown, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** The machine a run measured on, as every results file records it. */
export async function machineOf(temporalCli?: string): Promise<Record<string, unknown>> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    totalMemoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    nodeVersion: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((load) => round(load, 2)),
    ...(temporalCli ? { temporalCli: await temporalVersion(temporalCli) } : {}),
  };
}

export function printableTuning(tuning: TuningReport): string {
  const ms = (value: number | null) => (value === null ? '–' : value.toFixed(2));
  const times = (value: number) => `${value.toFixed(2)}×`;
  const names = Object.keys(tuning.variants);
  return [
    `Each setting alone against the settings before it: gated Allow, ${tuning.settings.samples} rounds rotating through the variants ` +
      `(after ${tuning.settings.warmup} warm-up); 16 writers, ${tuning.settings.throughputRepeats} windows of ${tuning.settings.throughputSeconds} s each, interleaved`,
    '',
    formatTable([
      ['variant', 'p50 ms', 'p99 ms', '÷ before p50', '÷ before p99', 'writes/s ×16', 'by window', '÷ before', 'errors'],
      ...names.map((name) => {
        const latency = tuning.latency[name]!;
        const throughput = tuning.throughput16[name]!;
        const ratio = tuning.ratios[name]!;
        return [
          name,
          ms(latency.p50),
          ms(latency.p99),
          times(ratio.p50),
          times(ratio.p99),
          throughput.writesPerSecond.toFixed(1),
          throughput.byWindow.map((value) => value.toFixed(0)).join(' / '),
          times(ratio.writesPerSecond16),
          String(throughput.errors),
        ];
      }),
    ]),
    '',
    ...names.map((name) => `${name}: ${tuning.variants[name]!.change}`),
    '',
    `the fair floor with a local activity: p50 ${ms(tuning.fairFloorByServer.refreshOnRead.p50)} ms with the CLI's refresh on read, ` +
      `${ms(tuning.fairFloorByServer.cached.p50)} ms cached (${times(tuning.fairFloorByServer.cachedOverRefreshOnReadP50)})`,
  ].join('\n');
}

async function temporalVersion(cliPath: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(cliPath, ['--version'], { timeout: 5000 });
    return stdout.trim();
  } catch {
    return 'unknown';
  }
}
