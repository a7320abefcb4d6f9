import { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Database } from '../db/database';
import { createWorker } from '../worker';
import { ensureRetentionSchedule } from './retention-schedule';
import type { Config } from './config';
import { connectWorkerConnection, dataConverterFor, installTemporalRuntime } from './temporal';
import { currentTracing, tracingFor } from './tracing';

export interface RunningWorker {
  worker: Worker;
  /** Settles when the worker stops, with its error if it failed. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(config: Config, db: Database, temporalAddress: string): Promise<RunningWorker> {
  installTemporalRuntime(config, { workerMetrics: true });
  const stopTracing = tracingFor(config, 'gatehouse-worker');
  const tracing = currentTracing();
  let connection: NativeConnection | undefined;
  let worker: Worker;
  try {
    connection = await connectWorkerConnection(temporalAddress, config.temporal.namespace);
    worker = await createWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      db,
      reviewExpiryMs: config.reviewExpiryMs,
      retention: config.retention,
      plugins: tracing ? [tracing.temporal] : [],
      dataConverter: dataConverterFor(config),
    });
  } catch (error) {
    await connection?.close().catch(() => {});
    await stopTracing();
    throw error;
  }
  // The schedule holds no business data (a fixed memo, no arguments): it is kept out of the codec, so that it stays
  // readable, and updatable, after the key it would have been encrypted with is rotated out.
  try {
    await ensureRetentionSchedule(new Client({ connection, namespace: config.temporal.namespace }), { taskQueue: config.temporal.taskQueue });
  } catch (error) {
    // Pruning can wait for the next worker to start; the gated writes cannot.
    process.stderr.write(`gatehouse: the retention schedule could not be made (${(error as Error).message.split('\n')[0]}); old rows are kept until it is\n`);
  }
  const done = worker.run().finally(async () => {
    try {
      await connection!.close();
    } finally {
      await stopTracing();
    }
  });
  return {
    worker,
    done,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
