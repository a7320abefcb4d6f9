import pg from 'pg';
import { migrate } from '../db/migrate';

export interface BenchDatabase {
  name: string;
  url: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/** A fresh, migrated database `gatehouse_bench_<timestamp>` on the server at `adminUrl`. */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `gatehouse_bench_${Date.now()}`;
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
