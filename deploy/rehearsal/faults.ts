import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectDatabase } from '../../db/database';
import { createChaosOrganization } from '../../test/chaos/fixture';
import { runFaultRounds } from '../../test/chaos/fault-rounds';
import type { GatehouseProcess } from '../../test/chaos/processes';
import { seconds, times, type Scenario } from '../../test/chaos/scenario';
import { applicationNames, type Stack, type StackOptions } from '../../test/chaos/stack';
import type { Deployment } from './deployment';
import type { TemporalService } from './temporal';

/**
 * The chaos suite's scenarios run against the deployment rather than against stacks of their own: each scenario gets
 * an organization of its own on the running deployment, writes through the proxy, and faults the deployment's own
 * processes. Afterwards every part is running again before the next scenario starts.
 */
export function deploymentStack(deployment: Deployment) {
  return async (scenarioId: string, options: StackOptions): Promise<Stack> => {
    const db = connectDatabase(deployment.databaseUrl(applicationNames.driver), { maxConnections: 4 });
    const org = await createChaosOrganization(db, options.agents ?? 8);
    const exitsBefore = deployment.unexpectedExits();
    // Settings of the scenario's own for the workers (a short REVIEW_EXPIRY): the deployment's workers make way for
    // workers of the scenario's, on the same hosts, until it ends.
    let workers = deployment.workers;
    if (options.workerEnv) {
      await Promise.all(deployment.workers.map((worker) => worker.stop()));
      workers = [...deployment.network.hosts.values()]
        .filter((host) => host.name.startsWith('worker-'))
        .map((host) => deployment.gatehouse('worker', host, options.workerEnv, `${host.name}-${scenarioId}`));
      await Promise.all(workers.map((worker) => worker.start(180_000)));
    }
    const scenarioWorkers = workers === deployment.workers ? [] : workers;
    return {
      databaseName: deployment.databaseName,
      databaseUrl: deployment.postgres.clientUrl(deployment.databaseName),
      db,
      temporal: {
        address: deployment.temporal.clientAddress,
        description: "Temporal's four services (frontend, history, matching, worker; on PostgreSQL)",
        stop: () => deployment.temporal.stop(),
        start: () => deployment.temporal.start(),
      },
      postgres: { description: "the deployment's PostgreSQL server (Gatehouse's and Temporal's databases)", restart: () => deployment.postgres.restart() },
      api: deployment.apis[0]!,
      apis: deployment.apis,
      apiUrl: `${deployment.proxyUrl}/api`,
      workers,
      org,
      unexpectedExits: () => deployment.unexpectedExits() - exitsBefore + scenarioWorkers.reduce((sum, worker) => sum + worker.unexpectedExits.length, 0),
      async teardown() {
        await Promise.all(scenarioWorkers.map((worker) => worker.close()));
        await everythingRunning(deployment);
        await db.close();
      },
    };
  };
}

/** Starts whatever part a scenario left stopped, and waits until the api answers ready through the proxy. */
export async function everythingRunning(deployment: Deployment): Promise<void> {
  for (const service of Object.values(deployment.temporal.services)) if (!service.running) await service.start(180_000);
  await Promise.all([...deployment.apis, ...deployment.workers].filter((process) => !process.running).map((process) => process.start(180_000)));
  if (!deployment.proxy.running) await deployment.proxy.start();
  await deployment.ready();
}

/** Faults only this shape has: one Temporal service restarted alone, a host cut off, a rolling restart. */
export function deploymentScenarios(deployment: Deployment): Scenario[] {
  return [temporalServiceRestart(deployment, 'history'), temporalServiceRestart(deployment, 'matching'), workerPartition(deployment), rollingRestart(deployment)];
}

function temporalServiceRestart(deployment: Deployment, service: TemporalService): Scenario {
  return {
    id: `${service}-restart`,
    title: `Temporal's ${service} service restarted alone`,
    budgetMs: { full: 6 * 60_000, short: 4 * 60_000 },
    async run(context) {
      const restarts = context.short ? 1 : 2;
      const stack = await context.stack();
      let slowestRestartMs = 0;
      const { checks, figures, tally } = await runFaultRounds(context, stack, {
        prefix: `${service}-restart`,
        rounds: restarts,
        answersBetween: 16,
        maxWritesPerWriter: context.short ? 40 : 100,
        async fault() {
          const started = Date.now();
          await deployment.temporal.restart(service);
          slowestRestartMs = Math.max(slowestRestartMs, Date.now() - started);
        },
      });
      return {
        did: `8 writers; Temporal's ${service} process stopped (SIGTERM) and started again ${times(restarts)}, the other services running`,
        figures: [...figures, [`slowest ${service} restart`, seconds(slowestRestartMs)]],
        tally,
        failures: checks.failures,
      };
    },
  };
}

