import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  const [temporal, bundle] = await Promise.all([
    startTemporalDevServer({ cliPath, headless: true }),
    bundleWorkflows(),
  ]);
  const bundleDir = mkdtempSync(join(tmpdir(), 'gatehouse-workflows-'));
  const workflowBundlePath = join(bundleDir, 'workflows.js');
  writeFileSync(workflowBundlePath, bundle.code);

  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCliPath', cliPath);
  project.provide('databaseUrl', database.url);
  project.provide('workflowBundlePath', workflowBundlePath);

  return async () => {
    await temporal.stop();
    rmSync(bundleDir, { recursive: true, force: true });
    await database.drop().catch(() => {});
  };
}
