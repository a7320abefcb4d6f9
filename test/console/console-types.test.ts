import { Validator } from '@seriousme/openapi-schema-validator';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalog } from '../../api/catalog';
import type { Operation } from '../../api/catalog/operation';
import { buildOpenApiDocument } from '../../api/rest/openapi';
import { consoleTypes, consoleTypesFile } from '../../bin/console-types';

// The console's wire types are generated from the catalog (bin/console-types.ts) into a file that is not committed;
// `npm test` writes it before `tsc -p web`. A schema changed under a page must fail the console's type check.

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The catalog with one field of one operation's output renamed, as a change to its schema would. */
function renamedInOutput(operationName: string, from: string, to: string): Operation[] {
  return catalog.map((operation) => {
    if (operation.name !== operationName) return operation;
    const output = operation.output;
    if (!(output instanceof z.ZodArray) || !(output.element instanceof z.ZodObject)) throw new Error(`${operationName}: expected a list of objects`);
    const { [from]: field, ...rest } = output.element.shape as Record<string, z.ZodType>;
    if (!field) throw new Error(`${operationName} has no field ${from}`);
    return { ...operation, output: z.array(z.object({ ...rest, [to]: field })) };
  });
}

/** The console's sources in a folder of their own, beside the repository's packages, with these wire types. */
function consoleCopy(types: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'gatehouse-web-'));
  copies.push(copy);
  cpSync(join(root, 'web'), copy, { recursive: true, filter: (source) => !source.startsWith(join(root, 'web', 'dist')) });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  writeFileSync(join(copy, 'src', 'lib', 'api-types.gen.ts'), types);
  return copy;
}
const copies: string[] = [];
afterAll(() => {
  for (const copy of copies) rmSync(copy, { recursive: true, force: true });
});

describe("the console's wire types", () => {
  it('come from an OpenAPI document of the console dialect: valid, every console operation under /v1 and nothing else', async () => {
    const document = buildOpenApiDocument(catalog, { via: 'console', serverUrl: '/console/api' });
    const validation = await new Validator().validate(document as never);
    expect(validation.errors ?? []).toEqual([]);
    expect(document.servers).toEqual([{ url: '/console/api' }]);
    const operationIds = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((route) => route.operationId));
    expect(operationIds).toContain('reviews_approve');
    expect(operationIds).toContain('api_keys_list');
    expect(operationIds.some((id) => id.endsWith('_in_organization'))).toBe(false);
    expect(operationIds).not.toContain('tasks_create');
  });

  it('are up to date with the catalog (run `npm run console-types` after a schema changes)', async () => {
    expect(readFileSync(consoleTypesFile, 'utf8')).toBe(await consoleTypes());
  });

  it('fail `tsc -p web` when a field a page reads is renamed in an output schema', async () => {
    // The API Keys page shows each key's label; its list's schema now calls it `name`.
    const types = await consoleTypes(renamedInOutput('api_keys.list', 'label', 'name'));
    expect(types).not.toBe(readFileSync(consoleTypesFile, 'utf8'));
    const copy = consoleCopy(types);
    const failure = await promisify(execFile)(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], { cwd: copy }).then(
      () => undefined,
      (error: { stdout: string }) => error,
    );
    expect(failure, 'tsc -p web passed with a renamed field').toBeDefined();
    const errors = failure!.stdout.split('\n').filter((line) => line.includes('error TS'));
    expect(errors.some((line) => line.startsWith('src/features/api-keys/api-keys-page.tsx') && line.includes("Property 'label' does not exist"))).toBe(true);
    // Nothing else broke: every error is in the feature whose schema changed (the copy itself type-checks).
    for (const line of errors) expect(line).toMatch(/^src\/features\/api-keys\//);
  }, 180_000);
});
