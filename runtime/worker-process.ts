import { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { Database } from '../db/database';
import type { SecretBox } from '../domain/kit/secret-box';
import { createWorker } from '../worker';
import { ensureAuditSealSchedule, ensureAuditWitnessSchedule, ensureRetentionSchedule } from './schedules';
import { outboundPolicy, type Config } from './config';
import { startOutboxRelay } from './outbox-relay';
import { smtpMailer } from '../domain/notify/mailer';
import { connectWorkerConnection, dataConverterFor, installTemporalRuntime } from './temporal';
import { currentTracing, tracingFor } from './tracing';

export interface RunningWorker {
  worker: Worker;
  /** Settles when the worker stops, with its error if it failed. */
  done: Promise<void>;
  stop(): Promise<void>;
}

export async function startWorker(config: Config, db: Database, secrets: SecretBox, temporalAddress: string): Promise<RunningWorker> {
  installTemporalRuntime(config, { workerMetrics: true });
  const stopTracing = tracingFor(config, 'gatehouse-worker');
  const tracing = currentTracing();
  let connection: NativeConnection | undefined;
  const mailer = config.smtp.url ? smtpMailer(config.smtp.url, config.smtp.from) : undefined;
  let worker: Worker;
  try {
    connection = await connectWorkerConnection(config, temporalAddress);
    worker = await createWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      db,
      secrets,
      reviewExpiryMs: config.reviewExpiryMs,
      retention: config.retention,
      workflowTaskPollers: config.temporal.workflowTaskPollers,
      nonStickyPollRatio: config.temporal.nonStickyPollRatio,
      preloadWorkflowModules: config.temporal.preloadWorkflowModules,
      plugins: tracing ? [tracing.temporal] : [],
      dataConverter: dataConverterFor(config),
      webhooks: {
        policy: outboundPolicy(config),
        publicUrl: config.publicUrl,
        timeoutMs: config.webhooks.timeoutMs,
        disableAfter: config.webhooks.disableAfter,
        mailer,
      },
    });
  } catch (error) {
    await connection?.close().catch(() => {});
    await stopTracing();
    throw error;
  }
  // The schedules hold no business data (a fixed memo, no arguments): they are kept out of the codec, so that they
  // stay readable, and updatable, after the key they would have been encrypted with is rotated out.
  const schedules = new Client({ connection: connection!, namespace: config.temporal.namespace });
  const upkeep = [
    { ensure: ensureRetentionSchedule, what: 'the retention schedule', meanwhile: 'old rows are kept until it is' },
    { ensure: ensureAuditSealSchedule, what: "the audit ledger's sealing schedule", meanwhile: 'new audit events wait to be chained until it is' },
    { ensure: ensureAuditWitnessSchedule, what: "the audit ledger's witness schedule", meanwhile: 'no ledger head is sent to webhooks until it is' },
  ];
  for (const { ensure, what, meanwhile } of upkeep) {
    try {
      await ensure(schedules, { taskQueue: config.temporal.taskQueue });
    } catch (error) {
      // Upkeep can wait for the next worker to start; the gated writes cannot.
      process.stderr.write(`gatehouse: ${what} could not be made (${(error as Error).message.split('\n')[0]}); ${meanwhile}\n`);
    }
  }
  // The outbox's events and redeliveries, handed to Temporal from this worker (others share the work).
  let relayTrouble = 0;
  const relay = startOutboxRelay({
    db,
    client: new Client({ connection: connection!, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config) }),
    taskQueue: config.temporal.taskQueue,
    retry: config.webhooks.retry,
    onError: (error) => {
      // Once a minute at most: the database or Temporal away is told by their own checks too.
      if (Date.now() - relayTrouble < 60_000) return;
      relayTrouble = Date.now();
      process.stderr.write(`gatehouse: the webhook outbox could not be relayed (${error.message.split('\n')[0]}); retrying\n`);
    },
  });
  const done = worker.run().finally(async () => {
    await relay.stop();
    mailer?.close();
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
