import { join } from 'node:path';
import type { Outcome } from './report';
import { seconds, type Scenario, type ScenarioContext, type ScenarioResult } from './scenario';
import type { Stack, StackOptions } from './stack';

/** What a run of scenarios is given: the service to fault (a stack per scenario) and how hard. */
export interface ScenarioRun {
  short: boolean;
  heldThroughFaults: number;
  logDir: string;
  log(line: string): void;
  /** The service a scenario faults: its own (the chaos suite), or a view of a running deployment (the rehearsal). */
  stack(scenarioId: string, options: StackOptions): Promise<Stack>;
}

/** Runs one scenario within its budget; whatever happens, tears down what it started. */
export async function runScenario(scenario: Scenario, run: ScenarioRun, interrupt: AbortSignal): Promise<Outcome> {
  const budgetMs = run.short ? scenario.budgetMs.short : scenario.budgetMs.full;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`ran past its budget of ${seconds(budgetMs)}`)), budgetMs);
  const onInterrupt = () => controller.abort(new Error('interrupted'));
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  const cleanups: (() => Promise<void>)[] = [];
  const context: ScenarioContext = {
    short: run.short,
    heldThroughFaults: run.heldThroughFaults,
    signal: controller.signal,
    log: (line) => run.log(`${scenario.id}: ${line}`),
    logFile: (name) => join(run.logDir, `${scenario.id}-${name}`),
    onCleanup: (cleanup) => cleanups.push(cleanup),
    async stack(stackOptions = {}) {
      const stack = await run.stack(scenario.id, stackOptions);
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
      await cleanup().catch((error: Error) => run.log(`${scenario.id}: cleanup failed: ${error.message}`));
    }
  }
  return { scenario, result, ms: Date.now() - started };
}

/** Runs the scenarios one after another, logging each one's verdict and figures; stops early when interrupted. */
export async function runScenarios(scenarios: Scenario[], run: ScenarioRun, interrupt: AbortSignal): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const scenario of scenarios) {
    if (interrupt.aborted) break;
    run.log(`${scenario.id}: ${scenario.title}…`);
    const outcome = await runScenario(scenario, run, interrupt);
    const { result } = outcome;
    const figures = result.skipped ?? result.figures.map(([name, value]) => `${name} ${value}`).join(', ');
    run.log(`${scenario.id}: ${result.skipped ? 'skipped' : result.failures.length ? 'FAIL' : 'pass'} (${seconds(outcome.ms)}): ${figures}`);
    for (const failure of result.failures) run.log(`${scenario.id}:   ${failure}`);
    outcomes.push(outcome);
  }
  return outcomes;
}
