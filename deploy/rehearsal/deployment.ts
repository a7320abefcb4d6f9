import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { GatehouseProcess, type SupervisedProcess } from '../../test/chaos/processes';
import { applicationNames } from '../../test/chaos/stack';
import { gatehouseBin } from '../../test/support/cli';
import type { Binaries } from './binaries';
import { readCompose, serviceEnvironment, type ComposeFile, type Variables } from './compose';
import { Network, type Host, type HostSpec } from './hosts';
import { PostgresServer } from './postgres';
import { proxyProcess } from './proxy';
import { TemporalCluster } from './temporal';

const run = promisify(execFile);

/** The hosts of the rehearsal: one per compose service, and one per api and worker replica. */
export function hostSpecs(apis: number, workers: number): HostSpec[] {
  return [
    { name: 'postgres', octet: 10 },
    { name: 'temporal', octet: 20 },
    { name: 'proxy', octet: 30 },
    ...Array.from({ length: apis }, (_, i) => ({ name: `api-${i + 1}`, octet: 41 + i, service: 'api' })),
    ...Array.from({ length: workers }, (_, i) => ({ name: `worker-${i + 1}`, octet: 51 + i, service: 'worker' })),
  ];
}

export interface DeploymentOptions {
  binaries: Binaries;
  /** The rehearsal's own folder: PostgreSQL's data, Caddy's state, the `.env`. */
  folder: string;
  logDir: string;
  log: (line: string) => void;
  apis?: number;
  workers?: number;
}

/**
 * Gatehouse deployed as docker-compose.yml deploys it, each part a host of its own on one network: PostgreSQL with
 * Gatehouse's and Temporal's databases; Temporal's four services; Caddy in front of the api replicas; the api and
 * worker replicas, with the environment compose gives them and the `.env` a user writes (the database password,
 * the payload key, the public URL).
 */
export class Deployment {
  readonly compose: ComposeFile = readCompose();
  readonly variables: Variables;
  readonly proxyUrl: string;
  readonly apis: GatehouseProcess[];
  readonly workers: GatehouseProcess[];
  readonly proxy: SupervisedProcess;
  readonly temporal: TemporalCluster;
  postgres: PostgresServer;
  /** The namespace and task queue compose gives the api and the worker. */
  readonly namespace: string;
  readonly taskQueue: string;
  /** Gatehouse's database on the server, as compose's postgres service names it. */
  readonly databaseName: string;

  private constructor(
    readonly network: Network,
    readonly options: DeploymentOptions,
    variables: Variables,
  ) {
    this.variables = variables;
    const { TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE } = serviceEnvironment(this.compose, 'worker', variables);
    this.namespace = TEMPORAL_NAMESPACE!;
    this.taskQueue = TEMPORAL_TASK_QUEUE!;
    this.databaseName = serviceEnvironment(this.compose, 'postgres', variables).POSTGRES_DB!;
    const proxyHost = network.host('proxy');
    this.proxyUrl = `http://${proxyHost.address}:3000`;
    // The superuser and its password as compose's postgres service gets them.
    const { POSTGRES_USER, POSTGRES_PASSWORD } = serviceEnvironment(this.compose, 'postgres', variables);
    this.postgres = new PostgresServer(network.host('postgres'), join(options.folder, 'postgres'), POSTGRES_USER!, POSTGRES_PASSWORD!);
    this.temporal = new TemporalCluster(network.host('temporal'), options.binaries, this.compose, variables, options.folder, options.logDir);
    this.proxy = proxyProcess(options.binaries.caddy, proxyHost, options.folder, options.logDir);
    this.apis = [...network.hosts.values()].filter((host) => host.name.startsWith('api-')).map((host) => this.gatehouse('api', host));
    this.workers = [...network.hosts.values()].filter((host) => host.name.startsWith('worker-')).map((host) => this.gatehouse('worker', host));
  }

  /** Makes the hosts and the `.env`, then starts every part in compose's order of start-up. */
  static async start(options: DeploymentOptions): Promise<Deployment> {
    const network = await Network.create(hostSpecs(options.apis ?? 2, options.workers ?? 2));
    try {
      const variables = await dotEnv(options.folder, `http://${network.host('proxy').address}:3000`);
      const deployment = new Deployment(network, options, variables);
      try {
        await deployment.bringUp();
      } catch (error) {
        await deployment.stop();
        throw error;
      }
      return deployment;
    } catch (error) {
      await network.destroy();
      throw error;
    }
  }

  /** The api or worker process of compose's service `kind` on `host`, with compose's environment for it and `extra`. */
  gatehouse(kind: 'api' | 'worker', host: Host, extra: Record<string, string> = {}, name = host.name): GatehouseProcess {
    const env = {
      // What the image sets, and a home of its own.
      PATH: process.env.PATH,
      HOME: this.options.folder,
      NODE_ENV: 'production',
      ...serviceEnvironment(this.compose, kind, this.variables),
      // How the rehearsal tells the processes' database connections apart (the chaos suite ends some of them).
      PGAPPNAME: applicationNames[kind],
      ...extra,
    };
    return new GatehouseProcess(name, kind, env, join(this.options.logDir, `${name}.log`), host.exec);
  }

