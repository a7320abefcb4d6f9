import { settleAndCount } from '../ledger';
import { appliedOnce, decide, holdWrites, reviewIdsOf, waitForReviews } from '../reviews';
import { Checks, seconds, type Scenario } from '../scenario';

/** Held writes approved through the API while no worker runs; a worker started afterwards must apply each once. */
export const approveWorkersDown: Scenario = {
  id: 'approve-workers-down',
  title: 'Approve while workers are down',
  budgetMs: { full: 5 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const started = Date.now();
    const heldCount = context.short ? 6 : 20;
    const checks = new Checks();
    const stack = await context.stack({ workers: 2 });

    const held = await holdWrites(stack, 'workers-down', heldCount, context.signal);
    const reviewIds = reviewIdsOf(held);
    checks.equal('writes held for review', reviewIds.length, heldCount);

    const stops = await Promise.all(stack.workers.map((worker) => worker.stop()));
    checks.equal('workers that stopped cleanly (exit code 0)', stops.filter((exit) => exit?.code === 0).length, stack.workers.length);

    const decisions = await Promise.all(reviewIds.map((id) => decide(stack, id, 'approve')));
    const approvedOk = decisions.filter((decision) => decision.status === 200 && decision.body?.data?.status === 'approved').length;
    checks.equal('approvals answered 200 approved', approvedOk, reviewIds.length);
    const slowestApproveMs = Math.max(0, ...decisions.map((decision) => decision.ms));
    const whileDown = await settleAndCount(stack.db, stack.org.orgId, held.map((record) => record.title), 0);
    const appliedWhileDown = held.length - whileDown.lost.length;
    checks.equal('writes applied while no worker ran', appliedWhileDown, 0);

    const workerBack = Date.now();
    await stack.workers[0]!.start();
    const applied = await waitForReviews(stack.db, reviewIds, appliedOnce, 90_000, context.signal);
    const applyMs = Date.now() - workerBack;
    checks.equal('approved writes applied once a worker started', applied, reviewIds.length);
    const ledger = await settleAndCount(stack.db, stack.org.orgId, held.map((record) => record.title), 5_000);
    checks.equal('lost writes', ledger.lost.length, 0);
    checks.equal('duplicated writes', ledger.duplicated.length, 0);
    checks.equal('exits of the service not caused by the suite', stack.unexpectedExits(), 0);

    return {
      did: `${heldCount} writes held; every worker (${stack.workers.length}) stopped (SIGTERM); all approved through the API; one worker started`,
      figures: [
        ['held', reviewIds.length],
        ['approved 200', approvedOk],
        ['slowest approve answer', seconds(slowestApproveMs)],
        ['applied while down', appliedWhileDown],
        ['applied', applied],
        ['lost', ledger.lost.length],
        ['duplicated', ledger.duplicated.length],
        ['all applied after worker start', seconds(applyMs)],
        ['unexpected exits', stack.unexpectedExits()],
        ['time', seconds(Date.now() - started)],
      ],
      tally: { lost: ledger.lost.length, doubled: ledger.duplicated.length, exits: stack.unexpectedExits() },
      failures: checks.failures,
    };
  },
};
