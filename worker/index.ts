import { bundleWorkflowCode, type NativeConnection, Worker, type WorkerPlugin, type WorkflowBundleOption } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { fileURLToPath } from 'node:url';
import { createActivities, type ActivityDependencies } from '../activities';
import type { Database } from '../db/database';
import type { SecretBox } from '../domain/kit/secret-box';
import type { RetentionRules } from '../domain/usage/retention';

export const workflowsPath = fileURLToPath(new URL('../workflows', import.meta.url));

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  db: Database;
  /** Opens the secrets kept sealed in the database (SECRETS_ENCRYPTION_KEYS). */
  secrets: SecretBox;
  reviewExpiryMs: number;
  /** How often a held write re-reads its review (default 15 minutes). */
  reviewRecheckMs?: number;
  /** What the retention schedule's runs prune (nothing when not given). */
  retention?: RetentionRules;
  /** A bundle made once ahead (tests, several workers in one process); else the workflows are bundled now. */
  workflowBundle?: WorkflowBundleOption;
  /** Temporal plugins (tracing's interceptors); a bundle made ahead must have been made with the same ones. */
  plugins?: WorkerPlugin[];
  /** The payload codec (encryption) the api's client uses too. */
  dataConverter?: DataConverter;
  /** How webhooks are delivered (where they may go, their links, when an endpoint is switched off). */
  webhooks?: ActivityDependencies['webhooks'];
  /** Pollers of workflow tasks (the SDK's default, 10, when not given) and their share on the task queue (default 0.5). */
  workflowTaskPollers?: number;
  nonStickyPollRatio?: number;
  /** Load the workflows' stateless modules once per reused sandbox (when the workflows are bundled here). */
  preloadWorkflowModules?: boolean;
}

/**
 * Workflow modules with no state of their own (constants, message definitions, pure functions): safe to load once
 * and share, frozen, between the runs of a reused sandbox.
 */
export const statelessWorkflowModules = ['messages', 'activity-options', 'refusal'].map((name) => fileURLToPath(new URL(`../workflows/${name}.ts`, import.meta.url)));

/** A worker running the gated-write workflow, the retention workflow, and their activities. */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    // A worker that died leaves its cached workflows' next tasks on its own (sticky) queue until this passes;
    // then any worker takes them, replaying the history. Short, so that a write in flight answers soon.
    stickyQueueScheduleToStartTimeout: '3 seconds',
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath, bundlerOptions: options.preloadWorkflowModules ? { preloadModules: statelessWorkflowModules } : undefined }),
    ...(options.workflowTaskPollers ? { workflowTaskPollerBehavior: { type: 'simple-maximum' as const, maximum: options.workflowTaskPollers } } : {}),
    // Every gated write's first task comes from the task queue, not the worker's sticky queue: half the pollers wait
    // there (the SDK's default is a fifth; `npm run bench -- --tuning` measured half as faster, a little).
    nonStickyToStickyPollRatio: options.nonStickyPollRatio ?? 0.5,
    plugins: options.plugins,
    dataConverter: options.dataConverter,
    activities: createActivities({
      db: options.db,
      secrets: options.secrets,
      reviewExpiryMs: options.reviewExpiryMs,
      reviewRecheckMs: options.reviewRecheckMs,
      retention: options.retention,
      webhooks: options.webhooks,
    }),
  });
}

/** Bundles the workflows for the workflow sandbox; fails on an import a workflow may not use. */
export async function bundleWorkflows(plugins: WorkerPlugin[] = [], options: { failureConverterPath?: string } = {}): Promise<{ code: string }> {
  return bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger, plugins, ...options });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};
