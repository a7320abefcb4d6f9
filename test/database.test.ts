import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectDatabase, type Database } from '../db/database';

// The connection survives what a failover or an idle timeout does to it: the server ending backends, also in
// the middle of a transaction. Nothing here may end the process (vitest reports an unhandled 'error' event).

let db: Database;
let admin: Database;

/** Our pool's connections carry a name of their own, so that only they are ended (other test files share the database). */
const applicationName = `gatehouse-db-test-${process.pid}`;

beforeAll(() => {
  const url = new URL(inject('databaseUrl'));
  url.searchParams.set('application_name', applicationName);
  db = connectDatabase(url.toString(), { maxConnections: 8 });
  admin = connectDatabase(inject('databaseUrl'), { maxConnections: 1 });
});

afterAll(async () => {
  await db?.close();
  await admin?.close();
});

/** Ends every backend of the pool under test that runs the marked statement, as pg_terminate_backend does in a failover. */
async function terminate(marker: string): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND application_name = $2`,
    [`%${marker}%`, applicationName],
  );
  return rows[0].n;
}

async function untilRunning(marker: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND application_name = $2`, [
      `%${marker}%`,
      applicationName,
    ]);
    if (rows[0].n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${count} statements ${marker} never ran`);
}

describe('dropped connections', () => {
  it('a transaction whose backend is terminated fails with the server’s error, and the next one works', async () => {
    for (let round = 0; round < 10; round++) {
      const marker = `tx_round_${round}_${Date.now()}`;
      const transactions = Array.from({ length: 4 }, () => db.transaction((tx) => tx.query(`SELECT pg_sleep(5) /* ${marker} */`)));
      await untilRunning(marker, 4);
      expect(await terminate(marker)).toBe(4);
      const settled = await Promise.allSettled(transactions);
      for (const outcome of settled) {
        expect(outcome.status).toBe('rejected');
        const error = (outcome as PromiseRejectedResult).reason as { code?: string; message: string };
        expect(error.code === '57P01' || /terminat/i.test(error.message)).toBe(true);
      }
      const after = await db.transaction((tx) => tx.query('SELECT 1 AS one'));
      expect(after.rows[0].one).toBe(1);
    }
  });

  it('idle connections the server ends are replaced', async () => {
    await Promise.all(Array.from({ length: 4 }, () => db.query('SELECT 1')));
    const { rows } = await admin.query(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle'`,
      [applicationName],
    );
    expect(rows[0].n).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let attempt = 0; attempt < 10; attempt++) expect((await db.query('SELECT 2 AS two')).rows[0].two).toBe(2);
  });
});
