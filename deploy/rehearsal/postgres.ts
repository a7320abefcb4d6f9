import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { postgresBinaries, postgresUser } from '../../test/chaos/postgres-cluster';
import type { Host } from './hosts';

const run = promisify(execFile);

/**
 * The PostgreSQL server of the deployment, on a host of its own: one server for Gatehouse's database and Temporal's
 * two, as compose's `postgres` service. Made the way the official image makes it (initdb with the superuser and
 * its password; local connections trusted, every other one by password), from this machine's PostgreSQL binaries:
 * version 15 here, where compose's image is 16.
 */
export class PostgresServer {
  private readonly data: string;
  private readonly socketDir: string;

  constructor(
    readonly host: Host,
    /** Owned by the postgres OS user: the data folder, the socket, the log. */
    private readonly folder: string,
    readonly user: string,
    readonly password: string,
  ) {
    this.data = join(folder, 'data');
    this.socketDir = folder;
  }

  /** The URL a client on the rehearsal's network uses (the name `postgres` resolves on every host). */
  url(database: string, hostName = 'postgres'): string {
    return `postgres://${this.user}:${encodeURIComponent(this.password)}@${hostName}:5432/${database}`;
  }

  /** The same from this machine, which has no hosts file of the rehearsal's: by the server's address. */
  clientUrl(database: string): string {
    return this.url(database, this.host.address);
  }

  /** A new cluster, as the image's first start makes it, with the database `database` in it. */
  async initialize(database: string): Promise<void> {
    const owner = await postgresOsUser();
    mkdirSync(this.folder, { recursive: true });
    chownSync(this.folder, owner.uid, owner.gid);
    const passwordFile = join(this.folder, 'password');
    writeFileSync(passwordFile, `${this.password}\n`, { mode: 0o600 });
    chownSync(passwordFile, owner.uid, owner.gid);
    await this.tool('initdb', ['-D', this.data, '-U', this.user, `--pwfile=${passwordFile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-instructions']);
    // The image's pg_hba.conf: every address by password, replication too (pg_basebackup over the network).
    writeFileSync(join(this.data, 'pg_hba.conf'), `${readFileSync(join(this.data, 'pg_hba.conf'), 'utf8')}\nhost all all all scram-sha-256\nhost replication all all scram-sha-256\n`);
    await this.start();
    const admin = new pg.Client({ connectionString: this.clientUrl('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
  }

  /** Starts the server on its host; resolves once it accepts connections. */
  async start(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.data, '-l', join(this.folder, 'server.log'), '-o', this.serverOptions(), '-w', '-t', '120', 'start'], { onHost: true });
  }

  /** `pg_ctl restart -m fast`: every connection ends, as a failover or a restart does; resolves once it accepts connections again. */
  async restart(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.data, '-l', join(this.folder, 'server.log'), '-o', this.serverOptions(), '-m', 'fast', '-w', '-t', '120', 'restart'], { onHost: true });
  }

  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (!existsSync(join(this.data, 'postmaster.pid'))) return;
    await this.tool('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop']).catch(() => {});
  }

  /** The postmaster's pid (its backends are its children), for the CPU it and they use. */
  pid(): number | undefined {
    try {
      return Number(readFileSync(join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  }

  /**
   * One consistent copy of the whole server (every database, Gatehouse's and Temporal's, at one moment), as the
   * README's backup does it: pg_basebackup, compressed tar files, the WAL it needs streamed with it, an immediate
   * checkpoint. Run on the server's host as the postgres OS user over the local socket, as `docker compose exec` does.
   */
  async backup(into: string): Promise<void> {
    const owner = await postgresOsUser();
    mkdirSync(into, { recursive: true });
    chownSync(into, owner.uid, owner.gid);
    await this.tool('pg_basebackup', ['-h', this.socketDir, '-U', this.user, '-D', join(into, 'base'), '-Ft', '-z', '-X', 'stream', '-c', 'fast'], { onHost: true });
  }

  /**
   * A fresh server made from a backup, as the README's restore does it: base.tar.gz unpacked into an empty data
   * folder and pg_wal.tar.gz into its pg_wal, then started; it replays the WAL to the backup's end.
   */
  static async restore(host: Host, folder: string, backup: string, user: string, password: string): Promise<PostgresServer> {
    const server = new PostgresServer(host, folder, user, password);
    const owner = await postgresOsUser();
    mkdirSync(server.data, { recursive: true, mode: 0o700 });
    chownSync(folder, owner.uid, owner.gid);
    chownSync(server.data, owner.uid, owner.gid);
    await server.tool('tar', ['-xzf', join(backup, 'base', 'base.tar.gz'), '-C', server.data]);
    await server.tool('tar', ['-xzf', join(backup, 'base', 'pg_wal.tar.gz'), '-C', join(server.data, 'pg_wal')]);
    await server.start();
    return server;
  }

  private serverOptions(): string {
    // The socket in the server's own folder: the machine's own server's is never touched.
    return `-c listen_addresses=* -p 5432 -k ${this.socketDir} -c max_connections=300`;
  }

  /** A PostgreSQL program as the postgres OS user (initdb and the server refuse root), on the server's host if asked. */
  private async tool(name: string, args: string[], options: { onHost?: boolean } = {}): Promise<void> {
    const binary = name === 'tar' ? 'tar' : join(postgresBinaries(), name);
    const command = [...(options.onHost ? this.host.exec : []), 'runuser', '-u', 'postgres', '--', binary, ...args];
    try {
      await run(command[0]!, command.slice(1), { maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`${name} failed: ${stderr?.trim() || (error as Error).message}`, { cause: error });
    }
  }
}

async function postgresOsUser(): Promise<{ uid: number; gid: number }> {
  const user = await postgresUser();
  if (!user) throw new Error('the rehearsal runs as root (network namespaces need it)');
  return user;
}
