import { runner } from 'node-pg-migrate';
import { fileURLToPath } from 'node:url';

const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

export interface MigrationResult {
  applied: string[];
}

/** Brings the schema up to date; processes starting together wait their turn on an advisory lock. */
export async function migrate(databaseUrl: string): Promise<MigrationResult> {
  const ran = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'gatehouse_migrations',
    advisoryLockMode: 'wait',
    log: () => {},
    verbose: false,
  });
  return { applied: ran.map((migration) => migration.name) };
}
