import { runner } from 'node-pg-migrate';
import { fileURLToPath } from 'node:url';

const migrationsDir = fileURLToPath(new URL('./migrations', import.meta.url));

export interface MigrationResult {
  applied: string[];
}

/** Brings the schema up to date; safe to run from several processes at once (advisory lock). */
export async function migrate(databaseUrl: string): Promise<MigrationResult> {
  const ran = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'gatehouse_migrations',
    log: () => {},
    verbose: false,
  });
  return { applied: ran.map((migration) => migration.name) };
}
