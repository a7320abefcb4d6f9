import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CommitOutcomeUnknown, connectDatabase, isConnectionFault, type Database } from '../../db/database';
import { embeddedConnection } from '../../runtime/database';
import { toAppError } from '../../domain/kit/errors';

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

describe('statements sent often are prepared once per connection', () => {
  const table = `prepared_${process.pid}`;

  it('a text sent a few times is named, and what it answers does not change', async () => {
    await db.query(`CREATE TABLE ${table} (a int PRIMARY KEY)`);
    await db.query(`INSERT INTO ${table} VALUES (1), (2), (3)`);
    const text = `SELECT * FROM ${table} WHERE a >= $1 ORDER BY a`;
    for (let i = 0; i < 6; i++) expect((await db.query(text, [2])).rows).toEqual([{ a: 2 }, { a: 3 }]);
    await db.transaction(async (tx) => {
      for (let i = 0; i < 4; i++) expect((await tx.query(text, [3])).rows).toEqual([{ a: 3 }]);
    });
    // The connection that runs it holds it under its name.
    const named = await db.transaction(async (tx) => {
      await tx.query(text, [1]);
      return (await tx.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1 AND name LIKE 'gh%'`, [text])).rows[0].n;
    });
    expect(named).toBe(1);
  });

  it('a named statement is planned for each call’s values, never by a generic plan (one text serves organizations of every size)', async () => {
    const single = connectDatabase(inject('databaseUrl'), { maxConnections: 1 });
    try {
      expect((await single.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'force_custom_plan' }]);
      const text = `SELECT $1::int * 3 AS n`;
      for (let i = 0; i < 12; i++) expect((await single.query(text, [i])).rows).toEqual([{ n: i * 3 }]);
      const { rows } = await single.query(`SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = $1 AND name LIKE 'gh%'`, [text]);
      // Named on its third call: the ten after it each planned for their own value.
      expect(rows).toEqual([{ generic_plans: 0, custom_plans: 10 }]);
    } finally {
      await single.close();
    }
    // Options the URL gives are kept beside it.
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('options', '-c statement_timeout=4321');
    const withOptions = connectDatabase(url.toString(), { maxConnections: 1 });
    try {
      expect((await withOptions.query(`SELECT current_setting('plan_cache_mode') AS mode, current_setting('statement_timeout') AS timeout`)).rows).toEqual([
        { mode: 'force_custom_plan', timeout: '4321ms' },
      ]);
    } finally {
      await withOptions.close();
    }
  });

  it('a session that lost what the connection prepared (a pooler in transaction mode) costs a retry, and nothing is named after it', async () => {
    const single = connectDatabase(inject('databaseUrl'), { maxConnections: 1 });
    try {
      const text = `SELECT $1::int + 1 AS n`;
      for (let i = 0; i < 4; i++) expect((await single.query(text, [i])).rows).toEqual([{ n: i + 1 }]);
      // As if the statement's session were another's now: the server forgets it, the connection still thinks it has it.
      await single.query('DEALLOCATE ALL');
      expect((await single.query(text, [41])).rows).toEqual([{ n: 42 }]);
      expect(await single.transaction(async (tx) => (await tx.query(text, [1])).rows)).toEqual([{ n: 2 }]);
      for (let i = 0; i < 4; i++) await single.query(`SELECT $1::int * 2 AS n`, [i]);
      expect((await single.query(`SELECT count(*)::int AS n FROM pg_prepared_statements`)).rows).toEqual([{ n: 0 }]);
    } finally {
      await single.close();
    }
  });

  it('a migration that changes what a prepared statement returns costs a retry, not an error', async () => {
    const text = `SELECT * FROM ${table} WHERE a = $1`;
    // Prepared on every connection of the pool: eight transactions at once, each sending it until it is named.
    await Promise.all(
      Array.from({ length: 8 }, () =>
        db.transaction(async (tx) => {
          for (let i = 0; i < 4; i++) await tx.query(text, [1]);
          await tx.query('SELECT pg_sleep(0.05)');
        }),
      ),
    );
    await admin.query(`ALTER TABLE ${table} ADD COLUMN b text DEFAULT 'x'`);
    for (let i = 0; i < 8; i++) expect((await db.query(text, [1])).rows).toEqual([{ a: 1, b: 'x' }]);
    await Promise.all(Array.from({ length: 8 }, () => db.transaction(async (tx) => expect((await tx.query(text, [2])).rows).toEqual([{ a: 2, b: 'x' }]))));
    await db.query(`DROP TABLE ${table}`);
  });
});

describe('dropped connections', () => {
  it('a transaction whose backend is terminated runs again on a fresh connection, and succeeds', async () => {
    for (let round = 0; round < 10; round++) {
      const marker = `tx_round_${round}_${Date.now()}`;
      const attempts = [0, 0, 0, 0];
      const transactions = attempts.map((_, i) =>
        db.transaction(async (tx) => {
          // The first attempt waits to be terminated; the one that follows finishes at once.
          const first = attempts[i] === 0;
          attempts[i] = (attempts[i] ?? 0) + 1;
          await tx.query(first ? `SELECT pg_sleep(5) /* ${marker} */` : 'SELECT 1');
          return tx.query('SELECT $1::int AS n', [i]);
        }),
      );
      await untilRunning(marker, 4);
      expect(await terminate(marker)).toBe(4);
      const results = await Promise.all(transactions);
      expect(results.map((result) => result.rows[0].n)).toEqual([0, 1, 2, 3]);
      expect(attempts).toEqual([2, 2, 2, 2]);
    }
  });

  it('a statement whose backend is terminated is sent again on a fresh connection', async () => {
    for (let round = 0; round < 3; round++) {
      const marker = `query_round_${round}_${Date.now()}`;
      const queries = Array.from({ length: 4 }, () => db.query(`SELECT pg_sleep(0.5), 3 AS three /* ${marker} */`));
      await untilRunning(marker, 4);
      expect(await terminate(marker)).toBe(4);
      for (const result of await Promise.all(queries)) expect(result.rows[0].three).toBe(3);
    }
  });

  it('a write whose reply is lost with its connection is not sent again (it may have committed); a read is', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS lost_replies (id int PRIMARY KEY, n int NOT NULL)');
    await db.query('INSERT INTO lost_replies VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET n = 0');
    const proxy = await replyLosingProxy(new URL(inject('databaseUrl')));
    const through = connectDatabase(proxy.url, { maxConnections: 2 });
    try {
      proxy.loseTheReplyTo('UPDATE lost_replies');
      await expect(through.query('UPDATE lost_replies SET n = n + 1 WHERE id = 1 RETURNING n')).rejects.toSatisfy(isConnectionFault);
      expect((await db.query('SELECT n FROM lost_replies WHERE id = 1')).rows[0].n).toBe(1);

      proxy.loseTheReplyTo('SELECT n FROM lost_replies');
      expect((await through.query('SELECT n FROM lost_replies WHERE id = 1')).rows[0].n).toBe(1);

      // A transaction whose COMMIT lost its reply is not run again, and the caller is told it may have been made.
      let runs = 0;
      proxy.loseTheReplyTo('COMMIT');
      const error = await through
        .transaction(async (tx) => {
          runs++;
          await tx.query('UPDATE lost_replies SET n = n + 1 WHERE id = 1');
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CommitOutcomeUnknown);
      expect(runs).toBe(1);
      expect(toAppError(error)).toMatchObject({ code: 'unavailable', message: expect.stringContaining('it may have been made') });
      expect((await db.query('SELECT n FROM lost_replies WHERE id = 1')).rows[0].n).toBe(2);
      expect(proxy.repliesLost).toBe(3);
    } finally {
      await through.close();
      proxy.close();
      await db.query('DROP TABLE lost_replies');
    }
  });

  it('a connection the server ends as it opens (a backend terminated the moment it was ready) crashes nothing: the statement runs on another', async () => {
    const proxy = await endingAtReadyProxy(new URL(inject('databaseUrl')));
    const through = connectDatabase(proxy.url, { maxConnections: 1 });
    try {
      const { rows } = await through.query<{ one: number }>('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
      expect(proxy.ended).toBe(1);
    } finally {
      await through.close();
      proxy.close();
    }
  });

  it('a statement that fails on its own is not retried: the error is the statement’s', async () => {
    await expect(db.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    await expect(db.transaction((tx) => tx.query('SELECT * FROM no_such_table'))).rejects.toMatchObject({ code: '42P01' });
  });

  it('a database out of reach is a connection fault once the retries are spent: a 503 to callers, not a 500', async () => {
    const unreachable = connectDatabase('postgres://gatehouse@127.0.0.1:1/none', { retryForMs: 300 });
    try {
      const error = await unreachable.query('SELECT 1').catch((caught: unknown) => caught);
      expect(isConnectionFault(error)).toBe(true);
      expect(toAppError(error)).toMatchObject({ code: 'unavailable', status: 503 });
      expect(isConnectionFault(await unreachable.transaction((tx) => tx.query('SELECT 1')).catch((caught: unknown) => caught))).toBe(true);
    } finally {
      await unreachable.close();
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

  it('the embedded database (gatehouse dev) dropping every connection: statements and transactions carry on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-embedded-'));
    const pglite = await PGlite.create({ dataDir: join(dataDir, 'pgdata') });
    let server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 8 });
    await server.start();
    const port = Number(server.getServerConn().split(':')[1]);
    const embedded = connectDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, embeddedConnection);
    try {
      await embedded.query('CREATE TABLE rounds (n int PRIMARY KEY)');
      for (let round = 0; round < 3; round++) {
        // Every connection is dropped, and the server comes back on the same port a moment later.
        await server.stop();
        const during = embedded.transaction(async (tx) => {
          await tx.query('INSERT INTO rounds (n) VALUES ($1)', [round]);
          return tx.query('SELECT count(*)::int AS n FROM rounds');
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port, maxConnections: 8 });
        await server.start();
        expect((await during).rows[0].n).toBe(round + 1);
      }
    } finally {
      await embedded.close();
      await server.stop();
      await pglite.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * A TCP proxy in front of PostgreSQL that ends its first connection the way pg_terminate_backend ends a backend
 * that has just started: the server's first ReadyForQuery arrives with a FATAL 57P01 right behind it, in the same
 * chunk, so the client reads both at once, as it is handed out by the pool.
 */
async function endingAtReadyProxy(target: URL) {
  let ended = 0;
  const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0');
  const fatal = Buffer.concat([Buffer.from([0x45]), Buffer.from([0, 0, 0, 0]), fields]);
  fatal.writeUInt32BE(4 + fields.length, 1);
  const proxy = await proxyInFront(target, (client, server) => {
    let ending = ended === 0;
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk) => {
      const at = ending ? chunk.indexOf(readyForQuery) : -1;
      if (at < 0) return void client.write(chunk);
      ending = false;
      ended++;
      client.end(Buffer.concat([chunk.subarray(0, at + readyForQuery.length), fatal]));
    });
  });
  return {
    ...proxy,
    get ended() {
      return ended;
    },
  };
}

/**
 * A TCP proxy in front of PostgreSQL that, once told, forwards the next statement containing a marker and then
 * drops the connection instead of its reply: the server ran (and committed) it, the client never hears.
 */
async function replyLosingProxy(target: URL) {
  let marker: string | undefined;
  let repliesLost = 0;
  const proxy = await proxyInFront(target, (client, server) => {
    let swallowing = false;
    client.on('data', (chunk) => {
      if (marker && chunk.includes(marker)) {
        marker = undefined;
        swallowing = true;
        repliesLost++;
        setTimeout(() => client.destroy(), 300);
      }
      server.write(chunk);
    });
    server.on('data', (chunk) => {
      if (!swallowing) client.write(chunk);
    });
  });
  return {
    ...proxy,
    loseTheReplyTo(statement: string) {
      marker = statement;
    },
    get repliesLost() {
      return repliesLost;
    },
  };
}

/**
 * A TCP proxy on a free local port in front of the PostgreSQL server at `target`: `pipe` moves the bytes between
 * each client and its server connection (and may drop, hold or add some); either side closing closes the other.
 */
async function proxyInFront(target: URL, pipe: (client: Socket, server: Socket) => void): Promise<{ url: string; close(): void }> {
  const proxy = createServer((client) => {
    const server = connect(Number(target.port || 5432), target.hostname);
    pipe(client, server);
    for (const socket of [client, server]) socket.on('error', () => {});
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return { url: url.toString(), close: () => proxy.close() };
}
