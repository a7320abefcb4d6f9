import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux on x86 and arm). */
const ticksPerSecond = 100;

/** A process whose CPU time the benchmark reads: a child by its pid, or the bench process itself. */
export type Measured = { name: string; pid: number | undefined } | { name: string; self: true };

/**
 * CPU milliseconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat; undefined
 * where there is no /proc (not Linux) or the process is gone.
 */
export function cpuMs(process_: Measured): number | undefined {
  if ('self' in process_) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  if (process_.pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${process_.pid}/stat`, 'utf8');
    // The second field (the command) is in parentheses and may hold spaces: count from the closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), utime and stime: the 12th and 13th after the command.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
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
