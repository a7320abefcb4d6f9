/**
 * What `npm test` needs on the machine, made ready before the tests start (npm runs this as `pretest`):
 * PostgreSQL started when it is installed but stopped, the Temporal CLI built when missing, Debian's Chromium
 * installed when missing. Each thing it does is said in one line; what it cannot do (no root, no Go, another
 * system) ends the run at once with one line naming what to install.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { localAdminUrl } from '../../db/scratch-database';
import { findTemporalCli, isExecutable, pinnedTemporalCli } from '../../runtime/temporal-binary';
import { chromiumPath } from './browser';

const run = promisify(execFile);
const say = (line: string) => console.log(`prepare: ${line}`);

class CannotPrepare extends Error {}

async function main(): Promise<void> {
  await postgres();
  await temporalCli();
  await chromium();
}

/** PostgreSQL where the tests make their scratch databases; a local cluster that is down is started. */
async function postgres(): Promise<void> {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? localAdminUrl;
  if (await reachable(adminUrl)) return;
  const { hostname, port } = new URL(adminUrl);
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(hostname);
  const missing =
    `PostgreSQL is not reachable at ${hostname}:${port || 5432}: install PostgreSQL (apt-get install postgresql) with trust ` +
    'authentication for the postgres user on 127.0.0.1, and start it, or set TEST_DATABASE_ADMIN_URL';
  if (!local || !(await has('pg_lsclusters'))) throw new CannotPrepare(missing);
  const wanted = Number(port || 5432);
  const { stdout } = await run('pg_lsclusters', ['--no-header']);
  const cluster = stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([, , clusterPort, status]) => Number(clusterPort) === wanted && status?.startsWith('down'));
  if (!cluster) throw new CannotPrepare(missing);
  const [version, name] = cluster as [string, string];
  if (!isRoot()) throw new CannotPrepare(`PostgreSQL ${version}/${name} is stopped: start it (pg_ctlcluster ${version} ${name} start) or run the tests as root`);
  say(`PostgreSQL ${version}/${name} was stopped; starting it (pg_ctlcluster ${version} ${name} start)`);
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'start']);
  for (let attempt = 0; attempt < 30; attempt++) {
    if (await reachable(adminUrl)) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new CannotPrepare(`PostgreSQL ${version}/${name} was started but does not answer at ${hostname}:${wanted}; see its log in /var/log/postgresql`);
}

/** The Temporal CLI, which carries the dev server the tests run: built with Go when it is not there. */
async function temporalCli(): Promise<void> {
  let found: string | undefined;
  try {
    found = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log: say });
  } catch (error) {
    throw new CannotPrepare(`The Temporal CLI could not be had: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!found) {
    throw new CannotPrepare(
      `The Temporal CLI is missing and Go is not installed to build it: install Go 1.23 or later (the tests run go install ${pinnedTemporalCli}), or set TEMPORAL_CLI to the binary`,
    );
  }
}

/** Debian's Chromium, which the browser tests drive through playwright-core (nothing is downloaded). */
async function chromium(): Promise<void> {
  if (isExecutable(chromiumPath)) return;
  const install = `The browser tests need Chromium at ${chromiumPath}: install it (apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary`;
  if (process.env.CHROMIUM_PATH || process.platform !== 'linux' || !isRoot() || !(await has('apt-get'))) throw new CannotPrepare(install);
  say("Chromium is missing; installing Debian's chromium package with apt-get (a minute or two)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await quietly('apt-get', ['update', '-qq'], env);
  await quietly('apt-get', ['install', '-y', '-qq', 'chromium'], env);
  if (!isExecutable(chromiumPath)) throw new CannotPrepare(install);
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function has(command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${command}`]);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command whose output matters only when it fails. */
function quietly(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new CannotPrepare(`${command} ${args.join(' ')} failed (exit ${code}):\n${output.slice(-2000)}`))));
  });
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

main().catch((error: unknown) => {
  console.error(error instanceof CannotPrepare ? `prepare: ${error.message}` : error);
  process.exit(1);
});
