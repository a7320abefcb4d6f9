import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const gatehouseBin = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `gatehouse …` as a user would, in its own process. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [gatehouseBin, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
    });
  });
}

/** Starts a long-running `gatehouse …` and resolves with its first complete JSON document on stdout. */
export function startCli(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<any>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [gatehouseBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = new Promise<any>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        resolve(JSON.parse(stdout));
      } catch {
        // not complete yet
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    void exited.then((code) => reject(new Error(`gatehouse ${args.join(' ')} exited (${code}) before it was ready:\n${stderr}`)));
  });
  return { child, ready, exited };
}

/** The environment minus anything that would point the CLI at servers the test did not choose. */
export function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PORT', 'GATEHOUSE_DATA_DIR', 'PUBLIC_URL', 'SECRETS_ENCRYPTION_KEYS', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID']) delete env[name];
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}
