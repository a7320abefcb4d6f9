import { runFaultRounds } from '../fault-rounds';
import { startOwnCluster } from '../postgres-cluster';
import { seconds, times, type Scenario } from '../scenario';

/** The PostgreSQL server restarted (`pg_ctl restart -m fast`) under load: a cluster of the suite's own, never the machine's. */
export const postgresRestart: Scenario = {
  id: 'postgres-restart',
  title: 'PostgreSQL restart',
  budgetMs: { full: 8 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const restarts = context.short ? 2 : 5;
    const cluster = await startOwnCluster(context.log);
    context.onCleanup(() => cluster.destroy());
    const stack = await context.stack({ workers: 1, cluster });
    let slowestRestartMs = 0;
    const { checks, figures } = await runFaultRounds(context, stack, {
      prefix: 'pg-restart',
      rounds: restarts,
      answersBetween: 16,
      maxWritesPerWriter: context.short ? 60 : 150,
      async fault() {
        const started = Date.now();
        await cluster.restart();
        slowestRestartMs = Math.max(slowestRestartMs, Date.now() - started);
      },
    });
    return {
      did: `8 writers; the suite's own PostgreSQL cluster (initdb, port ${cluster.port}) restarted ${times(restarts)} with pg_ctl restart -m fast`,
      figures: [...figures, ['slowest restart', seconds(slowestRestartMs)]],
      failures: checks.failures,
    };
  },
};
