import { setTimeout as sleep } from 'node:timers/promises';
import { checkLoad, loadFigures, settleAndCount } from '../ledger';
import { appliedOnce, decide, holdWrites, reviewIdsOf, waitForReviews } from '../reviews';
import { Checks, seconds, times, type Scenario } from '../scenario';
import { WriteLoad } from '../writers';

/**
 * The Temporal server stopped and started again (its state in a file, on the same port) while writes wait for
 * review and writers keep writing; then every held write is approved, and each must be applied once.
 */
export const temporalRestart: Scenario = {
  id: 'temporal-restart',
  title: 'Temporal restart with held writes',
  budgetMs: { full: 8 * 60_000, short: 4 * 60_000 },
  async run(context) {
    const started = Date.now();
    const heldCount = context.short ? 6 : 20;
    const restarts = context.short ? 1 : 2;
    const checks = new Checks();
    const stack = await context.stack({ workers: 1 });

    const held = await holdWrites(stack, 'temporal', heldCount, context.signal);
    const reviewIds = reviewIdsOf(held);
    checks.equal('writes held for review', reviewIds.length, heldCount);

    const load = new WriteLoad({
      apiUrl: stack.apiUrl,
      tokens: stack.org.agentTokens.slice(1, 5),
      prefix: 'temporal-restart',
      maxWritesPerWriter: context.short ? 40 : 100,
      signal: context.signal,
    });
    let slowestRecoveryMs = 0;
    let downMs = 0;
    try {
      checks.that('the writers got answers before the restart', await load.progressed(8, 60_000));
      for (let round = 0; round < restarts && !context.signal.aborted; round += 1) {
        const stopped = Date.now();
        await stack.temporal.stop();
        await sleep(3000);
        await stack.temporal.start();
        downMs = Math.max(downMs, Date.now() - stopped);
        const back = Date.now();
        const recovered = await load.progressed(1, 120_000);
        slowestRecoveryMs = Math.max(slowestRecoveryMs, Date.now() - back);
        checks.that(`writes answered again within 120 s of restart ${round + 1}`, recovered);
        await load.progressed(8, 60_000);
      }
    } finally {
      await load.stop();
    }

    const decisions = await Promise.all(reviewIds.map((id) => decide(stack, id, 'approve')));
    const approvedOk = decisions.filter((decision) => decision.status === 200).length;
    checks.equal('approvals answered 200', approvedOk, reviewIds.length);
    const applied = await waitForReviews(stack.db, reviewIds, appliedOnce, 90_000, context.signal);
    checks.equal('approved writes applied', applied, reviewIds.length);

    const heldLedger = await settleAndCount(stack.db, stack.org.orgId, held.map((record) => record.title), 5_000);
    checks.equal('held writes lost', heldLedger.lost.length, 0);
    checks.equal('held writes duplicated', heldLedger.duplicated.length, 0);
    const ledger = await settleAndCount(stack.db, stack.org.orgId, load.records.map((record) => record.title));
    checkLoad(checks, load.counts, ledger, load.records);
    checks.equal('exits of the service not caused by the suite', stack.unexpectedExits(), 0);

    return {
      did: `${heldCount} writes held for review, 4 writers; ${stack.temporal.description} stopped and restarted ${times(restarts)}; then all held writes approved`,
      figures: [
        ['held', reviewIds.length],
        ['approved 200', approvedOk],
        ['held applied', applied],
        ['held lost', heldLedger.lost.length],
        ['held duplicated', heldLedger.duplicated.length],
        ...loadFigures(load.counts, ledger, load.records),
        ['Temporal down', seconds(downMs)],
        ['slowest recovery', seconds(slowestRecoveryMs)],
        ['unexpected exits', stack.unexpectedExits()],
        ['time', seconds(Date.now() - started)],
      ],
      tally: { lost: ledger.lost.length + heldLedger.lost.length, doubled: ledger.duplicated.length + heldLedger.duplicated.length, exits: stack.unexpectedExits() },
      failures: checks.failures,
    };
  },
};
