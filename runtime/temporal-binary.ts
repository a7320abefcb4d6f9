import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Later tags carry a `replace` directive in their go.mod, which `go install` refuses. */
export const pinnedTemporalCli = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/**
 * Finds the Temporal CLI (which carries the dev server): TEMPORAL_CLI, then `temporal` on PATH, then Go's
 * bin folder; where Go is installed it builds the pinned version. Returns undefined when none can be had.
 */
export async function findTemporalCli(
  options: { configured?: string; install?: boolean; log?: (line: string) => void } = {},
): Promise<string | undefined> {
  if (options.configured) {
    if (!isExecutable(options.configured)) throw new Error(`TEMPORAL_CLI=${options.configured} is not an executable file`);
    return options.configured;
  }
  const onPath = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'temporal'));
  const goBin = await goBinFolder();
  const candidates = [...onPath, ...(goBin ? [join(goBin, 'temporal')] : [])];
  const found = candidates.find(isExecutable);
  if (found || options.install === false || !goBin) return found;

  options.log?.(`Building the Temporal CLI with go install ${pinnedTemporalCli} (the first build takes minutes)…`);
  await run('go', ['install', pinnedTemporalCli], { maxBuffer: 64 * 1024 * 1024 });
  const built = join(goBin, 'temporal');
  return isExecutable(built) ? built : undefined;
}

async function goBinFolder(): Promise<string | undefined> {
  try {
    const { stdout } = await run('go', ['env', 'GOBIN', 'GOPATH']);
    const [gobin, gopath] = stdout.split('\n').map((line) => line.trim());
    if (gobin) return gobin;
    if (gopath) return join(gopath.split(delimiter)[0]!, 'bin');
  } catch {
    // Go is not installed.
  }
  return undefined;
}

/** Whether a file exists and may be run. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
