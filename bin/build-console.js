#!/usr/bin/env node
// Builds the console (web/) into web/dist, which the api serves at /. Runs on `npm install` (prepare) and
// before `npm start` (--if-stale: only when a source is newer than the build). Without Vite (a production
// install without dev dependencies) it says so and leaves the build that is there.
// First it writes the console's wire types from the catalog (web/src/lib/api-types.gen.ts, bin/console-types.ts),
// which `tsc -p web` checks the pages against; --types-only stops there (npm test, npm run typecheck).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('../web', import.meta.url));
const built = join(web, 'dist', 'index.html');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Writes the wire types when they changed (an unchanged file keeps its time, and the build stays fresh). */
async function writeWireTypes() {
  try {
    await import('openapi-typescript');
  } catch {
    console.warn('openapi-typescript is not installed: the console\'s wire types are not generated (install the dev dependencies).');
    return;
  }
  const { register } = await import('tsx/esm/api');
  const unregister = register();
  try {
    const { writeConsoleTypes } = await import('./console-types.ts');
    if (await writeConsoleTypes()) console.log('Wrote the console\'s wire types from the catalog');
  } finally {
    await unregister();
  }
}

await writeWireTypes();
if (process.argv.includes('--types-only')) process.exit(0);

if (process.argv.includes('--if-stale') && existsSync(built) && statSync(built).mtimeMs >= newestSource(web)) process.exit(0);

let vite;
try {
  vite = await import('vite');
} catch {
  console.warn(existsSync(built) ? 'Vite is not installed; serving the console as built before.' : 'Vite is not installed: the console is not built (install the dev dependencies).');
  process.exit(0);
}
await vite.build({ root: web, configFile: join(web, 'vite.config.ts'), mode: 'production', logLevel: 'warn' });
console.log(`Built the console into ${join(web, 'dist')}`);