  /** Gatehouse's database as this machine reaches it, its connections named `applicationName`. */
  databaseUrl(applicationName: string): string {
    return `${this.postgres.clientUrl(this.databaseName)}?application_name=${applicationName}`;
  }

  /** Runs the CLI on an api host, as `docker compose exec api node bin/gatehouse.js …` does. */
  async cli(args: string[]): Promise<any> {
    const host = this.network.host('api-1');
    const env = { PATH: process.env.PATH, HOME: this.options.folder, ...serviceEnvironment(this.compose, 'api', this.variables) };
    const { stdout } = await run(host.exec[0]!, [...host.exec.slice(1), process.execPath, gatehouseBin, ...args, '--json'], { env, maxBuffer: 16 * 1024 * 1024 });
    return JSON.parse(stdout);
  }

  /** Every process of the deployment, for the CPU each part uses and the exits nobody caused. */
  processes(): SupervisedProcess[] {
    return [...Object.values(this.temporal.services), this.proxy, ...this.apis, ...this.workers];
  }

  unexpectedExits(): number {
    return this.processes().reduce((sum, process) => sum + process.unexpectedExits.length, 0);
  }

  /** Each exit nobody caused: which process, when, and how it ended (its log says why). */
  unexpectedExitList(): { process: string; at: string; ended: string }[] {
    return this.processes().flatMap((process) =>
      process.unexpectedExits.map((exit) => ({ process: process.name, at: new Date(exit.at).toISOString(), ended: exit.signal ?? `code ${exit.code}` })),
    );
  }

  /** Waits until the api answers ready through the proxy: PostgreSQL and Temporal answer, and a worker polls. */
  async ready(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.proxyUrl}/readyz`, { signal: AbortSignal.timeout(3000) });
        last = `${response.status} ${await response.text()}`;
        if (response.status === 200) return;
      } catch (error) {
        last = (error as Error).message;
      }
      await sleep(500);
    }
    throw new Error(`the api was not ready through the proxy within ${timeoutMs / 1000} s: ${last}`);
  }

  /** Stops every part (api and proxy first, PostgreSQL last), and removes the hosts. */
  async stop(): Promise<void> {
    await Promise.all([this.proxy, ...this.apis].map((process) => process.close()));
    await Promise.all(this.workers.map((process) => process.close()));
    await this.temporal.close();
    await this.postgres.stop();
    await this.network.destroy();
  }

  /**
   * The README's restore: every part stopped, a fresh PostgreSQL server made from the backup on the same host, then
   * Temporal's services, the workers, the apis and the proxy started on it (fresh processes: their state is all in
   * the database).
   */
  async restoreFrom(backup: string, folder: string): Promise<void> {
    await Promise.all([this.proxy, ...this.apis].map((process) => process.stop()));
    await Promise.all(this.workers.map((process) => process.stop()));
    await this.temporal.stop();
    await this.postgres.stop();
    this.postgres = await PostgresServer.restore(this.postgres.host, folder, backup, this.postgres.user, this.postgres.password);
    await this.temporal.start();
    await Promise.all([...this.apis, ...this.workers].map((process) => process.start(180_000)));
    await this.proxy.start();
    await this.ready();
  }

  private async bringUp(): Promise<void> {
    const { log } = this.options;
    log(`PostgreSQL on ${this.postgres.host.address} (initdb, as the postgres image's first start)…`);
    await this.postgres.initialize(this.databaseName);
    // Twice: the README says the setup steps are safe to run again, and compose runs them on every `up`.
    for (const round of [1, 2]) {
      log(`deploy/temporal/setup-schema.sh (${round === 1 ? 'first run' : 'again, as on the next docker compose up'})…`);
      await this.temporal.setupSchema();
    }
    log("Temporal's frontend, history, matching and worker services…");
    await this.temporal.start();
    for (const round of [1, 2]) {
      log(`deploy/temporal/setup-namespace.sh (${round === 1 ? 'first run' : 'again'})…`);
      await this.temporal.setupNamespace();
    }
    log(`${this.apis.length} apis and ${this.workers.length} workers, each on a host of its own…`);
    await Promise.all([...this.apis, ...this.workers].map((process) => process.start(180_000)));
    log(`Caddy at ${this.proxyUrl}…`);
    await this.proxy.start();
    await this.ready();
  }
}

/**
 * The `.env` a user writes before `docker compose up`: the database password, the payload key and the stored
 * secrets' key (made as the README says, with `gatehouse temporal payload-key` and `gatehouse secrets key`) and where
 * people reach the service. Kept in the rehearsal's folder.
 */
async function dotEnv(folder: string, publicUrl: string): Promise<Variables> {
  const newKey = async (...command: string[]) => (JSON.parse((await run(process.execPath, [gatehouseBin, ...command, '--json'])).stdout) as { key: string }).key;
  const variables: Variables = {
    POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
    PAYLOAD_ENCRYPTION_KEYS: await newKey('temporal', 'payload-key'),
    SECRETS_ENCRYPTION_KEYS: await newKey('secrets', 'key'),
    PUBLIC_URL: publicUrl,
  };
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, '.env'), Object.entries(variables).map(([name, value]) => `${name}=${value}\n`).join(''), { mode: 0o600 });
  return variables;
}
