// `npm run deployment`: the production shape of docker-compose.yml run natively on this machine, each part a host
// of its own (network namespaces): PostgreSQL, Temporal's four services on it, Caddy in front of two apis, two
// workers. Then the journeys a user makes through the proxy, the chaos suite's faults and those only this shape
// has, capacity by part, and a backup restored into a fresh PostgreSQL and Temporal. Writes every figure to
// deploy/rehearsal/results/latest.json (`--short`: CI's short form, to results/short.json) and exits non-zero when
// anything failed. Needs root (network namespaces), iproute2, PostgreSQL's server binaries, Go (builds Temporal's
// server, its SQL tool and Caddy once) and Chromium.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine } from '../../test/chaos/report';
import { runScenarios } from '../../test/chaos/runner';
import type { Scenario } from '../../test/chaos/scenario';
import { apiKill } from '../../test/chaos/scenarios/api-kill';
import { approveWorkersDown } from '../../test/chaos/scenarios/approve-workers-down';
import { postgresRestart } from '../../test/chaos/scenarios/postgres-restart';
import { postgresTerminate } from '../../test/chaos/scenarios/postgres-terminate';
import { reviewExpiry } from '../../test/chaos/scenarios/review-expiry';
import { reviewRaces } from '../../test/chaos/scenarios/review-races';
import { temporalRestart } from '../../test/chaos/scenarios/temporal-restart';
import { workerKill } from '../../test/chaos/scenarios/worker-kill';
import { deploymentBinaries } from './binaries';
import { rehearseRestore } from './backup';
import { measureCapacity, type CapacitySettings } from './capacity';
import { measureFloorsOnCluster, type FloorSettings } from './floors';
import { pinnedVersions } from './compose';
import { Deployment } from './deployment';
import { deploymentScenarios, deploymentStack, everythingRunning } from './faults';
import { runJourneys } from './journeys';
import { checkMachine } from './machine';
import { faultResults, resultsMarkdown, writeResults, type Results } from './results';

const phases = ['journeys', 'faults', 'capacity', 'floors', 'restore'] as const;
type Phase = (typeof phases)[number];

/** The chaos suite's scenarios that run here unchanged (the fuzz run is not a fault of the deployment). */
const chaosScenarios: Scenario[] = [workerKill, apiKill, postgresTerminate, postgresRestart, temporalRestart, approveWorkersDown, reviewRaces, reviewExpiry];
/** CI's short form: one journey, one api kill behind the proxy, one worker kill. */
const shortScenarios = ['api-kill', 'worker-kill'];

const resultsFolder = fileURLToPath(new URL('results/', import.meta.url));
const log = (line: string) => process.stderr.write(`deployment: ${line}\n`);

function options() {
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean', default: false },
      phases: { type: 'string' },
      scenarios: { type: 'string' },
      results: { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      'capacity-seconds': { type: 'string', default: '15' },
      'capacity-repeats': { type: 'string', default: '3' },
      'capacity-writers': { type: 'string', default: '16' },
      'floor-samples': { type: 'string', default: '100' },
    },
    strict: true,
  });
  const short = values.short;
  const chosenPhases = (values.phases?.split(',').map((phase) => phase.trim()) ?? [...phases]) as Phase[];
  const unknown = chosenPhases.filter((phase) => !phases.includes(phase));
  if (unknown.length) throw new Error(`no phase ${unknown.join(', ')}; there are ${phases.join(', ')}`);
  const scenarioFilter = values.scenarios?.split(',').map((id) => id.trim()) ?? (short ? shortScenarios : undefined);
  const resultsPath = resolve(values.results ?? join(resultsFolder, short ? 'short.json' : 'latest.json'));
  const capacity: CapacitySettings = {
    secondsPerWindow: Number(values['capacity-seconds']),
    repeats: Number(values['capacity-repeats']),
    writers: Number(values['capacity-writers']),
    warmupSeconds: 8,
    idleSeconds: 5,
  };
  const floors: FloorSettings = {
    samples: Number(values['floor-samples']),
    warmup: 10,
    writers: capacity.writers,
    secondsPerWindow: capacity.secondsPerWindow,
    repeats: 2,
  };
  return { short, phases: short ? (['journeys', 'faults'] as Phase[]) : chosenPhases, scenarioFilter, resultsPath, capacity, floors, keepLogs: values['keep-logs'] };
}

