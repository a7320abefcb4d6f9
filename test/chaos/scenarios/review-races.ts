import { settleAndCount } from '../ledger';
import { appliedOnce, decide, holdWrites, readReviews, reviewIdsOf, waitForReviews, type Decision } from '../reviews';
import { Checks, seconds, type Scenario } from '../scenario';

interface Race {
  title: string;
  reviewId: string;
  approve: Decision;
  deny: Decision;
}

/** Two reviewers approve and deny the same held write at the same moment: exactly one wins, the other gets 409. */
export const reviewRaces: Scenario = {
  id: 'review-races',
  title: 'Approve/deny races',
  budgetMs: { full: 5 * 60_000, short: 2 * 60_000 },
  async run(context) {
    const started = Date.now();
    const raceCount = context.short ? 8 : 30;
    const checks = new Checks();
    const stack = await context.stack({ workers: 1 });

    const held = await holdWrites(stack, 'race', raceCount, context.signal);
    checks.equal('writes held for review', reviewIdsOf(held).length, raceCount);

    const races: Race[] = [];
    const batch = 5;
    for (let i = 0; i < held.length && !context.signal.aborted; i += batch) {
      const ran = await Promise.all(
        held.slice(i, i + batch).flatMap((record, j) => {
          if (!record.reviewId) return [];
          const reviewId = record.reviewId;
          // Alternate which request leaves first, so neither verdict has the head start every time.
          const approveFirst = (i + j) % 2 === 0;
          const first = approveFirst ? decide(stack, reviewId, 'approve', 0) : decide(stack, reviewId, 'deny', 1);
          const second = approveFirst ? decide(stack, reviewId, 'deny', 1) : decide(stack, reviewId, 'approve', 0);
          const [approve, deny] = approveFirst ? [first, second] : [second, first];
          return [Promise.all([approve, deny]).then(([a, d]) => ({ title: record.title, reviewId, approve: a, deny: d }))];
        }),
      );
      races.push(...ran);
    }

    const approveWon = races.filter((race) => race.approve.status === 200 && race.deny.status === 409);
    const denyWon = races.filter((race) => race.deny.status === 200 && race.approve.status === 409);
    const bothWon = races.filter((race) => race.approve.status === 200 && race.deny.status === 200).length;
    const otherAnswers = races.length - approveWon.length - denyWon.length - bothWon;
    checks.equal('races with exactly one winner and a 409 for the other', approveWon.length + denyWon.length, raceCount);
    checks.equal('races both reviewers won', bothWon, 0);
    const answerMismatch =
      approveWon.filter((race) => race.approve.body?.data?.status !== 'approved').length +
      denyWon.filter((race) => race.deny.body?.data?.status !== 'denied').length;
    checks.equal("winners' answers not showing their verdict", answerMismatch, 0);
    for (const race of races.filter((race) => !approveWon.includes(race) && !denyWon.includes(race)).slice(0, 3)) {
      checks.failures.push(`race ${race.reviewId}: approve ${race.approve.status}, deny ${race.deny.status}`);
    }

    const approvedIds = approveWon.map((race) => race.reviewId);
    const applied = await waitForReviews(stack.db, approvedIds, appliedOnce, 60_000, context.signal);
    checks.equal('approved writes applied', applied, approvedIds.length);
    const rows = await readReviews(stack.db, denyWon.map((race) => race.reviewId));
    const deniedStayDenied = denyWon.filter((race) => rows.get(race.reviewId)?.status === 'denied').length;
    checks.equal('denied reviews recorded denied', deniedStayDenied, denyWon.length);

    const approvedLedger = await settleAndCount(stack.db, stack.org.orgId, approveWon.map((race) => race.title), 5_000);
    const deniedLedger = await settleAndCount(stack.db, stack.org.orgId, denyWon.map((race) => race.title), 0);
    const writtenAfterDeny = denyWon.length - deniedLedger.lost.length;
    checks.equal('approved writes lost', approvedLedger.lost.length, 0);
    checks.equal('approved writes duplicated', approvedLedger.duplicated.length, 0);
    checks.equal('denied writes written', writtenAfterDeny, 0);
    checks.equal('exits of the service not caused by the suite', stack.unexpectedExits(), 0);

    return {
      did: `${raceCount} held writes, each approved and denied at the same moment by two reviewers`,
      figures: [
        ['races', races.length],
        ['approve won', approveWon.length],
        ['deny won', denyWon.length],
        ['loser 409', approveWon.length + denyWon.length],
        ['both won', bothWon],
        ['other answers', otherAnswers],
        ['answer mismatches', answerMismatch],
        ['applied', applied],
        ['lost', approvedLedger.lost.length],
        ['duplicated', approvedLedger.duplicated.length],
        ['written after deny', writtenAfterDeny],
        ['unexpected exits', stack.unexpectedExits()],
        ['time', seconds(Date.now() - started)],
      ],
      // A denied write written counts as lost: the person's decision was not kept.
      tally: { lost: approvedLedger.lost.length + writtenAfterDeny, doubled: approvedLedger.duplicated.length, exits: stack.unexpectedExits() },
      failures: checks.failures,
    };
  },
};
