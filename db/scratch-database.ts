import pg from 'pg';
import { migrate } from './migrate';

/** A database of its own for one run of the tests, the benchmark or a script, dropped at the end. */
export interface ScratchDatabase {
  name: string;
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/** The local PostgreSQL server of a development machine, as its superuser. */
export const localAdminUrl = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh, migrated database `gatehouse_<purpose>_<timestamp>_<pid>` on the server at `adminUrl`. */
export async function createScratchDatabase(purpose: string, adminUrl = localAdminUrl): Promise<ScratchDatabase> {
  const name = `gatehouse_${purpose}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const drop = async () => {
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    await migrate(url.toString());
    return { name, url: url.toString(), drop };
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
}
