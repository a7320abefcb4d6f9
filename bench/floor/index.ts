import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { WrongAnswerError, type Operation } from '../measure';
import { floorActivities } from './activities';
import { floorAnswer } from './workflow';

const workflowsPath = fileURLToPath(new URL('./workflow.ts', import.meta.url));

/**
 * Temporal's own floor on one server: the bench's own client running update-with-start of a workflow with no
 * activity, served by a worker in the bench process. The worker has the gated-write worker's settings, the
 * client the api's kind of connection.
 */
export interface Floor {
  client: Client;
  /**
   * One floor write; its workflow ids go to `workflowIds` when given. With `localActivity`, the workflow runs one
   * local activity that does nothing before it answers (the shape of the gated write's first step).
   */
  operation(label: string, workflowIds?: string[], options?: { localActivity?: boolean }): Operation;
  close(): Promise<void>;
}

let bundle: Promise<{ code: string }> | undefined;

export async function startFloor(address: string, taskQueue: string): Promise<Floor> {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } });
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    stickyQueueScheduleToStartTimeout: '3 seconds',
    workflowBundle: await bundle,
    activities: floorActivities,
  });
  const running = worker.run();
  // The same kind of client connection as the api's (runtime/temporal.ts): the native one.
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection });
  let sequence = 0;
  return {
    client,
    operation(label, workflowIds, { localActivity = false } = {}) {
      const workflowType = localActivity ? 'floorWithLocalActivity' : 'floor';
      return async () => {
        const workflowId = `floor-${process.pid}-${Date.now().toString(36)}-${sequence++}`;
        const start = new WithStartWorkflowOperation(workflowType, {
          workflowId,
          taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        const answer = await client.withDeadline(Date.now() + 60_000, () =>
          client.workflow.executeUpdateWithStart(floorAnswer, { startWorkflowOperation: start }),
        );
        if (answer !== 'done') throw new WrongAnswerError(`${label} ${workflowId}: answered ${JSON.stringify(answer)}`);
        workflowIds?.push(workflowId);
      };
    },
    async close() {
      worker.shutdown();
      await running.catch(() => {});
      await connection.close();
      await nativeConnection.close();
    },
  };
}
