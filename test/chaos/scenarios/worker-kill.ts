import { setTimeout as sleep } from 'node:timers/promises';
import { runFaultRounds } from '../fault-rounds';
import { times, type Scenario } from '../scenario';

/** A worker SIGKILLed in the middle of gated writes, and started again, several times (with several, each in turn). */
export const workerKill: Scenario = {
  id: 'worker-kill',
  title: 'Worker SIGKILL during load',
  budgetMs: { full: 12 * 60_000, short: 4 * 60_000 },
  async run(context) {
    const kills = context.short ? 2 : 6;
    const stack = await context.stack({ workers: 1 });
    const { checks, figures, tally } = await runFaultRounds(context, stack, {
      prefix: 'worker-kill',
      rounds: kills,
      answersBetween: 24,
      // With a second worker the writes never pause for a kill: enough for them to write on through each.
      maxWritesPerWriter: context.short ? 250 : 600,
      async fault(round) {
        const worker = stack.workers[round % stack.workers.length]!;
        // Somewhere inside a write: the moment of the kill falls anywhere in the writes' activities.
        await sleep(Math.random() * 500);
        await worker.kill('SIGKILL');
        await worker.start();
      },
    });
    const which = stack.workers.length > 1 ? `one of ${stack.workers.length} workers (each in turn)` : 'the only worker';
    return {
      did: `8 writers; ${which} SIGKILLed and started again ${times(kills)}`,
      figures,
      tally,
      failures: checks.failures,
    };
  },
};
