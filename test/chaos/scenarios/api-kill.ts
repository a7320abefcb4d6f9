import { setTimeout as sleep } from 'node:timers/promises';
import { runFaultRounds } from '../fault-rounds';
import { times, type Scenario } from '../scenario';

/**
 * An api SIGKILLed under load and started again on the same port (with several, each in turn, behind their proxy);
 * writers retry with the same Idempotency-Key and get the first attempt's outcome.
 */
export const apiKill: Scenario = {
  id: 'api-kill',
  title: 'api SIGKILL during load',
  budgetMs: { full: 6 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const kills = context.short ? 2 : 6;
    const stack = await context.stack({ workers: 1 });
    const { checks, figures, tally } = await runFaultRounds(context, stack, {
      prefix: 'api-kill',
      rounds: kills,
      answersBetween: 24,
      // Behind a proxy with a second api the writes never pause for a kill: enough for them to write on through each.
      maxWritesPerWriter: context.short ? 250 : 600,
      async fault(round) {
        const api = stack.apis[round % stack.apis.length]!;
        await sleep(Math.random() * 500);
        await api.kill('SIGKILL');
        await api.start();
      },
    });
    const which = stack.apis.length > 1 ? `one of ${stack.apis.length} apis behind the proxy (each in turn)` : 'the api';
    return {
      did: `8 writers; ${which} SIGKILLed and started again on the same port ${times(kills)}`,
      figures,
      tally,
      failures: checks.failures,
    };
  },
};
