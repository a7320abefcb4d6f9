import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  type Client,
} from '@temporalio/client';
import protos from '@temporalio/proto';
import type { GateAnswer, GatedWriteResult, GatedWriteRequest, ReviewVerdict } from '../../domain/gate/contract';
import type { gatedWriteV3 } from '../../workflows/gated-write';
import { changesetWorkflowType, gateAnswerUpdate, gatedWriteWorkflowType, reviewDecidedSignal, searchAttributes } from '../../workflows/messages';

/** How the api hands gated writes to Temporal, and tells held writes that a person decided. */
export interface GateClient {
  /** Starts (or joins) the write's workflow and returns its first answer in the same round trip. */
  submit(workflowId: string, request: GatedWriteRequest): Promise<GateAnswer>;
  /** The same for a changeset (its own workflow type, found by the same search attributes; operation `changesets.submit`). */
  submitChangeset(workflowId: string, request: GatedWriteRequest): Promise<GateAnswer>;
  /** Tells the workflow a person's decision once it is recorded (the verdict saves it a read), and waits a while for its outcome. */
  reviewDecided(workflowId: string, verdict: ReviewVerdict, waitMs: number): Promise<GatedWriteResult | undefined>;
  /**
   * Tells held writes' workflows to read their reviews now (withdrawn, say), without waiting for them. Best effort:
   * a workflow not told reads its review at its next periodic re-read all the same.
   */
  reviewsChanged(workflowIds: readonly string[]): Promise<void>;
  /**
   * Whether gated writes can be answered now: Temporal answers, and a worker polled the task queue lately.
   * Undefined when ready, else why not (one sentence).
   */
  notReady(timeoutMs: number): Promise<string | undefined>;
}

export class GateUnavailableError extends Error {}

export function createGateClient(client: Client, options: { taskQueue: string; answerTimeoutMs?: number }): GateClient {
  const answerTimeoutMs = options.answerTimeoutMs ?? 30_000;
  async function startAndAnswer(workflowType: string, workflowId: string, request: GatedWriteRequest, summary: string): Promise<GateAnswer> {
    const start = new WithStartWorkflowOperation<typeof gatedWriteV3>(workflowType, {
      workflowId,
      taskQueue: options.taskQueue,
      args: [request],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A run that failed (its write never applied) may be retried under the same Idempotency-Key.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      memo: { organization: request.orgSlug, operation: request.operation, apiKey: request.apiKey.label },
      // What operators find it by; the workflow adds its decision and its review's status.
      typedSearchAttributes: [
        { key: searchAttributes.organization, value: request.orgSlug },
        { key: searchAttributes.operation, value: request.operation },
        { key: searchAttributes.resource, value: request.operation.split('.')[0]! },
        { key: searchAttributes.apiKey, value: request.apiKey.id },
        { key: searchAttributes.interface, value: request.interface },
      ],
      staticSummary: summary,
    });
    try {
      return await client.withDeadline(Date.now() + answerTimeoutMs, () =>
        client.workflow.executeUpdateWithStart(gateAnswerUpdate, { startWorkflowOperation: start }),
      );
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        const outcome = await client.workflow.getHandle<typeof gatedWriteV3>(workflowId).result();
        return outcome.answer;
      }
      throw new GateUnavailableError(`no answer from the gated-write workflow ${workflowId}: ${(error as Error).message}`, { cause: error });
    }
  }

  const by = (request: GatedWriteRequest) => `by key "${request.apiKey.label}" over ${request.interface.toUpperCase()} in ${request.orgSlug}`;
  return {
    submit: (workflowId, request) => startAndAnswer(gatedWriteWorkflowType, workflowId, request, `${request.operation} ${by(request)}`),

    submitChangeset(workflowId, request) {
      const items = (request.input as { items: { operation: string }[] }).items;
      const summary = `changeset of ${items.length} writes (${[...new Set(items.map((item) => item.operation))].join(', ')}) ${by(request)}`;
      return startAndAnswer(changesetWorkflowType, workflowId, request, summary.slice(0, 400));
    },

    async notReady(timeoutMs) {
      let pollers: number;
      try {
        const described = await client.withDeadline(Date.now() + timeoutMs, () =>
          client.workflowService.describeTaskQueue({
            namespace: client.options.namespace,
            taskQueue: { name: options.taskQueue, kind: protos.temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
            taskQueueType: protos.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
          }),
        );
        // Temporal lists the workers that polled in the last few minutes; a live worker's long poll is renewed
        // at least every 70 s or so, so only those seen within 90 s count.
        const since = Date.now() - 90_000;
        pollers = (described.pollers ?? []).filter((poller) => {
          const seen = poller.lastAccessTime?.seconds;
          return seen != null && Number(seen) * 1000 >= since;
        }).length;
      } catch (error) {
        return `Temporal does not answer: ${(error as Error).message.split('\n')[0]}`;
      }
      return pollers > 0 ? undefined : `No worker polls the task queue ${options.taskQueue}`;
    },

    async reviewsChanged(workflowIds) {
      // A signal without a verdict: every version of the workflows reads the record on it (workflows/messages.ts).
      await Promise.allSettled(workflowIds.map((workflowId) => client.workflow.getHandle(workflowId).signal(reviewDecidedSignal)));
    },

    async reviewDecided(workflowId, verdict, waitMs) {
      const handle = client.workflow.getHandle<typeof gatedWriteV3>(workflowId);
      try {
        await handle.signal(reviewDecidedSignal, verdict);
        return await client.withDeadline(Date.now() + waitMs, () => handle.result());
      } catch {
        // The decision is recorded; the workflow reads it when it next checks (or the signal arrives
        // late). Only the wait ended, so the caller answers with the review as it stands.
        return undefined;
      }
    },
  };
}