/** How long a host stays cut off. */
const partitionMs = 30_000;

function workerPartition(deployment: Deployment): Scenario {
  return {
    id: 'worker-partition',
    title: 'A worker host cut off the network for 30 s',
    budgetMs: { full: 8 * 60_000, short: 5 * 60_000 },
    async run(context) {
      const cuts = context.short ? 1 : 2;
      const stack = await context.stack();
      let slowestReturnMs = 0;
      const stayedAway: string[] = [];
      const { checks, figures, tally } = await runFaultRounds(context, stack, {
        prefix: 'worker-partition',
        rounds: cuts,
        answersBetween: 16,
        // Enough for the writers to write on through every cut (30 s each) and the return after it.
        maxWritesPerWriter: context.short ? 250 : 500,
        async fault(round) {
          const host = `worker-${(round % deployment.workers.length) + 1}`;
          const worker = deployment.workers[round % deployment.workers.length]!;
          await deployment.network.cut(host);
          try {
            await sleep(partitionMs);
          } finally {
            await deployment.network.restore(host);
          }
          const restored = Date.now();
          // The cut worker must come back by itself: polling its task queue again, not restarted by anyone.
          if (!(await pollsAgain(deployment, worker, restored, 120_000))) stayedAway.push(host);
          slowestReturnMs = Math.max(slowestReturnMs, Date.now() - restored);
        },
      });
      for (const host of stayedAway) checks.failures.push(`${host}'s worker did not poll again within 120 s of its network coming back`);
      return {
        did: `8 writers; a worker's host cut off the network (its link down) for ${partitionMs / 1000} s and restored ${times(cuts)}, each worker in turn`,
        figures: [...figures, ['slowest return to polling', seconds(slowestReturnMs)]],
        tally,
        failures: checks.failures,
      };
    },
  };
}

/** Whether the worker (by its pid, in its Temporal identity `pid@host`) polls the task queue after `since`. */
async function pollsAgain(deployment: Deployment, worker: GatehouseProcess, since: number, timeoutMs: number): Promise<boolean> {
  const connection = await Connection.connect({ address: deployment.temporal.clientAddress });
  try {
    const client = new Client({ connection });
    const { TaskQueueKind, TaskQueueType } = protos.temporal.api.enums.v1;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const described = await client.workflowService.describeTaskQueue({
        namespace: deployment.namespace,
        taskQueue: { name: deployment.taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      const back = (described.pollers ?? []).some(
        (poller) => poller.identity?.startsWith(`${worker.pid}@`) && Number(poller.lastAccessTime?.seconds ?? 0) * 1000 >= since,
      );
      if (back) return true;
      await sleep(1000);
    }
    return false;
  } finally {
    await connection.close();
  }
}

function rollingRestart(deployment: Deployment): Scenario {
  return {
    id: 'rolling-restart',
    title: 'A rolling restart of every api and worker under load',
    budgetMs: { full: 8 * 60_000, short: 6 * 60_000 },
    async run(context) {
      const stack = await context.stack();
      const { checks, figures, tally } = await runFaultRounds(context, stack, {
        prefix: 'rolling-restart',
        rounds: 1,
        answersBetween: 16,
        // Enough to write on through four restarts, each waiting for its process to be ready.
        maxWritesPerWriter: context.short ? 250 : 400,
        async fault() {
          // One at a time, as an upgrade goes: each stopped as an operator stops it (SIGTERM), started, and ready
          // (the api answering through the proxy) before the next.
          for (const process of [...deployment.workers, ...deployment.apis]) {
            await process.stop();
            await process.start(180_000);
            await deployment.ready();
          }
        },
      });
      return {
        did: `8 writers; the ${deployment.workers.length} workers, then the ${deployment.apis.length} apis, each stopped (SIGTERM) and started again, one at a time`,
        figures,
        tally,
        failures: checks.failures,
      };
    },
  };
}
