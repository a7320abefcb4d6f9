import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../../db/migrate';
import { freePort } from '../../runtime/temporal-dev-server';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of the suite's own (initdb on a spare port, in a temporary folder), for the scenario that
 * restarts the server: the machine's shared server is never stopped.
 */
export interface OwnCluster {
  port: number;
  adminUrl: string;
  /** `pg_ctl restart -m fast`: every connection ends; resolves once the server accepts connections again. */
  restart(): Promise<void>;
  /** A fresh, migrated database on the cluster. */
  createDatabase(name: string): Promise<string>;
  destroy(): Promise<void>;
}

/** Debian's and Ubuntu's place for the server binaries; CHAOS_PG_BIN names another. */
export function postgresBinaries(): string {
  const configured = process.env.CHAOS_PG_BIN;
  if (configured) return configured;
  for (const version of ['17', '16', '15', '14']) {
    const dir = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(join(dir, 'initdb'))) return dir;
  }
  throw new Error('initdb not found: set CHAOS_PG_BIN to the folder of the PostgreSQL server binaries');
}

/** initdb refuses to run as root; there the tools run as the `postgres` OS user, who owns the folder. */
export async function postgresUser(): Promise<{ prefix: string[]; uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

export async function startOwnCluster(log: (line: string) => void): Promise<OwnCluster> {
  const bin = postgresBinaries();
  const user = await postgresUser();
  const folder = mkdtempSync(join(tmpdir(), 'gatehouse-chaos-pg-'));
  if (user) chownSync(folder, user.uid, user.gid);
  const data = join(folder, 'data');
  const tool = (name: string, args: string[]) => {
    const [command, ...rest] = [...(user?.prefix ?? []), join(bin, name), ...args];
    return run(command!, rest, { maxBuffer: 16 * 1024 * 1024 });
  };
  const port = await freePort();
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // The socket goes in the cluster's folder, so the machine's server's socket directory is never touched.
  const serverOptions = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  await tool('pg_ctl', ['-D', data, '-l', join(folder, 'server.log'), '-o', serverOptions, '-w', '-t', '60', 'start']);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  log(`own PostgreSQL cluster on port ${port} in ${folder}`);

  return {
    port,
    adminUrl,
    async restart() {
      await tool('pg_ctl', ['-D', data, '-l', join(folder, 'server.log'), '-m', 'fast', '-w', '-t', '60', 'restart']);
    },
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      const url = `postgres://postgres@127.0.0.1:${port}/${name}`;
      await migrate(url);
      return url;
    },
    async destroy() {
      await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
