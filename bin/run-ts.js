#!/usr/bin/env node
// Runs one TypeScript entry file (benchmarks, scripts) the same way the CLI runs.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts <file.ts> [args…]');
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(resolve(entry)).href);
