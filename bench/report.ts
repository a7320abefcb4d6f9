import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { kinds, type Kind, type RoundsResult } from './measure';
import { formatTable, round, summarize, type Summary } from './stats';

const labels: Record<Kind, string> = {
  allow: 'gated write, Allow (201)',
  review: 'gated write, Review (202)',
  deny: 'gated write, Deny (403)',
  insert: 'plain INSERT (pg Pool)',
};

export interface Report {
  date: string;
  samples: number;
  warmup: number;
  machine: Record<string, unknown>;
  setup: Record<string, string>;
  results: Record<Kind, Summary & { checked: number }>;
  ratios: { allowOverInsertP50: number; reviewOverAllowP50: number; denyOverAllowP50: number };
  samplesMs: Record<Kind, number[]>;
}

export async function buildReport(
  measured: RoundsResult,
  options: { samples: number; warmup: number; temporalCli: string; postgresVersion: string },
): Promise<Report> {
  const summaries = Object.fromEntries(kinds.map((kind) => [kind, summarize(measured.samples[kind])])) as Record<Kind, Summary>;
  const results = Object.fromEntries(
    kinds.map((kind) => {
      const { n, p50, p99, mean, min, max } = summaries[kind];
      return [kind, { n, p50: round(p50), p99: round(p99), mean: round(mean), min: round(min), max: round(max), checked: measured.checked[kind] }];
    }),
  ) as Report['results'];
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    samples: options.samples,
    warmup: options.warmup,
    machine: {
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      cpuCount: cpus.length,
      totalMemoryBytes: os.totalmem(),
      totalMemoryGiB: round(os.totalmem() / 1024 ** 3, 1),
      nodeVersion: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      loadAverage: os.loadavg().map((load) => round(load, 2)),
      temporalCli: await temporalVersion(options.temporalCli),
    },
    setup: {
      temporal: 'temporal server start-dev (in memory, headless), via startTemporalDevServer',
      postgres: `PostgreSQL ${options.postgresVersion}, a fresh database`,
      gatehouse: 'node bin/gatehouse.js api and node bin/gatehouse.js worker as separate processes',
      requests: 'sequential, one at a time, interleaved allow, review, deny, insert; global fetch with keep-alive',
    },
    results,
    ratios: {
      allowOverInsertP50: round(summaries.allow.p50 / summaries.insert.p50, 2),
      reviewOverAllowP50: round(summaries.review.p50 / summaries.allow.p50, 2),
      denyOverAllowP50: round(summaries.deny.p50 / summaries.allow.p50, 2),
    },
    samplesMs: Object.fromEntries(kinds.map((kind) => [kind, measured.samples[kind].map((value) => round(value))])) as Record<Kind, number[]>,
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
      ['gated Allow p50 ÷ plain INSERT p50', `${report.ratios.allowOverInsertP50.toFixed(2)}×`],
      ['Review p50 ÷ Allow p50', `${report.ratios.reviewOverAllowP50.toFixed(2)}×`],
      ['Deny p50 ÷ Allow p50', `${report.ratios.denyOverAllowP50.toFixed(2)}×`],
    ]),
  ].join('\n');
}

export function writeReport(report: Report, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}

async function temporalVersion(cliPath: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(cliPath, ['--version'], { timeout: 5000 });
    return stdout.trim();
  } catch {
    return 'unknown';
  }
}