async function main(): Promise<number> {
  const { short, phases: chosen, scenarioFilter, resultsPath, capacity, floors, keepLogs } = options();
  await checkMachine({ browser: chosen.includes('journeys') && !short });
  const started = Date.now();
  const interrupt = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the deployment and removing its hosts…`);
      interrupt.abort();
    });
  }
  const folder = mkdtempSync(join(tmpdir(), 'gatehouse-rehearsal-'));
  // PostgreSQL's OS user keeps its data under it.
  chmodSync(folder, 0o711);
  const logDir = join(folder, 'logs');
  mkdirSync(logDir);
  log(`work folder ${folder}; process logs in ${logDir}`);

  const versions = pinnedVersions();
  log(`versions from docker-compose.yml: Temporal server ${versions.temporalServer}, SQL tool ${versions.temporalAdminTools}, Caddy ${versions.caddy}`);
  const buildStarted = Date.now();
  const binaries = await deploymentBinaries(versions, log);
  const results: Results = {
    command: `npm run deployment${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    startedAt: new Date(started).toISOString(),
    short,
    machine: '',
    versions,
    buildSeconds: Math.round((Date.now() - buildStarted) / 1000),
    setup: { seconds: 0, schemaScriptRuns: 2, namespaceScriptRuns: 2 },
    journeys: {},
    faults: {},
    unexpectedExits: [],
    passed: false,
    failures: [],
  };

  const setupStarted = Date.now();
  const deployment = await Deployment.start({ binaries, folder, logDir, log });
  results.setup.seconds = Math.round((Date.now() - setupStarted) / 1000);
  log(`the deployment is up in ${results.setup.seconds} s: ${deployment.proxyUrl}`);
  try {
    if (chosen.includes('journeys') && !interrupt.signal.aborted) {
      for (const journey of await runJourneys(deployment, { short, folder, log })) {
        results.journeys[journey.id] = journey;
        for (const failure of journey.failures) results.failures.push(`journey ${journey.id}: ${failure}`);
      }
    }
    if (chosen.includes('faults') && !interrupt.signal.aborted) {
      const scenarios = [...chaosScenarios, ...deploymentScenarios(deployment)].filter((scenario) => !scenarioFilter || scenarioFilter.includes(scenario.id));
      const outcomes = await runScenarios(
        scenarios,
        { short, heldThroughFaults: short ? 3 : 6, logDir, log, stack: deploymentStack(deployment) },
        interrupt.signal,
      );
      results.faults = faultResults(outcomes);
      for (const { scenario, result } of outcomes) for (const failure of result.failures) results.failures.push(`fault ${scenario.id}: ${failure}`);
      await everythingRunning(deployment);
    }
    if (chosen.includes('capacity') && !interrupt.signal.aborted) {
      log(`capacity: ${capacity.writers} writers, ${capacity.repeats} windows of ${capacity.secondsPerWindow} s per shape, interleaved…`);
      results.capacity = await measureCapacity(deployment, capacity, log, interrupt.signal);
    }
    if (chosen.includes('floors') && !interrupt.signal.aborted) {
      results.floors = await measureFloorsOnCluster(deployment, floors, log, interrupt.signal);
    }
    if (chosen.includes('restore') && !interrupt.signal.aborted) {
      results.restore = await rehearseRestore(deployment, { folder, held: 10, log });
      for (const failure of results.restore.failures) results.failures.push(`restore: ${failure}`);
    }
  } finally {
    results.unexpectedExits = deployment.unexpectedExitList();
    results.machine = await describeMachine(deployment.postgres.clientUrl('postgres'), binaries.temporalCli);
    log('stopping the deployment…');
    await deployment.stop();
  }
  for (const exit of results.unexpectedExits) results.failures.push(`${exit.process} exited by itself (${exit.ended}) at ${exit.at}; its log is in ${logDir}`);
  results.passed = results.failures.length === 0 && !interrupt.signal.aborted;
  results.seconds = Math.round((Date.now() - started) / 1000);
  writeResults(resultsPath, results);
  process.stdout.write(`\n${resultsMarkdown(results)}\n`);
  log(`wrote ${resultsPath}`);
  // Kept when something failed (or when asked): the processes' logs are in it.
  if (results.passed && !keepLogs) rmSync(folder, { recursive: true, force: true });
  else log(`the processes' logs are kept in ${logDir}`);
  if (interrupt.signal.aborted) return 130;
  return results.passed ? 0 : 1;
}

const code = await main().catch((error: Error) => {
  log(error.stack ?? error.message);
  return 2;
});
// A client or timer left behind must not keep CI waiting.
process.exit(code);
