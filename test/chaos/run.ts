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
import { describeMachine, failureList, reportMarkdown, resultTable, writeReport, type Outcome } from './report';
import { seconds, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario';
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

/** Runs one scenario within its budget; whatever happens, tears down what it started. */
async function runScenario(scenario: Scenario, short: boolean, suite: SuiteEnvironment, interrupt: AbortSignal): Promise<Outcome> {
  const budgetMs = short ? scenario.budgetMs.short : scenario.budgetMs.full;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`ran past its budget of ${seconds(budgetMs)}`)), budgetMs);
  const onInterrupt = () => controller.abort(new Error('interrupted'));
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  const cleanups: (() => Promise<void>)[] = [];
  const context: ScenarioContext = {
    short,
    signal: controller.signal,
    log: (line) => log(`${scenario.id}: ${line}`),
    logFile: (name) => join(suite.logDir, `${scenario.id}-${name}`),
    onCleanup: (cleanup) => cleanups.push(cleanup),
    async stack(stackOptions = {}) {
      const stack = await createStack(scenario.id, stackOptions, suite);
      cleanups.push(() => stack.teardown());
      controller.signal.throwIfAborted();
      return stack;
    },
  };
  const started = Date.now();
  let result: ScenarioResult;
  try {
    const running = scenario.run(context);
    // Past the budget the scenario is abandoned (its processes are torn down below); its later failure is moot.
    running.catch(() => {});
    const abandoned = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true });
    });
    result = await Promise.race([running, abandoned]);
  } catch (error) {
    result = { did: 'did not finish', figures: [['time', seconds(Date.now() - started)]], failures: [(error as Error).message.split('\n')[0]!] };
  } finally {
    clearTimeout(timer);
    interrupt.removeEventListener('abort', onInterrupt);
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`${scenario.id}: cleanup failed: ${error.message}`));
    }
  }
  return { scenario, result, ms: Date.now() - started };
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

  const outcomes: Outcome[] = [];
  for (const scenario of chosen) {
    if (interrupt.signal.aborted) break;
    log(`${scenario.id}: ${scenario.title}…`);
    const outcome = await runScenario(scenario, short, suite, interrupt.signal);
    const { result } = outcome;
    const figures = result.skipped ?? result.figures.map(([name, value]) => `${name} ${value}`).join(', ');
    log(`${scenario.id}: ${result.skipped ? 'skipped' : result.failures.length ? 'FAIL' : 'pass'} (${seconds(outcome.ms)}): ${figures}`);
    for (const failure of result.failures) log(`${scenario.id}:   ${failure}`);
    outcomes.push(outcome);
  }

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
