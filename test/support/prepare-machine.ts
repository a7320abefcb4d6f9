/**
 * What `npm test` needs on the machine, made ready before the tests start (npm runs this as `pretest`):
 * PostgreSQL installed when missing and started when stopped, the Temporal CLI built when missing, Debian's
 * Chromium installed when missing. Each thing it does is said in one line; what it cannot do (no root, no Go, another
 * system) ends the run at once with one line naming what to install.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { localAdminUrl } from '../../db/scratch-database';
import { findTemporalCli, isExecutable, pinnedTemporalCli } from '../../runtime/temporal-binary';
import { chromiumPath } from './browser';
import { has } from './commands';

const run = promisify(execFile);
const say = (line: string) => console.log(`prepare: ${line}`);

class CannotPrepare extends Error {}

async function main(): Promise<void> {
  await postgres();
  await temporalCli();
  await chromium();
}

/**
 * PostgreSQL where the tests make their scratch databases: installed (as root, with apt-get) when missing, and a
 * local cluster that is down started.
 */
async function postgres(): Promise<void> {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? localAdminUrl;
  if (await answers(adminUrl)) return;
  const { hostname, port } = new URL(adminUrl);
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(hostname);
  const missing =
    `PostgreSQL is not reachable at ${hostname}:${port || 5432}: install PostgreSQL (apt-get install postgresql) with trust ` +
    'authentication for the postgres user on 127.0.0.1, and start it, or set TEST_DATABASE_ADMIN_URL';
  if (!local) throw new CannotPrepare(missing);
  if (!(await has('pg_lsclusters'))) {
    if (!isRoot() || !(await has('apt-get'))) throw new CannotPrepare(missing);
    say('PostgreSQL is not installed; installing Debian\'s postgresql package with apt-get');
    await aptInstall('postgresql');
  }
  const wanted = Number(port || 5432);
  const { stdout } = await run('pg_lsclusters', ['--no-header']);
  const cluster = stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find(([, , clusterPort, status]) => Number(clusterPort) === wanted && status?.startsWith('down'));
  if (cluster) {
    const [version, name] = cluster as [string, string];
    if (!isRoot()) throw new CannotPrepare(`PostgreSQL ${version}/${name} is stopped: start it (pg_ctlcluster ${version} ${name} start) or run the tests as root`);
    say(`PostgreSQL ${version}/${name} was stopped; starting it (pg_ctlcluster ${version} ${name} start)`);
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'start']);
  }
  for (let attempt = 0; attempt < 30; attempt++) {
    if (await answers(adminUrl)) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new CannotPrepare(missing);
}

/** Whether the server takes the tests' login; one that refuses it is a setting to change, said so at once. */
async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('28') || /password/i.test((error as Error).message)) {
      const { hostname, port, username } = new URL(url);
      throw new CannotPrepare(
        `PostgreSQL at ${hostname}:${port || 5432} refuses the login of ${username || 'postgres'} (${(error as Error).message}): let that superuser in ` +
          `without a password (a "trust" line for 127.0.0.1/32 in pg_hba.conf, then reload) or set TEST_DATABASE_ADMIN_URL to a URL that logs in`,
      );
    }
    return false;
  } finally {
    await client.end().catch(() => {});
  }
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
  await aptInstall('chromium');
  if (!isExecutable(chromiumPath)) throw new CannotPrepare(install);
}

/** Installs one Debian package, quietly. */
async function aptInstall(name: string): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await quietly('apt-get', ['update', '-qq'], env);
  await quietly('apt-get', ['install', '-y', '-qq', name], env);
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
