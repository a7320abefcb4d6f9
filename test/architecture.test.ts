import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));
}

interface Import {
  file: string;
  from: string;
  typeOnly: boolean;
}

/** Every import and re-export of a file, and whether it is erased at compile time. */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    found.push({ file, from: match[2]!, typeOnly: Boolean(match[1]) });
  }
  return found;
}

/** The top-level folder an import lands in, for relative imports. */
function landsIn(imp: Import): string | undefined {
  if (!imp.from.startsWith('.')) return undefined;
  const target = relative(root, join(root, imp.file, '..', imp.from));
  return target.split('/')[0];
}

describe('what may import what (STYLE.md)', () => {
  it('reads imports, multi-line and type-only ones included', () => {
    const workflow = importsOf('workflows/gated-write.ts');
    expect(workflow).toContainEqual({ file: 'workflows/gated-write.ts', from: '@temporalio/workflow', typeOnly: false });
    expect(workflow).toContainEqual({ file: 'workflows/gated-write.ts', from: '../activities', typeOnly: true });
    expect(importsOf('api/catalog/gate-client.ts').map((imp) => imp.from)).toContain('@temporalio/client');
  });

  it('workflows import only @temporalio/workflow, their own folder and the gate contract at run time; the rest by type only', () => {
    const offending = sources('workflows')
      .flatMap(importsOf)
      .filter((imp) => !imp.typeOnly)
      .filter((imp) => imp.from !== '@temporalio/workflow' && landsIn(imp) !== 'workflows' && !imp.from.endsWith('/domain/gate/contract'));
    expect(offending).toEqual([]);
    // The contract is bundled into the workflow sandbox: it brings nothing else with it.
    expect(importsOf('domain/gate/contract.ts').filter((imp) => !imp.typeOnly)).toEqual([]);
  });

  it('activities import no api or workflow code', () => {
    const offending = sources('activities')
      .flatMap(importsOf)
      .filter((imp) => ['api', 'workflows', 'worker'].includes(landsIn(imp) ?? ''));
    expect(offending).toEqual([]);
  });

  it('the api never imports activities or the worker, and takes only messages and types from workflows', () => {
    const offending = sources('api')
      .flatMap(importsOf)
      .filter((imp) => {
        const folder = landsIn(imp);
        if (folder === 'activities' || folder === 'worker') return true;
        return folder === 'workflows' && !imp.typeOnly && !imp.from.endsWith('/messages');
      });
    expect(offending).toEqual([]);
  });

  it('domain logic is free of transports and of Temporal', () => {
    const offending = sources('domain')
      .flatMap(importsOf)
      .filter((imp) => ['api', 'workflows', 'activities', 'worker', 'runtime', 'cli'].includes(landsIn(imp) ?? '') || /^(fastify|@temporalio\/)/.test(imp.from));
    expect(offending).toEqual([]);
  });

  it('config is read from the environment in one place', () => {
    const readers = ['api', 'workflows', 'activities', 'worker', 'domain', 'db', 'policy', 'runtime', 'cli']
      .flatMap(sources)
      .filter((file) => /process\.env\b/.test(readFileSync(join(root, file), 'utf8')));
    expect(readers.sort()).toEqual(['runtime/config.ts', 'runtime/temporal-binary.ts']);
  });
});
