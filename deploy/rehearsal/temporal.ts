import { Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SupervisedProcess, until } from '../../test/chaos/processes';
import type { Binaries } from './binaries';
import { mountedPath, serviceEnvironment, type ComposeFile, type Variables } from './compose';
import type { Host } from './hosts';

const run = promisify(execFile);
const setupFolder = fileURLToPath(new URL('../temporal/', import.meta.url));

/** Temporal's services, each a process of its own here (compose runs the image's one process with all four). */
export const temporalServices = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof temporalServices)[number];

/** Each service's gRPC port, as the image's configuration template sets them. */
const grpcPorts: Record<TemporalService, number> = { frontend: 7233, history: 7234, matching: 7235, worker: 7239 };

/**
 * Temporal's server on PostgreSQL, as compose runs it: the server binary at the image's version with the image's
 * own configuration (the template built into the binary, read from the environment compose gives the `temporal`
 * service), one process per service on the Temporal host so that one can be restarted alone; its databases made,
 * and its namespace and Gatehouse's search attributes registered, by the setup scripts compose mounts.
 */
export class TemporalCluster {
  readonly services: Record<TemporalService, SupervisedProcess>;
  /** Where clients on this machine reach the frontend. */
  readonly clientAddress: string;

  constructor(
    private readonly host: Host,
    private readonly binaries: Binaries,
    private readonly compose: ComposeFile,
    private readonly variables: Variables,
    private readonly folder: string,
    logDir: string,
  ) {
    this.clientAddress = `${host.address}:${grpcPorts.frontend}`;
    const composed = serviceEnvironment(compose, 'temporal', variables);
    const environment = {
      ...composed,
      // What the image's entrypoint adds when it binds to every address: the address to announce, the host's own.
      TEMPORAL_BROADCAST_ADDRESS: host.address,
      // The file compose mounts into the container, read in place.
      DYNAMIC_CONFIG_FILE_PATH: mountedPath(compose, 'temporal', composed.DYNAMIC_CONFIG_FILE_PATH!),
    };
    this.services = Object.fromEntries(
      temporalServices.map((service) => [
        service,
        new SupervisedProcess(
          `temporal ${service}`,
          {
            command: binaries.temporalServer,
            args: ['start'],
            // TEMPORAL_SERVICES: the services this process runs (the image's `start` runs all four).
            env: { PATH: process.env.PATH, ...environment, TEMPORAL_SERVICES: service },
            prefix: host.exec,
            // A history service hands its shards over before it exits.
            stopGraceMs: 30_000,
          },
          join(logDir, `temporal-${service}.log`),
          ({ signal }) => until(() => this.answers(service), signal, 250),
        ),
      ]),
    ) as Record<TemporalService, SupervisedProcess>;
  }

  /** compose's `temporal-schema` step: deploy/temporal/setup-schema.sh with that service's environment. */
  async setupSchema(): Promise<string> {
    return this.script('setup-schema.sh', { ...serviceEnvironment(this.compose, 'temporal-schema', this.variables), TEMPORAL_SQL_TOOL: this.binaries.sqlTool });
  }

  /** compose's `temporal-admin-tools` step: the namespace and Gatehouse's search attributes, by setup-namespace.sh. */
  async setupNamespace(): Promise<string> {
    // The admin-tools image has the Temporal CLI on its PATH as `temporal`.
    const bin = join(this.folder, 'bin');
    mkdirSync(bin, { recursive: true });
    try {
      symlinkSync(this.binaries.temporalCli, join(bin, 'temporal'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // The CLI reads its profile from under HOME, as the image's user has one.
    return this.script('setup-namespace.sh', { ...serviceEnvironment(this.compose, 'temporal-admin-tools', this.variables), PATH: `${bin}:${process.env.PATH}`, HOME: this.folder });
  }

  /**
   * History first, alone: on a fresh database the first service to start writes the cluster's metadata, and two
   * doing it at once fail (as Temporal's own multi-process compose orders it). Then the others together.
   */
  async start(): Promise<void> {
    await this.services.history.start(180_000);
    await Promise.all(temporalServices.filter((service) => service !== 'history').map((service) => this.services[service].start(180_000)));
  }

  /** Stops one service (SIGTERM) and starts it again; resolves once it answers. */
  async restart(service: TemporalService): Promise<void> {
    await this.services[service].stop();
    await this.services[service].start(180_000);
  }

  async stop(): Promise<void> {
    // Frontend first, so that no new request reaches the services behind it as they go.
    for (const service of temporalServices) await this.services[service].stop();
  }

  async close(): Promise<void> {
    for (const service of temporalServices) await this.services[service].close();
  }

  /** Exits of Temporal's processes that the rehearsal did not cause. */
  unexpectedExits(): number {
    return temporalServices.reduce((sum, service) => sum + this.services[service].unexpectedExits.length, 0);
  }

  private async answers(service: TemporalService): Promise<boolean> {
    if (service !== 'frontend') return portOpen(this.host.address, grpcPorts[service]);
    const connection = await Connection.connect({ address: this.clientAddress, connectTimeout: 2000 });
    try {
      const { status } = await connection.healthService.check({});
      return status === 1; // SERVING
    } finally {
      await connection.close();
    }
  }

  private async script(name: string, env: Record<string, string | undefined>): Promise<string> {
    const command = [...this.host.exec, 'sh', join(setupFolder, name)];
    try {
      const { stdout, stderr } = await run(command[0]!, command.slice(1), { env: { PATH: process.env.PATH, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
      return `${stdout}${stderr}`;
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      const output = `${stdout ?? ''}${stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
      throw new Error(`deploy/temporal/${name} failed: ${output || (error as Error).message}`, { cause: error });
    }
  }
}

function portOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
