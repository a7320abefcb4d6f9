import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface EmbeddedPostgres {
  /** A postgres:// URL that `pg`, `psql` and the CLI can use while this process runs. */
  url: string;
  stop(): Promise<void>;
}

/**
 * PGlite persisted under the data folder, served over the PostgreSQL protocol on a local port, so the
 * service talks to it through `pg` exactly as it talks to a PostgreSQL server.
 */
export async function startEmbeddedPostgres(dataDir: string, port = 0): Promise<EmbeddedPostgres> {
  const pgDataDir = join(dataDir, 'pgdata');
  mkdirSync(pgDataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: pgDataDir });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
