import { connectDatabase, type Database } from '../db/database';
import { migrate } from '../db/migrate';
import type { Config } from './config';
import { clearDevState, readRunningDevState, writeDevState } from './dev-state';
import { startEmbeddedPostgres } from './embedded-postgres';

export interface OpenedDatabase {
  db: Database;
  /** Where the database lives, for people: a server URL or the embedded data folder. */
  description: string;
  embedded: boolean;
}

/**
 * One connection to the embedded database: its socket server interleaves the messages of concurrent
 * connections (electric-sql/pglite#1046), so this process queues its queries on a single connection.
 */
export const embeddedPoolSize = 1;

/**
 * How this process connects to the embedded database: one connection, and no statements prepared by name. Every
 * socket of the embedded server shares one backend session, so a name one process (or an earlier connection of
 * this one) prepared would already exist for the next.
 */
export const embeddedConnection = { maxConnections: embeddedPoolSize, preparedStatements: false } as const;

/**
 * The server named by DATABASE_URL; else the embedded database of a running `gatehouse dev`; else the
 * embedded database opened by this process (served on a local port for as long as it runs).
 */
export async function openDatabase(config: Config, options: { migrate?: boolean } = {}): Promise<OpenedDatabase> {
  let opened: OpenedDatabase;
  if (config.databaseUrl) {
    opened = { db: connectDatabase(config.databaseUrl, { preparedStatements: config.databasePreparedStatements }), description: redact(config.databaseUrl), embedded: false };
  } else {
    const running = readRunningDevState(config.dataDir);
    if (running) {
      opened = {
        db: connectDatabase(running.databaseUrl, embeddedConnection),
        description: `${running.databaseUrl} (embedded, served by ${running.owner === 'dev' ? 'gatehouse dev' : 'another gatehouse command'}, pid ${running.pid})`,
        embedded: true,
      };
    } else {
      const embedded = await startEmbeddedPostgres(config.dataDir);
      writeDevState(config.dataDir, { owner: 'cli', pid: process.pid, databaseUrl: embedded.url, startedAt: new Date().toISOString() });
      const db = connectDatabase(embedded.url, embeddedConnection);
      opened = {
        db: {
          ...db,
          close: async () => {
            await db.close();
            await embedded.stop();
            clearDevState(config.dataDir);
          },
        },
        description: `${embedded.url} (embedded, data in ${config.dataDir}/pgdata)`,
        embedded: true,
      };
    }
  }
  if (options.migrate !== false) {
    try {
      await migrate(opened.db.url);
    } catch (error) {
      await opened.db.close();
      throw error;
    }
  }
  return opened;
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured DATABASE_URL';
  }
}
