import { runFaultRounds } from '../fault-rounds';
import { seconds, times, type Scenario } from '../scenario';

/**
 * The PostgreSQL server restarted (`pg_ctl restart -m fast`) under load: a server of the suite's own, never the
 * machine's (in the deployment rehearsal, the server that holds Temporal's databases too).
 */
export const postgresRestart: Scenario = {
  id: 'postgres-restart',
  title: 'PostgreSQL restart',
  budgetMs: { full: 8 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const restarts = context.short ? 2 : 5;
    const stack = await context.stack({ workers: 1, restartablePostgres: true });
    const postgres = stack.postgres!;
    let slowestRestartMs = 0;
    const { checks, figures, tally } = await runFaultRounds(context, stack, {
      prefix: 'pg-restart',
      rounds: restarts,
      answersBetween: 16,
      maxWritesPerWriter: context.short ? 60 : 150,
      async fault() {
        const started = Date.now();
        await postgres.restart();
        slowestRestartMs = Math.max(slowestRestartMs, Date.now() - started);
      },
    });
    return {
      did: `8 writers; ${postgres.description} restarted ${times(restarts)} with pg_ctl restart -m fast`,
      figures: [...figures, ['slowest restart', seconds(slowestRestartMs)]],
      tally,
      failures: checks.failures,
    };
  },
};
