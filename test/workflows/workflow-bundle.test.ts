import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../../worker';

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('workflow sandbox', () => {
  it('bundles the workflows (an import a workflow may not use would fail here)', async () => {
    const bundle = await bundleWorkflows();
    expect(bundle.code).toContain('gatedWrite');
  }, 120_000);

  it('the bundler does refuse a workflow that imports Node built-ins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'impure-workflow-'));
    writeFileSync(join(dir, 'index.ts'), "import { readFileSync } from 'node:fs';\nexport async function impure() { return readFileSync('/etc/hostname', 'utf8'); }\n");
    try {
      await expect(bundleWorkflowCode({ workflowsPath: join(dir, 'index.ts'), logger: silent })).rejects.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
