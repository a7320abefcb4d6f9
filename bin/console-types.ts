// The console's wire types, generated from the catalog: the OpenAPI document of the console's dialect (the
// operations offered on the console, their input and output schemas) turned into TypeScript by openapi-typescript.
// bin/build-console.js writes them before the console is built or type-checked (`npm run console-types` alone);
// the file is not committed, so a schema changed under a page fails `tsc -p web` at once.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { catalog as wholeCatalog } from '../api/catalog/index';
import type { Operation } from '../api/catalog/operation';
import { buildOpenApiDocument } from '../api/rest/openapi';

export const consoleTypesFile = fileURLToPath(new URL('../web/src/lib/api-types.gen.ts', import.meta.url));

const header = `${COMMENT_HEADER}// From the catalog's console dialect by bin/console-types.ts: run \`npm run console-types\` after a schema changes.\n\n`;

/** The TypeScript text of the console's wire types, for a catalog (the real one, or one a test changed). */
export async function consoleTypes(catalog: readonly Operation[] = wholeCatalog): Promise<string> {
  const document = buildOpenApiDocument(catalog, { via: 'console', serverUrl: '/console/api' });
  const ast = await openapiTS(document as unknown as OpenAPI3, { silent: true });
  return `${header}${astToString(ast)}`;
}

/** Writes the console's wire types to `target` when they differ from what is there; true when it wrote. */
export async function writeConsoleTypes(target = consoleTypesFile, catalog?: readonly Operation[]): Promise<boolean> {
  const text = await consoleTypes(catalog);
  // An unchanged file keeps its time, so `npm start` does not rebuild a console that is up to date.
  if ((await readFile(target, 'utf8').catch(() => undefined)) === text) return false;
  await writeFile(target, text);
  return true;
}
