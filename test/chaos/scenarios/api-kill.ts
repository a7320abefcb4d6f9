import { setTimeout as sleep } from 'node:timers/promises';
import { runFaultRounds } from '../fault-rounds';
import { times, type Scenario } from '../scenario';

/** The api SIGKILLed under load and started again on the same port; writers retry with the same Idempotency-Key. */
export const apiKill: Scenario = {
  id: 'api-kill',
  title: 'api SIGKILL during load',
  budgetMs: { full: 6 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const kills = context.short ? 2 : 6;
    const stack = await context.stack({ workers: 1 });
    const { checks, figures } = await runFaultRounds(context, stack, {
      prefix: 'api-kill',
      rounds: kills,
      answersBetween: 24,
      maxWritesPerWriter: context.short ? 60 : 200,
      async fault() {
        await sleep(Math.random() * 500);
        await stack.api.kill('SIGKILL');
        await stack.api.start();
      },
    });
    return {
      did: `8 writers; the api SIGKILLed and started again on the same port ${times(kills)}`,
      figures,
      failures: checks.failures,
    };
  },
};
