import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { devServerSearchAttributeFlags } from './search-attributes';

export interface TemporalDevServer {
  address: string;
  /** The server's process (the benchmark reads its CPU time from /proc). */
  pid: number | undefined;
  uiUrl: string | undefined;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  cliPath: string;
  /** File database; without one, workflows are lost when the server stops. */
  dbFile?: string;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  /** SQLite settings of the file database (default fileDatabasePragmas; [] for the dev server's own). */
  sqlitePragmas?: string[];
  /** Whether Gatehouse's search attributes are registered as it starts (default true; false for a bare server). */
  searchAttributes?: boolean;
  /**
   * Whether the server reads its search attributes from the database on every lookup
   * (`system.forceSearchAttributesCacheRefreshOnRead`, which Temporal says should not be on in production). The CLI
   * turns it on so that attributes added while it runs are seen at once; a server whose attributes are all
   * registered as it starts has nothing to refresh, so it is off then (default), and on for a bare server
   * (`searchAttributes: false`), to which they are added later.
   */
  refreshSearchAttributesOnRead?: boolean;
  /** Where the Web UI's browser decodes encrypted payloads (Temporal's remote codec). */
  uiCodecEndpoint?: string;
}

/**
 * Dev-server settings for a one-machine service. Its single history shard dispatches at most 20 tasks a
 * second by default, which puts ~50 ms before every workflow and activity task of a gated write; and a
 * task queue's four partitions sometimes leave a new workflow's first task waiting ~2 s for a poller.
 */
const devDynamicConfig = [
  'history.transferProcessorMaxPollRPS=1000',
  'history.timerProcessorMaxPollRPS=1000',
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
];

/**
 * The file database's SQLite settings. By default the dev server runs SQLite with a rollback journal
 * (journal_mode=delete) and syncs it on every commit, several times per workflow task. Write-ahead logging with
 * synchronous=normal syncs only at checkpoints: a killed server process loses nothing (the log is in the OS's
 * cache), while a power cut or a crash of the machine may lose the last commits before the checkpoint (never
 * corrupt the file). Measured on a 2-core machine, a gated write's latency roughly halves. A one-machine
 * service that must survive power loss without losing a held write's last step runs Temporal on PostgreSQL
 * (docker-compose.yml), not the dev server.
 */
export const fileDatabasePragmas = ['journal_mode=wal', 'synchronous=normal'];

/** Runs `temporal server start-dev` as a child process and waits until it answers. */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const port = options.port ?? (await freePort());
  await assertPortFree(port, `Temporal's port ${port}`);
  const uiPort = options.headless ? undefined : (options.uiPort ?? port + 1000);
  if (uiPort) await assertPortFree(uiPort, `the Temporal Web UI's port ${uiPort}`);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'];
  for (const setting of devDynamicConfig) args.push('--dynamic-config-value', setting);
  const refreshOnRead = options.refreshSearchAttributesOnRead ?? options.searchAttributes === false;
  args.push('--dynamic-config-value', `system.forceSearchAttributesCacheRefreshOnRead=${refreshOnRead}`);
  if (options.searchAttributes !== false) args.push(...devServerSearchAttributeFlags());
  if (options.dbFile) {
    mkdirSync(dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
    for (const pragma of options.sqlitePragmas ?? fileDatabasePragmas) args.push('--sqlite-pragma', pragma);
  }
  if (uiPort) args.push('--ui-port', String(uiPort));
  else args.push('--headless');
  if (uiPort && options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);

  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const address = `127.0.0.1:${port}`;
  try {
    await waitUntilServing(address, exited);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`, { cause: error });
  }
  return {
    address,
    pid: child.pid,
    uiUrl: uiPort ? `http://localhost:${uiPort}` : undefined,
    stop: () => stopChild(child, exited),
  };
}

async function waitUntilServing(address: string, exited: Promise<number | null>): Promise<void> {
  const deadline = Date.now() + 60_000;
  let stopped: number | null | undefined;
  void exited.then((code) => (stopped = code));
  while (Date.now() < deadline) {
    if (stopped !== undefined) throw new Error(`the Temporal dev server exited (code ${stopped}) before it served`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address} within a minute`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function assertPortFree(port: number, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', () =>
      reject(new Error(`${what} is taken; set TEMPORAL_ADDRESS to use the server there, or TEMPORAL_DEV_PORT / TEMPORAL_UI_PORT to choose others`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}
