import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a process serving the embedded database leaves in the data folder, so that other processes (the
 * CLI, psql) connect to it rather than open the same files a second time.
 */
export interface DevState {
  /** `dev` for `gatehouse dev`; `cli` for a CLI command that opened the embedded database itself. */
  owner: 'dev' | 'cli';
  pid: number;
  databaseUrl: string;
  temporalAddress?: string;
  apiUrl?: string;
  startedAt: string;
}

const fileName = 'dev.json';

export function readRunningDevState(dataDir: string): DevState | undefined {
  let state: DevState;
  try {
    state = JSON.parse(readFileSync(join(dataDir, fileName), 'utf8')) as DevState;
  } catch {
    return undefined;
  }
  return isAlive(state.pid) ? state : undefined;
}

export function writeDevState(dataDir: string, state: DevState): void {
  writeFileSync(join(dataDir, fileName), `${JSON.stringify(state, null, 2)}\n`);
}

export function clearDevState(dataDir: string): void {
  rmSync(join(dataDir, fileName), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
