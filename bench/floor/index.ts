import { Client, WithStartWorkflowOperation, type WorkflowStartOptions } from '@temporalio/client';
import type { DataConverter, SearchAttributePair } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { grpcCompressionFor } from '../../runtime/temporal';
import { searchAttributes } from '../../workflows/messages';
import { WrongAnswerError, type Operation } from '../measure';
import { floorActivities, type FloorSample } from './activities';
import { fairFloorAnswer, floorAnswer } from './workflow';

const workflowsPath = fileURLToPath(new URL('./workflow.ts', import.meta.url));

/** The floors' rungs, from Temporal's least to what a gated Allow carries through Temporal. */
export type FloorShape = 'floor' | 'floorLocal' | 'fairFloor' | 'fairFloorLocal';

const workflowTypes: Record<FloorShape, string> = {
  floor: 'floor',
  floorLocal: 'floorWithLocalActivity',
  fairFloor: 'fairFloor',
  fairFloorLocal: 'fairFloorWithLocalActivity',
};

/**
 * What a real gated Allow handed Temporal, read back from its run: the start's input, memo, summary and search
 * attributes, and the answer its update gave. The fair floors start with the same and answer the same.
 */
export interface GatedAllowSample extends FloorSample {
  input: unknown;
  memo: Record<string, unknown> | undefined;
  summary: string | undefined;
  searchAttributes: SearchAttributePair[];
  /** The bytes of the start's input and of the answer, as JSON (the report states what the floors carry). */
  inputBytes: number;
  answerBytes: number;
}

/**
 * Temporal's own floors on one server: the bench's own client running update-with-start, served by a worker in
 * the bench process with the gated-write worker's settings, the client the api's kind of connection.
 */
export interface Floor {
  client: Client;
  /** Reads a gated Allow's run back, for the fair floors to carry what it carried; before any fair floor runs. */
  useGatedAllow(workflowId: string): Promise<GatedAllowSample>;
  /** One floor write of `shape`; its workflow ids go to `workflowIds` when given. */
  operation(label: string, shape: FloorShape, workflowIds?: string[]): Operation;
  close(): Promise<void>;
}

let bundle: Promise<{ code: string }> | undefined;

export interface FloorOptions {
  /** The service's TEMPORAL_GRPC_COMPRESSION, so that the floors' connections are made as the api's and the worker's. */
  grpcCompression?: 'auto' | 'gzip' | 'none';
  /** The service's payload codec, where it encrypts: the fair floors then carry ciphertext as the gated write does. */
  dataConverter?: DataConverter;
}

export async function startFloor(address: string, taskQueue: string, { grpcCompression = 'auto', dataConverter }: FloorOptions = {}): Promise<Floor> {
  const connectionOptions = { address, grpcCompression: grpcCompressionFor(grpcCompression, address) };
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } });
  const sample: { current?: GatedAllowSample } = {};
  const nativeConnection = await NativeConnection.connect(connectionOptions);
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    stickyQueueScheduleToStartTimeout: '3 seconds',
    workflowBundle: await bundle,
    dataConverter,
    activities: floorActivities(sample),
  });
  const running = worker.run();
  // The same kind of client connection as the api's (runtime/temporal.ts): the native one.
  const connection = await NativeConnection.connect(connectionOptions);
  const client = new Client({ connection, dataConverter });
  let sequence = 0;

  const startOptions = (shape: FloorShape, workflowId: string): WorkflowStartOptions & { workflowIdConflictPolicy: 'USE_EXISTING' } => {
    const base = { workflowId, taskQueue, workflowIdConflictPolicy: 'USE_EXISTING' as const };
    if (shape === 'floor' || shape === 'floorLocal') return base;
    const fair = sample.current;
    if (!fair) throw new Error('the fair floor needs a gated Allow read back first (useGatedAllow)');
    return {
      ...base,
      args: [fair.input],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: fair.memo,
      typedSearchAttributes: fair.searchAttributes,
      staticSummary: fair.summary,
    };
  };

  return {
    client,
    async useGatedAllow(workflowId) {
      const handle = client.workflow.getHandle(workflowId);
      const { answer } = (await handle.result()) as { answer: unknown };
      const description = await handle.describe();
      const history = await handle.fetchHistory();
      const [payload] = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      if (!payload) throw new Error(`the gated Allow ${workflowId} has no start input`);
      const input = await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, [payload]);
      // The five the api sets at the start; the workflow upserts the decision itself.
      const startKeys = [searchAttributes.organization, searchAttributes.operation, searchAttributes.resource, searchAttributes.apiKey, searchAttributes.interface];
      const pairs = startKeys.map((key) => {
        const value = description.typedSearchAttributes.get(key);
        if (value === undefined) throw new Error(`the gated Allow ${workflowId} has no ${key.name}`);
        return { key, value } as SearchAttributePair;
      });
      sample.current = {
        input,
        answer,
        memo: description.memo,
        summary: await description.staticSummary(),
        searchAttributes: pairs,
        inputBytes: Buffer.byteLength(JSON.stringify(input)),
        answerBytes: Buffer.byteLength(JSON.stringify(answer)),
      };
      return sample.current;
    },
    operation(label, shape, workflowIds) {
      return async () => {
        const workflowId = `${shape}-${process.pid}-${Date.now().toString(36)}-${sequence++}`;
        const start = new WithStartWorkflowOperation(workflowTypes[shape], startOptions(shape, workflowId));
        const deadline = Date.now() + 60_000;
        if (shape === 'floor' || shape === 'floorLocal') {
          const answer = await client.withDeadline(deadline, () => client.workflow.executeUpdateWithStart(floorAnswer, { startWorkflowOperation: start }));
          if (answer !== 'done') throw new WrongAnswerError(`${label} ${workflowId}: answered ${JSON.stringify(answer)}`);
        } else {
          const expected = sample.current!.answer;
          const args: [unknown?] = shape === 'fairFloor' ? [expected] : [];
          const answer = await client.withDeadline(deadline, () =>
            client.workflow.executeUpdateWithStart(fairFloorAnswer, { args, startWorkflowOperation: start }),
          );
          if (!isDeepStrictEqual(answer, expected)) throw new WrongAnswerError(`${label} ${workflowId}: answered ${JSON.stringify(answer).slice(0, 300)}`);
        }
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
