import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux on x86 and arm). */
const ticksPerSecond = 100;

/**
 * A process whose CPU time is read: a child by its pid, the bench process itself, a process with all its
 * descendants (PostgreSQL's postmaster and its backends), or a process's main thread alone (a Node process's
 * JavaScript, which one core bounds).
 */
export type Measured =
  | { name: string; pid: number | undefined }
  | { name: string; self: true }
  | { name: string; tree: number | undefined }
  | { name: string; mainThread: number | undefined };

/** The fields of a /proc stat line after the command (which is in parentheses and may hold spaces). */
function statFields(path: string): string[] | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime (fields 14 and 15 of stat(5): the 12th and 13th after the command), and with `children` the reaped children's too. */
function ticks(fields: string[], children = false): number {
  const own = Number(fields[11]) + Number(fields[12]);
  return children ? own + Number(fields[13]) + Number(fields[14]) : own;
}

/** Every process's parent, read once from /proc. */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const fields = statFields(`/proc/${pid}/stat`);
    if (fields) map.set(pid, Number(fields[1]));
  }
  return map;
}

/**
 * CPU milliseconds (user + system, all threads) used so far, from /proc; undefined where there is no /proc (not
 * Linux) or the process is gone. A tree counts the live descendants and every reaped one (the kernel adds a
 * waited-for child's time to its parent's).
 */
export function cpuMs(process_: Measured): number | undefined {
  if ('self' in process_) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  if ('mainThread' in process_) {
    const fields = process_.mainThread === undefined ? undefined : statFields(`/proc/${process_.mainThread}/task/${process_.mainThread}/stat`);
    return fields && (ticks(fields) * 1000) / ticksPerSecond;
  }
  if ('tree' in process_) {
    if (process_.tree === undefined) return undefined;
    const root = statFields(`/proc/${process_.tree}/stat`);
    if (!root) return undefined;
    const parentOf = parents();
    let total = ticks(root, true);
    const within = (pid: number): boolean => {
      for (let parent = parentOf.get(pid); parent !== undefined && parent > 1; parent = parentOf.get(parent)) if (parent === process_.tree) return true;
      return false;
    };
    for (const pid of parentOf.keys()) {
      if (pid === process_.tree || !within(pid)) continue;
      const fields = statFields(`/proc/${pid}/stat`);
      if (fields) total += ticks(fields, true);
    }
    return (total * 1000) / ticksPerSecond;
  }
  if (process_.pid === undefined) return undefined;
  const fields = statFields(`/proc/${process_.pid}/stat`);
  return fields && (ticks(fields) * 1000) / ticksPerSecond;
}

/** CPU time used by each process between `start` and the call of the returned function. */
export function cpuMeter(processes: Measured[]): () => Record<string, number | null> {
  const before = processes.map(cpuMs);
  return () =>
    Object.fromEntries(
      processes.map((measured, index) => {
        const [a, b] = [before[index], cpuMs(measured)];
        return [measured.name, a === undefined || b === undefined ? null : b - a];
      }),
    );
}
