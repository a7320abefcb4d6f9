import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli, isExecutable } from '../../runtime/temporal-binary';
import type { PinnedVersions } from './compose';

const run = promisify(execFile);

/** What the rehearsal runs natively in place of the images: each built once with Go, at the version compose pins. */
export interface Binaries {
  /** temporalio/server's `temporal-server` (go.temporal.io/server/cmd/server). */
  temporalServer: string;
  /** temporalio/admin-tools' `temporal-sql-tool` (go.temporal.io/server/cmd/tools/sql). */
  sqlTool: string;
  /** caddy's `caddy`. */
  caddy: string;
  /** The Temporal CLI, as the tests use it: the admin tools' `temporal` for the namespace step and operators' queries. */
  temporalCli: string;
}

/**
 * Where built binaries are kept, one folder per module and version, so that a version pinned anew is built anew
 * and an old one is never mistaken for it.
 */
export const binaryCache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gatehouse', 'bin');

interface GoBinary {
  /** The module the package is in: binaries of one module and version are built by one `go install`. */
  module: string;
  /** The package to `go install`, without its version. */
  package: string;
  version: string;
  /** What `go install` names it: the package's last path segment. */
  name: string;
  /** Set to a path to use that binary instead. */
  override: string;
}

type Built = Exclude<keyof Binaries, 'temporalCli'>;

/** Builds what is missing (minutes on a fresh machine, once), and says so in one line each. */
export async function deploymentBinaries(versions: PinnedVersions, log: (line: string) => void): Promise<Binaries> {
  const temporal = 'go.temporal.io/server';
  const wanted: Record<Built, GoBinary> = {
    temporalServer: { module: temporal, package: `${temporal}/cmd/server`, version: `v${versions.temporalServer}`, name: 'server', override: 'TEMPORAL_SERVER_BIN' },
    sqlTool: { module: temporal, package: `${temporal}/cmd/tools/sql`, version: `v${versions.temporalAdminTools}`, name: 'sql', override: 'TEMPORAL_SQL_TOOL' },
    caddy: { module: 'github.com/caddyserver/caddy/v2', package: 'github.com/caddyserver/caddy/v2/cmd/caddy', version: `v${versions.caddy}`, name: 'caddy', override: 'CADDY_BIN' },
  };
  const temporalCli = await findTemporalCli({ configured: process.env.TEMPORAL_CLI, log });
  if (!temporalCli) throw new Error('the rehearsal needs the Temporal CLI: install Go, or set TEMPORAL_CLI to the binary');
  const built: Partial<Binaries> = { temporalCli };
  const missing: GoBinary[] = [];
  for (const [key, binary] of Object.entries(wanted) as [Built, GoBinary][]) {
    const configured = process.env[binary.override];
    if (configured && !isExecutable(configured)) throw new Error(`${binary.override}=${configured} is not an executable file`);
    built[key] = configured ?? cachedPath(binary);
    if (!configured && !isExecutable(built[key])) missing.push(binary);
  }
  // One build per module and version: the server and its SQL tool share nearly all their code.
  const builds = new Map<string, GoBinary[]>();
  for (const binary of missing) builds.set(`${binary.module}@${binary.version}`, [...(builds.get(`${binary.module}@${binary.version}`) ?? []), binary]);
  for (const binaries of builds.values()) await goInstall(binaries, log);
  return built as Binaries;
}

const cachedPath = (binary: GoBinary) => join(binaryCache, `${binary.module.replaceAll('/', '_')}@${binary.version}`, binary.name);

async function goInstall(binaries: GoBinary[], log: (line: string) => void): Promise<void> {
  const folder = dirname(cachedPath(binaries[0]!));
  const packages = binaries.map((binary) => `${binary.package}@${binary.version}`);
  const started = Date.now();
  log(`building ${packages.join(' and ')} with go install into ${folder} (minutes on a fresh machine, once)…`);
  mkdirSync(folder, { recursive: true });
  try {
    await run('go', ['install', ...packages], { env: { ...process.env, GOBIN: folder }, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const output = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-5).join('\n');
    const overrides = binaries.map((binary) => binary.override).join(' or ');
    throw new Error(`go install ${packages.join(' ')} failed${output ? `:\n${output}` : ` (${(error as Error).message})`}; set ${overrides} to a binary you have`, {
      cause: error,
    });
  }
  log(`built ${binaries.map((binary) => binary.name).join(' and ')} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
