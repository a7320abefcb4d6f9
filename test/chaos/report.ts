import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Scenario, ScenarioResult } from './scenario';
import { seconds } from './scenario';

const run = promisify(execFile);

export interface Outcome {
  scenario: Scenario;
  result: ScenarioResult;
  ms: number;
}

export interface RunDescription {
  command: string;
  startedAt: Date;
  short: boolean;
  machine: string;
}

const verdict = (result: ScenarioResult) => (result.skipped ? 'skipped' : result.failures.length ? '**fail**' : 'pass');

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A scenario's row: its title and what it found (an outcome, or one read back from a results file). */
export type ResultRow = { scenario: Pick<Scenario, 'title'>; result: ScenarioResult };

export function resultTable(outcomes: ResultRow[]): string {
  const lines = ['| Scenario | What was done | Result figures | Pass/fail |', '|---|---|---|:-:|'];
  for (const { scenario, result } of outcomes) {
    const figures = result.skipped ? result.skipped : result.figures.map(([name, value]) => `${name} ${value}`).join(' · ');
    lines.push(`| ${cell(scenario.title)} | ${cell(result.did)} | ${cell(figures)} | ${verdict(result)} |`);
  }
  return lines.join('\n');
}

export function failureList(outcomes: Outcome[]): string {
  const failed = outcomes.filter(({ result }) => result.failures.length > 0);
  if (!failed.length) return '';
  return [
    '### Failures',
    '',
    ...failed.flatMap(({ scenario, result }) => [`**${scenario.title}**`, '', ...result.failures.map((failure) => `- ${failure}`), '']),
  ].join('\n');
}

export function reportMarkdown(outcomes: Outcome[], run: RunDescription): string {
  const failed = outcomes.filter(({ result }) => result.failures.length > 0).length;
  const passed = outcomes.filter(({ result }) => !result.skipped && result.failures.length === 0).length;
  const total = outcomes.reduce((sum, { ms }) => sum + ms, 0);
  return [
    '# Chaos suite: the last run',
    '',
    `Made by \`${run.command}\` on ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC${run.short ? ' (the short version)' : ''}.`,
    '',
    `Machine: ${run.machine}.`,
    '',
    `${passed} passed, ${failed} failed${outcomes.length - passed - failed ? `, ${outcomes.length - passed - failed} skipped` : ''}, in ${seconds(total)}.`,
    [
      'Each scenario runs its own PostgreSQL database, Temporal dev server, api and worker processes (`gatehouse api`,',
      '`gatehouse worker`); writers send gated `tasks.create` writes with an Idempotency-Key and retry with the same key',
      'until a definitive answer. *Lost*: a write with no row; *duplicated*: more than one; *unexpected exits*: api or',
      'worker processes that exited without the suite killing them.',
    ].join('\n'),
    '',
    resultTable(outcomes),
    '',
    failureList(outcomes),
  ]
    .join('\n')
    .trimEnd()
    .concat('\n');
}

export function writeReport(path: string, markdown: string): void {
  writeFileSync(path, markdown);
}

/** Cores, memory, the system, and the versions of Node, PostgreSQL and the Temporal CLI. */
export async function describeMachine(adminUrl: string, temporalCli: string): Promise<string> {
  const cpus = os.cpus();
  const parts = [
    `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'})`,
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`,
    `${os.type()} ${os.release()}`,
    `Node ${process.version}`,
  ];
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    parts.push(`PostgreSQL ${rows[0]?.server_version.split(' ')[0]}`);
  } catch {
    // the version is a courtesy
  } finally {
    await client.end().catch(() => {});
  }
  try {
    const { stdout } = await run(temporalCli, ['--version']);
    parts.push(stdout.trim().replace(/^temporal version /, 'Temporal CLI '));
  } catch {
    // likewise
  }
  return parts.join(', ');
}
