import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { performance } from 'node:perf_hooks';
import { mcpCreateTask, mcpListTasks } from './mcp';
import { approveHeld, gatedWrite, type Operation, type WriteSinks } from './measure';
import type { BenchOrganization } from './organization';
import { customerSearch, taskListPage } from './reads';
import type { ArrivalOperation } from './soak-load';
import { soakCalls, type SoakCall, type SoakKind } from './soak-result';
import type { SoakWebhookType, WebhookReceiver } from './soak-webhooks';

/** Titles of the soak's MCP writes count from here, apart from its REST writes' (a workflow id includes the body). */
const mcpFirstSequence = 7_000_000;

/**
 * Task list walks, one per arrival in flight: each walks its pages with its own cursor and count, so arrivals that
 * overlap never share a cursor.
 */
function pooledWalks(apiUrl: string, token: string): Operation {
  const idle: Array<{ walk: Operation; calls: number }> = [];
  return async () => {
    const walker = idle.pop() ?? { walk: taskListPage(apiUrl, token), calls: 0 };
    try {
      await walker.walk(walker.calls++);
    } finally {
      idle.push(walker);
    }
  };
}

/** The workflow id a gated write's answer named, which its webhook events carry. */
function workflowOf(sinks: WriteSinks, what: string): string {
  const id = sinks.workflowIds?.[0];
  if (!id) throw new Error(`${what}: the answer named no workflow`);
  return id;
}

/**
 * Each kind's arrival, every answer checked (bench/measure.ts, reads.ts, mcp.ts), the webhook events of each
 * successful write expected at the receiver, each call's latency kept in `callLatencyMs` when the arrival is
 * measured. Reads alternate a customer search and a task list page; MCP calls alternate list_tasks and
 * create_task; a review is a held write submitted and then approved by the reviewer.
 */
export function soakOperations(
  apiUrl: string,
  organization: BenchOrganization,
  mcp: Client,
  receiver: WebhookReceiver,
): { operations: Record<SoakKind, ArrivalOperation>; callLatencyMs: Record<SoakCall, number[]> } {
  const callLatencyMs = Object.fromEntries(soakCalls.map((call) => [call, [] as number[]])) as Record<SoakCall, number[]>;
  /** Runs the call, keeps its latency when measured, and answers when it was sent. */
  const timed = async (call: SoakCall, measured: boolean, run: () => Promise<void>) => {
    const started = performance.now();
    await run();
    if (measured) callLatencyMs[call].push(performance.now() - started);
    return started;
  };
  const expect = (sinks: WriteSinks, what: string, types: SoakWebhookType[], requestedAt: number, measured: boolean) =>
    receiver.expect(workflowOf(sinks, what), types, requestedAt, measured);
  const search = customerSearch(apiUrl, organization.token);
  const taskPage = pooledWalks(apiUrl, organization.token);
  const list = mcpListTasks(mcp);

  const operations: Record<SoakKind, ArrivalOperation> = {
    async gatedWrites({ sequence, measured }) {
      const sinks: WriteSinks = { workflowIds: [] };
      const requestedAt = await timed('allow', measured, () => gatedWrite(apiUrl, organization.token, 'allow', sinks)(sequence));
      expect(sinks, `allow #${sequence}`, ['write.applied'], requestedAt, measured);
    },
    async reads({ sequence, measured }) {
      const half = Math.floor(sequence / 2);
      if (sequence % 2 === 0) await timed('search', measured, () => search(half));
      else await timed('taskPage', measured, () => taskPage(half));
    },
    async mcpCalls({ sequence, measured }) {
      const half = Math.floor(sequence / 2);
      if (sequence % 2 === 0) {
        await timed('mcpList', measured, () => list(half));
        return;
      }
      const sinks: WriteSinks = { workflowIds: [] };
      const requestedAt = await timed('mcpCreate', measured, () => mcpCreateTask(mcp, mcpFirstSequence, sinks)(half));
      expect(sinks, `MCP create_task #${half}`, ['write.applied'], requestedAt, measured);
    },
    async reviewsDecided({ sequence, measured }) {
      const sinks: WriteSinks = { workflowIds: [], reviewIds: [] };
      const submittedAt = await timed('reviewSubmit', measured, () => gatedWrite(apiUrl, organization.token, 'review', sinks)(sequence));
      expect(sinks, `review #${sequence}`, ['review.created'], submittedAt, measured);
      const approveSentAt = await timed('approve', measured, () => approveHeld(apiUrl, organization.reviewerToken, sinks.reviewIds!)(sequence));
      expect(sinks, `approve #${sequence}`, ['review.decided', 'write.applied'], approveSentAt, measured);
    },
  };
  return { operations, callLatencyMs };
}
