import { checkLoad, loadFigures, settleAndCount } from './ledger';
import { approveHeld, holdWrites } from './reviews';
import { Checks, seconds, type Figures, type ScenarioContext, type Tally } from './scenario';
import type { Stack } from './stack';
import { WriteLoad } from './writers';

export interface FaultRounds {
  /** Unique among the scenario's writes: titles and Idempotency-Keys start with it. */
  prefix: string;
  rounds: number;
  /** Definitive answers the writers get before the first fault and between two faults. */
  answersBetween: number;
  maxWritesPerWriter: number;
  /** Injects one fault (and starts again what it stopped); resolves once the fault is done. */
  fault(round: number): Promise<void>;
}

export interface FaultRoundsResult {
  checks: Checks;
  figures: Figures;
  tally: Tally;
}

/**
 * Writers under way while a fault is injected round after round (and, where the run asks for them, writes held for
 * review waiting through the faults), then the writes counted: each written exactly once, each writer answered,
 * each held write still approvable and then applied once, no process of the service exited by itself.
 */
export async function runFaultRounds(context: ScenarioContext, stack: Stack, plan: FaultRounds): Promise<FaultRoundsResult> {
  const started = Date.now();
  const checks = new Checks();
  const held = context.heldThroughFaults > 0 ? await holdWrites(stack, `${plan.prefix}-held`, context.heldThroughFaults, context.signal) : [];
  checks.equal('writes held for review before the faults', held.filter((record) => record.reviewId).length, held.length);
  const load = new WriteLoad({
    apiUrl: stack.apiUrl,
    tokens: stack.org.agentTokens,
    prefix: plan.prefix,
    maxWritesPerWriter: plan.maxWritesPerWriter,
    signal: context.signal,
  });
  let slowestRecoveryMs = 0;
  let faults = 0;
  try {
    checks.that('the writers got answers before the first fault', await load.progressed(plan.answersBetween, 60_000));
    for (let round = 0; round < plan.rounds && !context.signal.aborted; round += 1) {
      await plan.fault(round);
      faults += 1;
      // A process that died by itself is counted, and started again so that the writes can still be counted.
      for (const process of [...stack.apis, ...stack.workers]) if (!process.running) await process.start();
      const faultEnded = Date.now();
      const recovered = await load.progressed(1, 120_000);
      slowestRecoveryMs = Math.max(slowestRecoveryMs, Date.now() - faultEnded);
      if (!recovered) {
        checks.failures.push(
          load.exhausted
            ? `the writers had sent every write they may send by the end of fault ${round + 1}: the scenario's maxWritesPerWriter is too small for its faults`
            : `no write answered within 120 s of fault ${round + 1}`,
        );
        break;
      }
      if (round % 10 === 9 || round === plan.rounds - 1) context.log(`fault ${round + 1}/${plan.rounds}; ${load.settled} writes answered`);
      await load.progressed(plan.answersBetween, 60_000);
    }
  } finally {
    await load.stop();
  }
  const ledger = await settleAndCount(stack.db, stack.org.orgId, load.records.map((record) => record.title));
  checkLoad(checks, load.counts, ledger, load.records);
  const heldOutcome = held.length ? await approveHeld(stack, held, context.signal) : undefined;
  if (heldOutcome) {
    checks.equal('held writes approved (200) after the faults', heldOutcome.approved, held.length);
    checks.equal('held writes applied once approved', heldOutcome.applied, held.length);
  }
  checks.equal('faults injected', faults, plan.rounds);
  const exits = stack.unexpectedExits();
  checks.equal('exits of the service not caused by the suite', exits, 0);
  const figures: Figures = [
    ...loadFigures(load.counts, ledger, load.records),
    ...(heldOutcome
      ? ([
          ['held', heldOutcome.held],
          ['held applied', heldOutcome.applied],
          ['held lost', heldOutcome.lost],
          ['held duplicated', heldOutcome.duplicated],
        ] as Figures)
      : []),
    ['faults', faults],
    ['unexpected exits', exits],
    ['slowest recovery', seconds(slowestRecoveryMs)],
    ['time', seconds(Date.now() - started)],
  ];
  const tally: Tally = {
    lost: ledger.lost.length + (heldOutcome?.lost ?? 0),
    doubled: ledger.duplicated.length + (heldOutcome?.duplicated ?? 0),
    exits,
  };
  if (heldOutcome?.lost) checks.failures.push(`held writes lost: ${heldOutcome.lost}`);
  if (heldOutcome?.duplicated) checks.failures.push(`held writes duplicated: ${heldOutcome.duplicated}`);
  return { checks, figures, tally };
}
