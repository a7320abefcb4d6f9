// `npm run chaos`: faults injected into the service run as in production (separate api, worker and Temporal
// processes, a real PostgreSQL) while writers write; every scenario bounded in count and time, printing its
// figures; last, the bigger fuzz run. `npm run chaos -- --short` (or CHAOS_SHORT=1) is CI's shorter run, without
// the fuzz run; `--only a,b` picks scenarios. Writes the table to docs/chaos-report.md (`--report <file>` elsewhere)
// and exits non-zero when a scenario fails.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { describeMachine, failureList, reportMarkdown, resultTable, writeReport } from './report';
import { runScenarios } from './runner';
import type { Scenario } from './scenario';
import { apiKill } from './scenarios/api-kill';
import { approveWorkersDown } from './scenarios/approve-workers-down';
import { fuzz } from './scenarios/fuzz';
import { postgresRestart } from './scenarios/postgres-restart';
import { postgresTerminate } from './scenarios/postgres-terminate';
import { reviewExpiry } from './scenarios/review-expiry';
import { reviewRaces } from './scenarios/review-races';
import { temporalRestart } from './scenarios/temporal-restart';
import { workerKill } from './scenarios/worker-kill';
import { createStack, defaultAdminUrl, type SuiteEnvironment } from './stack';

const scenarios: Scenario[] = [
  workerKill,
  postgresTerminate,
  postgresRestart,
  temporalRestart,
  approveWorkersDown,
  reviewRaces,
  apiKill,
  reviewExpiry,
  fuzz,
];

const defaultReportPath = fileURLToPath(new URL('../../docs/chaos-report.md', import.meta.url));

const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);

function options() {
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean', default: false },
      only: { type: 'string' },
      report: { type: 'string', default: defaultReportPath },
    },
    strict: true,
  });
  const only = values.only?.split(',').map((id) => id.trim()).filter(Boolean);
  const unknown = only?.filter((id) => !scenarios.some((scenario) => scenario.id === id)) ?? [];
  if (unknown.length) throw new Error(`no scenario ${unknown.join(', ')}; there are ${scenarios.map((scenario) => scenario.id).join(', ')}`);
  const short = values.short || process.env.CHAOS_SHORT === '1';
  const chosen = scenarios.filter((scenario) => (only ? only.includes(scenario.id) : !(short && scenario.fullOnly)));
  return { short, chosen, reportPath: resolve(values.report) };
}

function commandLine(): string {
  const args = process.argv.slice(2);
  return `${process.env.CHAOS_SHORT === '1' ? 'CHAOS_SHORT=1 ' : ''}npm run chaos${args.length ? ` -- ${args.join(' ')}` : ''}`;
}

async function main(): Promise<number> {
  const { short, chosen, reportPath } = options();
  const startedAt = new Date();
  const temporalCli = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!temporalCli) throw new Error('the chaos suite needs the Temporal CLI: install Go, or set TEMPORAL_CLI to the binary');
  const suite: SuiteEnvironment = {
    temporalCli,
    adminUrl: defaultAdminUrl(),
    logDir: mkdtempSync(join(tmpdir(), 'gatehouse-chaos-logs-')),
  };
  const interrupt = new AbortController();
  process.once('SIGINT', () => {
    log('interrupted; stopping the scenario and cleaning up…');
    interrupt.abort();
  });
  log(`${chosen.length} scenarios${short ? ' (short)' : ''}; process logs in ${suite.logDir}`);

  const outcomes = await runScenarios(
    chosen,
    { short, heldThroughFaults: 0, logDir: suite.logDir, log, stack: (id, stackOptions) => createStack(id, stackOptions, suite) },
    interrupt.signal,
  );

  process.stdout.write(`\n${resultTable(outcomes)}\n\n${failureList(outcomes)}\n`);
  if (interrupt.signal.aborted) {
    log(`interrupted: ${reportPath} left as it was`);
    return 130;
  }
  const machine = await describeMachine(suite.adminUrl, temporalCli);
  writeReport(reportPath, reportMarkdown(outcomes, { command: commandLine(), startedAt, short, machine }));
  log(`wrote ${reportPath}`);
  return outcomes.some(({ result }) => result.failures.length > 0) ? 1 : 0;
}

const code = await main().catch((error: Error) => {
  log(error.stack ?? error.message);
  return 2;
});
// A client or timer a scenario left behind must not keep CI waiting.
process.exit(code);
