import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { gatehouseBin } from '../support/cli';

/** How one run of the process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the suite killed or stopped it; false for a process that died by itself. */
  expected: boolean;
  /** When (Date.now()). */
  at: number;
}

export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Runs the command through this, e.g. `ip netns exec <host>` to run it on another host. */
  prefix?: string[];
  /** SIGTERM's grace before SIGKILL. */
  stopGraceMs?: number;
}

/**
 * A process of the service that the suite starts, kills and starts again, as an operator's supervisor would. Every
 * run's output goes to one log file, so that a failure can be read afterwards; exits the suite did not cause are
 * counted. `ready` says when a run has started: it resolves with what the run said of itself.
 */
export class SupervisedProcess<Ready = unknown> {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private tail = '';
  private readonly log: WriteStream;
  readonly exits: Exit[] = [];
  /** Runs started, the first included. */
  starts = 0;

  constructor(
    readonly name: string,
    private readonly launch: Launch,
    logFile: string,
    private readonly ready: (run: { child: ChildProcess; signal: AbortSignal }) => Promise<Ready>,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  /** Exits the suite did not cause: a crash under the fault it injected. */
  get unexpectedExits(): Exit[] {
    return this.exits.filter((exit) => !exit.expected);
  }

  /** The last few thousand characters the process wrote, for a failure's message. */
  output(): string {
    return this.tail.trim();
  }

  /** Starts a run and resolves once it is ready (within `timeoutMs`), with what `ready` answered. */
  async start(timeoutMs = 120_000): Promise<Ready> {
    if (this.running) throw new Error(`${this.name} is running already`);
    this.starts += 1;
    this.stopping = false;
    const startedAt = Date.now();
    this.log.write(`\n--- ${new Date().toISOString()} start #${this.starts}\n`);
    const [command, ...args] = [...(this.launch.prefix ?? []), this.launch.command, ...this.launch.args];
    const child = spawn(command!, args, { env: this.launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null) => {
        this.exits.push({ code, signal, expected: this.stopping, at: Date.now() });
        this.log.write(`--- ${new Date().toISOString()} exited (${signal ?? `code ${code}`})${this.stopping ? '' : ' UNEXPECTEDLY'}\n`);
        resolve();
      };
      child.once('exit', ended);
      child.once('error', (error) => {
        this.log.write(`--- could not start: ${error.message}\n`);
        if (child.exitCode === null) ended(null, null);
      });
    });
    const keep = (chunk: Buffer) => {
      this.log.write(chunk);
      this.tail = (this.tail + chunk.toString()).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name} was not ready within ${timeoutMs / 1000} s:\n${this.output()}`)), timeoutMs);
    });
    const died = this.exited.then(() => {
      throw new Error(`${this.name} exited before it was ready:\n${this.output()}`);
    });
    // Aborted once the start is settled, whichever way: a readiness probe stops with it.
    const settled = new AbortController();
    try {
      const ready = await Promise.race([this.ready({ child, signal: settled.signal }), timeout, died]);
      this.log.write(`--- ${new Date().toISOString()} ready after ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
      return ready;
    } finally {
      settled.abort();
      clearTimeout(timer);
      died.catch(() => {});
    }
  }

  /** Kills the running process with `signal` (SIGKILL: no chance to clean up) and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.child!.kill(signal);
    await this.exited;
  }

  /** Stops the way an operator does (SIGTERM), SIGKILL after the grace (15 s); resolves with the exit. */
  async stop(): Promise<Exit | undefined> {
    if (!this.running) return undefined;
    this.stopping = true;
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), this.launch.stopGraceMs ?? 15_000);
    await this.exited;
    clearTimeout(timer);
    return this.exits.at(-1);
  }

  async close(): Promise<void> {
    await this.stop();
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}

/**
 * One `gatehouse api --json` or `gatehouse worker --json`, as an operator runs it: ready once it prints its
 * readiness document (the first JSON on stdout).
 */
export class GatehouseProcess extends SupervisedProcess<any> {
  constructor(name: string, command: 'api' | 'worker', env: NodeJS.ProcessEnv, logFile: string, prefix?: string[]) {
    super(name, { command: process.execPath, args: [gatehouseBin, command, '--json'], env, prefix }, logFile, ({ child }) => firstJson(child));
  }
}

function firstJson(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => {
    let stdout = '';
    const read = (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        resolve(JSON.parse(stdout));
        child.stdout!.off('data', read);
      } catch {
        // not complete yet
      }
    };
    child.stdout!.on('data', read);
  });
}

/** Resolves once `probe` holds, trying every `everyMs`, until `signal` gives up on it (the start settled otherwise). */
export async function until(probe: () => Promise<boolean>, signal: AbortSignal, everyMs = 200): Promise<void> {
  while (!signal.aborted) {
    if (await probe().catch(() => false)) return;
    await sleep(everyMs);
  }
}
