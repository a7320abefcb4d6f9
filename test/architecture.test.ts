import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// The layer rules of the README's "Architecture" live in .dependency-cruiser.mjs, with a comment each; this
// test runs them over the whole tree, type-only imports included, and fails on any import cycle.

const root = fileURLToPath(new URL('..', import.meta.url));
const folders = ['api', 'workflows', 'activities', 'worker', 'domain', 'data-import', 'db', 'policy', 'metrics', 'runtime', 'cli', 'bench', 'deploy', 'test', 'web'];

let result: ICruiseResult;

beforeAll(async () => {
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
    const tsConfig = extractTSConfig('tsconfig.json');
    const reported = await cruise(folders, { ...options, validate: true }, undefined, { tsConfig });
    result = reported.output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
}, 60_000);

describe('what may import what (README, Architecture)', () => {
  it('no import cycles, and every layer rule holds', () => {
    const violations = result.summary.violations.map(
      (violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}${violation.cycle ? ` (cycle: ${violation.cycle.map((step) => step.name).join(' → ')})` : ''}`,
    );
    expect(violations).toEqual([]);
  });

  it('reads the whole tree, and tells type-only imports from run-time ones', () => {
    const sources = new Set(result.modules.map((module) => module.source));
    for (const file of ['api/catalog/call.ts', 'api/console/plugin.ts', 'workflows/gated-write.ts', 'domain/gate/contract.ts', 'domain/resources/tasks.ts', 'web/src/main.tsx', 'web/src/features/api-keys/api-keys-page.tsx']) {
      expect(sources).toContain(file);
    }
    // The workflow names its activities by type only: what the workflows rule relies on.
    const workflow = result.modules.find((module) => module.source === 'workflows/gated-write.ts')!;
    const activities = workflow.dependencies.find((dependency) => dependency.resolved === 'activities/index.ts')!;
    expect(activities.dependencyTypes).toContain('type-only');
    expect(result.summary.ruleSetUsed?.forbidden?.length).toBeGreaterThan(10);
  });
});

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));
}

describe('configuration', () => {
  it('is read from the environment in one place', () => {
    const readers = ['api', 'workflows', 'activities', 'worker', 'domain', 'data-import', 'db', 'policy', 'metrics', 'runtime', 'cli']
      .flatMap(sources)
      .filter((file) => /process\.env\b/.test(readFileSync(join(root, file), 'utf8')));
    expect(readers.sort()).toEqual(['runtime/config.ts', 'runtime/temporal-binary.ts']);
  });
});
