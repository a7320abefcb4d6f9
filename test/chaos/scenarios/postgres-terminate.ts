import { runFaultRounds } from '../fault-rounds';
import type { Scenario } from '../scenario';
import { applicationNames } from '../stack';

/**
 * pg_terminate_backend on every connection to the scenario's database but the suite's own (the api's and the
 * worker's, told apart by application_name), round after round, under load.
 */
export const postgresTerminate: Scenario = {
  id: 'postgres-terminate',
  title: 'PostgreSQL backends terminated during load',
  budgetMs: { full: 10 * 60_000, short: 3 * 60_000 },
  async run(context) {
    const rounds = context.short ? 10 : 50;
    const stack = await context.stack({ workers: 1 });
    const ended = { api: 0, worker: 0, other: 0 };
    const { checks, figures, tally } = await runFaultRounds(context, stack, {
      prefix: 'pg-terminate',
      rounds,
      answersBetween: 8,
      maxWritesPerWriter: context.short ? 60 : 250,
      async fault() {
        const { rows } = await stack.db.query<{ application_name: string; ended: boolean }>(
          `SELECT application_name, pg_terminate_backend(pid) AS ended FROM pg_stat_activity
           WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2`,
          [stack.databaseName, applicationNames.driver],
        );
        for (const row of rows.filter((row) => row.ended)) {
          if (row.application_name === applicationNames.api) ended.api += 1;
          else if (row.application_name === applicationNames.worker) ended.worker += 1;
          else ended.other += 1;
        }
      },
    });
    // Proof that the rounds hit their targets: both processes had connections to end.
    checks.atLeast("api's connections terminated", ended.api, 1);
    checks.atLeast("worker's connections terminated", ended.worker, 1);
    return {
      did: `8 writers; ${rounds} rounds of pg_terminate_backend on the api's and the worker's connections`,
      figures: [...figures, ['api backends ended', ended.api], ['worker backends ended', ended.worker], ['other backends ended', ended.other]],
      tally,
      failures: checks.failures,
    };
  },
};
