import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createScratchDatabase, type ScratchDatabase } from '../db/scratch-database';
import { startTemporalDevServer, type TemporalDevServer } from '../runtime/temporal-dev-server';
import { formatEncryptionKeys, newEncryptionKey } from '../runtime/encryption-keys';
import { secretBoxOf } from '../runtime/stored-secrets';

const cliEntry = fileURLToPath(new URL('../bin/gatehouse.js', import.meta.url));
const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The key the bench's apis and workers seal stored secrets with (SECRETS_ENCRYPTION_KEYS, which they need to
 * start), made for the run; the box seals what the bench writes into their database itself.
 */
const benchSecretsKeys = [newEncryptionKey('bench')];
export const benchSecrets = secretBoxOf(benchSecretsKeys);

/** One `node bin/gatehouse.js <command>` child process, as a user runs it. */
export interface Service {
  name: string;
  pid: number | undefined;
  /** The last few thousand characters of its stdout and stderr, for error messages. */
  output(): string;
  /** Throws when the process has already exited. */
  assertRunning(): void;
  /** SIGTERM, then SIGKILL after 15 s; resolves once it exited. */
  stop(): Promise<void>;
}

export function startService(command: 'api' | 'worker', env: Record<string, string>, name: string = command): Service {
  // BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/profiles' profiles the api and the worker (Node refuses it in NODE_OPTIONS).
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, cliEntry, command], {
    cwd: projectRoot,
    env: { ...process.env, SECRETS_ENCRYPTION_KEYS: formatEncryptionKeys(benchSecretsKeys), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    });
    child.once('error', (error) => {
      exit = `spawn error: ${error.message}`;
      resolve();
    });
  });
  return {
    name,
    pid: child.pid,
    output: () => output.trim(),
    assertRunning() {
      if (exit !== undefined) throw new Error(`gatehouse ${name} exited (${exit})${output ? `:\n${output.trim()}` : ''}`);
    },
    async stop() {
      if (exit !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Waits until GET /readyz answers 200 (the api listens, reaches the database and Temporal, and a worker polls its
 * task queue); with `probe: 'healthz'`, until GET /healthz does (the api listens: it has migrated the database).
 */
export async function waitForHealth(baseUrl: string, services: Service[], timeoutMs: number, probe: 'readyz' | 'healthz' = 'readyz'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    for (const service of services) service.assertRunning();
    try {
      const response = await fetch(`${baseUrl}/${probe}`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`GET ${baseUrl}/${probe} did not answer 200 within ${timeoutMs / 1000} s (${last})`);
}

/** Runs every clean-up step even when an earlier one fails; a failure is logged, not thrown. */
export async function cleanUp(steps: Array<[what: string, step: () => Promise<unknown> | undefined]>, log: (line: string) => void): Promise<void> {
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (error) {
      log(`${what} failed: ${(error as Error).message}`);
    }
  }
}

/**
 * A scratch database and a Temporal dev server on a file database, made together; if either fails, the other is
 * removed before the error is thrown.
 */
export async function startDatabaseAndTemporal(
  name: string,
  options: { adminUrl?: string; cliPath: string; dbFile: string },
): Promise<{ database: ScratchDatabase; temporal: TemporalDevServer }> {
  const [database, temporal] = await Promise.allSettled([
    createScratchDatabase(name, options.adminUrl),
    startTemporalDevServer({ cliPath: options.cliPath, headless: true, dbFile: options.dbFile }),
  ]);
  if (database.status === 'fulfilled' && temporal.status === 'fulfilled') return { database: database.value, temporal: temporal.value };
  if (database.status === 'fulfilled') await database.value.drop().catch(() => {});
  if (temporal.status === 'fulfilled') await temporal.value.stop().catch(() => {});
  throw database.status === 'rejected' ? database.reason : (temporal as PromiseRejectedResult).reason;
}
