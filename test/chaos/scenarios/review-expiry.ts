import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { settleAndCount } from '../ledger';
import { decide, holdWrites, readReviews, reviewIdsOf, waitForReviews } from '../reviews';
import { Checks, seconds, type Scenario } from '../scenario';
import type { Stack } from '../stack';

/** Short enough to wait for, long enough to kill the worker well before it fires. */
const reviewExpiryMs = 12_000;

/**
 * Held writes whose review expires while the worker is dead (SIGKILLed before the expiry fires): the worker
 * started after it must end each review expired, write nothing, and the agent's status must say so.
 */
export const reviewExpiry: Scenario = {
  id: 'review-expiry',
  title: 'Review expiry across a worker restart',
  budgetMs: { full: 3 * 60_000, short: 2 * 60_000 },
  async run(context) {
    const started = Date.now();
    const heldCount = 3;
    const checks = new Checks();
    const stack = await context.stack({ workers: 1, workerEnv: { REVIEW_EXPIRY: String(reviewExpiryMs) } });

    const held = await holdWrites(stack, 'expiry', heldCount, context.signal);
    const reviewIds = reviewIdsOf(held);
    checks.equal('writes held for review', reviewIds.length, heldCount);
    // Every worker (the rehearsal runs two): no timer may fire until one is back.
    await Promise.all(stack.workers.map((worker) => worker.kill('SIGKILL')));
    const { rows } = await stack.db.query<{ first_expiry: Date }>('SELECT min(expires_at) AS first_expiry FROM reviews WHERE id = ANY($1)', [reviewIds]);
    const firstExpiry = rows[0]!.first_expiry.getTime();
    const marginMs = firstExpiry - Date.now();
    checks.that(`the worker died before the first expiry (${seconds(marginMs)} before it)`, marginMs > 0);

    // Past the expiry, while the worker is dead; a person's late approval must not bring the write back.
    await sleep(Math.max(0, marginMs) + 3000);
    const lateApproval = await decide(stack, reviewIds[0]!, 'approve');
    checks.equal('an approval after the expiry', lateApproval.status, 409);
    const rawWhileDown = await readReviews(stack.db, reviewIds);
    const expiredWhileDown = reviewIds.filter((id) => rawWhileDown.get(id)?.status === 'expired').length;

    const workerBack = Date.now();
    await Promise.all(stack.workers.map((worker) => worker.start()));
    const expired = await waitForReviews(stack.db, reviewIds, (row) => row.status === 'expired', 60_000, context.signal);
    const settleMs = Date.now() - workerBack;
    checks.equal('reviews recorded expired after the worker came back', expired, heldCount);

    const statuses = await Promise.all(
      reviewIds.map(async (id) => {
        const response = await fetch(`${stack.apiUrl}/v1/reviews/${id}/status`, { headers: { authorization: `Bearer ${stack.org.agentTokens[0]}` } });
        return ((await response.json()) as any)?.data?.status as string | undefined;
      }),
    );
    const agentSeesExpired = statuses.filter((status) => status === 'expired').length;
    checks.equal("reviews the agent's status shows expired", agentSeesExpired, heldCount);

    const closed = await workflowsCompleted(stack, reviewIds);
    checks.equal('review workflows completed', closed, heldCount);
    const ledger = await settleAndCount(stack.db, stack.org.orgId, held.map((record) => record.title), 0);
    const written = held.length - ledger.lost.length;
    checks.equal('expired writes written', written, 0);
    checks.equal('exits of the service not caused by the suite', stack.unexpectedExits(), 0);

    return {
      did: `${heldCount} writes held with REVIEW_EXPIRY=${reviewExpiryMs / 1000}s; ${stack.workers.length > 1 ? `all ${stack.workers.length} workers` : 'the worker'} SIGKILLed ${seconds(marginMs)} before the expiry, started again ${seconds(workerBack - firstExpiry)} after it`,
      figures: [
        ['held', reviewIds.length],
        ['late approve', lateApproval.status],
        ['recorded expired while down', expiredWhileDown],
        ['expired after restart', expired],
        ['agent status expired', agentSeesExpired],
        ['workflows completed', closed],
        ['written', written],
        ['expired after worker start', seconds(settleMs)],
        ['unexpected exits', stack.unexpectedExits()],
        ['time', seconds(Date.now() - started)],
      ],
      // An expired write written is a decision not kept: counted with the lost.
      tally: { lost: written, doubled: 0, exits: stack.unexpectedExits() },
      failures: checks.failures,
    };
  },
};

/** How many of the reviews' workflows finished (completed, not failed), waiting up to 30 s for them. */
async function workflowsCompleted(stack: Stack, reviewIds: string[]): Promise<number> {
  const { rows } = await stack.db.query<{ workflow_id: string }>('SELECT workflow_id FROM reviews WHERE id = ANY($1)', [reviewIds]);
  const connection = await Connection.connect({ address: stack.temporal.address });
  try {
    const client = new Client({ connection });
    const { WorkflowExecutionStatus } = protos.temporal.api.enums.v1;
    const deadline = Date.now() + 30_000;
    for (;;) {
      // The raw description: its memo stays undecoded, so that encrypted payloads need no key here.
      const statuses = await Promise.all(
        rows.map(async (row) => {
          const described = await client.workflowService.describeWorkflowExecution({ namespace: client.options.namespace, execution: { workflowId: row.workflow_id } });
          return described.workflowExecutionInfo?.status;
        }),
      );
      const running = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
      const completedStatus = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED;
      const completed = statuses.filter((status) => status === completedStatus).length;
      if (completed === rows.length || Date.now() > deadline || statuses.some((status) => status !== running && status !== completedStatus)) {
        return completed;
      }
      await sleep(500);
    }
  } finally {
    await connection.close();
  }
}
