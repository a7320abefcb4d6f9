import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import { createScratchDatabase } from '../../db/scratch-database';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { startTemporalDevServer } from '../../runtime/temporal-dev-server';
import { bundleWorkflows } from '../../worker';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCliPath: string;
    databaseUrl: string;
    workflowBundlePath: string;
    /** The console built from web/ for this run, so that browser tests see the sources as they are. */
    consoleDir: string;
  }
}

/**
 * One real Temporal dev server (from the CLI binary, in memory) and one fresh PostgreSQL database for
 * the whole run, and the workflows bundled once for every test worker.
 */
export default async function setup(project: TestProject) {
  const cliPath = await findTemporalCli({
    configured: process.env.TEMPORAL_CLI,
    log: (line) => console.log(line),
  });
  if (!cliPath) throw new Error('The tests need the Temporal CLI: install Go, or set TEMPORAL_CLI to the binary');

  const database = await createScratchDatabase('test', process.env.TEST_DATABASE_ADMIN_URL);

  const bundleDir = mkdtempSync(join(tmpdir(), 'gatehouse-workflows-'));
  const consoleDir = join(bundleDir, 'console');
  const [temporal, bundle] = await Promise.all([
    startTemporalDevServer({ cliPath, headless: true }),
    bundleWorkflows(),
    buildConsole(consoleDir),
  ]);
  const workflowBundlePath = join(bundleDir, 'workflows.js');
  writeFileSync(workflowBundlePath, bundle.code);

  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCliPath', cliPath);
  project.provide('databaseUrl', database.url);
  project.provide('workflowBundlePath', workflowBundlePath);
  project.provide('consoleDir', consoleDir);

  return async () => {
    await temporal.stop();
    rmSync(bundleDir, { recursive: true, force: true });
    await database.drop().catch(() => {});
  };
}

/** Under vitest (NODE_ENV=test) Vite builds React's development flavour, whose checks the browser tests want. */
async function buildConsole(outDir: string): Promise<void> {
  const web = new URL('../../web', import.meta.url).pathname;
  await build({ root: web, configFile: join(web, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true, chunkSizeWarningLimit: 2048 } });
}
