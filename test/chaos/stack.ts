import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDatabase, type Database } from '../../db/database';
import { createScratchDatabase, localAdminUrl } from '../../db/scratch-database';
import { freePort, startTemporalDevServer, type TemporalDevServer } from '../../runtime/temporal-dev-server';
import { cleanEnv } from '../support/cli';
import { testSecretsEnv } from '../support/secrets';
import { createChaosOrganization, type ChaosOrganization } from './fixture';
import { startOwnCluster, type OwnCluster } from './postgres-cluster';
import { GatehouseProcess } from './processes';

/** The application_name of each process's connections, by which a scenario finds (and ends) them. */
export const applicationNames = { api: 'chaos-api', worker: 'chaos-worker', driver: 'chaos-driver' } as const;

export interface StackOptions {
  workers?: number;
  /** API keys, one per writer. */
  agents?: number;
  /** A PostgreSQL server the scenario may restart (never the machine's shared one). */
  restartablePostgres?: boolean;
  /** More settings for the workers (REVIEW_EXPIRY, say). */
  workerEnv?: Record<string, string>;
}

export interface SuiteEnvironment {
  temporalCli: string;
  /** The machine's PostgreSQL server, as its superuser, where scratch databases are made and dropped. */
  adminUrl: string;
  /** Where each process's output is kept. */
  logDir: string;
}

/** Temporal as a scenario sees it: stopped whole and started again, held writes waiting in it. */
export interface TemporalControl {
  /** Where this machine's clients reach it. */
  address: string;
  /** What it is, for the scenario's report: "the Temporal dev server (same port, same db file)". */
  description: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** The PostgreSQL server the scenario's database lives on, when the scenario may restart it. */
export interface PostgresControl {
  description: string;
  /** Every connection ends; resolves once the server accepts connections again. */
  restart(): Promise<void>;
}

/** The Temporal dev server, its state in a file, so that it finds its workflows again after a restart on the same port. */
export class TemporalServer implements TemporalControl {
  private server: TemporalDevServer | undefined;
  readonly address: string;
  readonly description = 'the Temporal dev server (same port, same db file)';

  constructor(
    private readonly cliPath: string,
    private readonly dbFile: string,
    private readonly port: number,
  ) {
    this.address = `127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    this.server = await startTemporalDevServer({ cliPath: this.cliPath, dbFile: this.dbFile, port: this.port, headless: true });
  }

  /** SIGTERM, as an operator stops it (SIGKILL after 10 s). */
  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }
}

/** Everything one scenario runs against: its own database, Temporal server, api and workers, and an organization. */
export interface Stack {
  databaseName: string;
  databaseUrl: string;
  /** The suite's own connections to the scenario's database, to count rows and end other connections. */
  db: Database;
  temporal: TemporalControl;
  /** Present when the scenario asked for a PostgreSQL it may restart. */
  postgres?: PostgresControl;
  /** The first api; writers reach every api through `apiUrl`. */
  api: GatehouseProcess;
  apis: GatehouseProcess[];
  /** Where writers send requests, `http://…/api`; the same after a restart (an api's own port, or a proxy's). */
  apiUrl: string;
  workers: GatehouseProcess[];
  org: ChaosOrganization;
  /** Exits of the service's processes the suite did not cause. */
  unexpectedExits(): number;
  teardown(): Promise<void>;
}

export async function createStack(id: string, options: StackOptions, suite: SuiteEnvironment): Promise<Stack> {
  const cleanups: (() => Promise<void>)[] = [];
  const teardown = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    cleanups.length = 0;
  };
  try {
    const folder = mkdtempSync(join(tmpdir(), `gatehouse-chaos-${id}-`));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));

    let postgres: PostgresControl | undefined;
    let cluster: OwnCluster | undefined;
    if (options.restartablePostgres) {
      cluster = await startOwnCluster((line) => process.stderr.write(`chaos: ${id}: ${line}\n`));
      cleanups.push(() => cluster!.destroy());
      postgres = { description: `the suite's own PostgreSQL cluster (initdb, port ${cluster.port})`, restart: () => cluster!.restart() };
    }
    const temporal = new TemporalServer(suite.temporalCli, join(folder, 'temporal.db'), await freePort());
    // Both settle before anything throws, so that the teardown finds whichever one started.
    const [opened, started] = await Promise.allSettled([openDatabase(cluster, suite.adminUrl), temporal.start()]);
    if (started.status === 'fulfilled') cleanups.push(() => temporal.stop());
    if (opened.status === 'fulfilled' && opened.value.drop) cleanups.push(opened.value.drop);
    if (opened.status === 'rejected') throw opened.reason;
    if (started.status === 'rejected') throw started.reason;
    const { name: databaseName, url: databaseUrl } = opened.value;
    const db = connectDatabase(withApplicationName(databaseUrl, applicationNames.driver), { maxConnections: 4 });
    cleanups.push(() => db.close());

    const org = await createChaosOrganization(db, options.agents ?? 8);
    const port = await freePort();
    const shared = cleanEnv({
      ...testSecretsEnv,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'chaos',
      GATEHOUSE_DATA_DIR: join(folder, 'data'),
      HOST: '127.0.0.1',
    });
    mkdirSync(suite.logDir, { recursive: true });
    const api = new GatehouseProcess(
      'api',
      'api',
      { ...shared, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, PGAPPNAME: applicationNames.api },
      join(suite.logDir, `${id}-api.log`),
    );
    const workers = Array.from(
      { length: options.workers ?? 1 },
      (_, i) =>
        new GatehouseProcess(
          `worker ${i + 1}`,
          'worker',
          { ...shared, PGAPPNAME: applicationNames.worker, ...options.workerEnv },
          join(suite.logDir, `${id}-worker-${i + 1}.log`),
        ),
    );
    cleanups.push(async () => {
      await Promise.all([api, ...workers].map((process) => process.close()));
    });
    await Promise.all([api.start(), ...workers.map((worker) => worker.start())]);

    return {
      databaseName,
      databaseUrl,
      db,
      temporal,
      postgres,
      api,
      apis: [api],
      apiUrl: `http://127.0.0.1:${port}/api`,
      workers,
      org,
      unexpectedExits: () => [api, ...workers].reduce((sum, process) => sum + process.unexpectedExits.length, 0),
      teardown,
    };
  } catch (error) {
    await teardown();
    throw error;
  }
}

/** A database of the scenario's own: on the given cluster, else a scratch database on the machine's server (dropped after). */
async function openDatabase(cluster: OwnCluster | undefined, adminUrl: string): Promise<{ name: string; url: string; drop?: () => Promise<void> }> {
  if (cluster) {
    const name = 'gatehouse_chaos';
    return { name, url: await cluster.createDatabase(name) };
  }
  const scratch = await createScratchDatabase('chaos', adminUrl);
  return { name: scratch.name, url: scratch.url, drop: () => scratch.drop() };
}

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

export const defaultAdminUrl = () => process.env.CHAOS_DATABASE_ADMIN_URL ?? process.env.TEST_DATABASE_ADMIN_URL ?? localAdminUrl;
