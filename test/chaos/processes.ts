import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { gatehouseBin } from '../support/cli';

/** How one run of the process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the suite killed or stopped it; false for a process that died by itself. */
  expected: boolean;
}

/**
 * One `gatehouse api --json` or `gatehouse worker --json`, as an operator runs it, that the suite kills and
 * starts again. Every run's output goes to one log file, so a failure can be read afterwards.
 */
export class GatehouseProcess {
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
    private readonly command: 'api' | 'worker',
    private readonly env: NodeJS.ProcessEnv,
    logFile: string,
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

  /** Starts a run and resolves with its readiness document (the first JSON on stdout). */
  async start(timeoutMs = 120_000): Promise<any> {
    if (this.running) throw new Error(`${this.name} is running already`);
    this.starts += 1;
    this.stopping = false;
    const startedAt = Date.now();
    this.log.write(`\n--- ${new Date().toISOString()} start #${this.starts}\n`);
    const child = spawn(process.execPath, [gatehouseBin, this.command, '--json'], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exits.push({ code, signal, expected: this.stopping });
        this.log.write(`--- ${new Date().toISOString()} exited (${signal ?? `code ${code}`})${this.stopping ? '' : ' UNEXPECTEDLY'}\n`);
        resolve();
      });
    });
    const keep = (chunk: Buffer) => {
      this.log.write(chunk);
      this.tail = (this.tail + chunk.toString()).slice(-4000);
    };
    child.stderr!.on('data', keep);
    return new Promise((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(() => {
        reject(new Error(`${this.name} was not ready within ${timeoutMs / 1000} s:\n${this.output()}`));
      }, timeoutMs);
      child.stdout!.on('data', (chunk: Buffer) => {
        keep(chunk);
        stdout += chunk.toString();
        try {
          const ready: unknown = JSON.parse(stdout);
          clearTimeout(timer);
          this.log.write(`--- ${new Date().toISOString()} ready after ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
          resolve(ready);
        } catch {
          // not complete yet
        }
      });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited before it was ready:\n${this.output()}`));
      });
    });
  }

  /** Kills the running process with `signal` (SIGKILL: no chance to clean up) and waits until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.child!.kill(signal);
    await this.exited;
  }

  /** Stops the way an operator does (SIGTERM), SIGKILL after 15 s; resolves with the exit. */
  async stop(): Promise<Exit | undefined> {
    if (!this.running) return undefined;
    this.stopping = true;
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
    return this.exits.at(-1);
  }

  async close(): Promise<void> {
    await this.stop();
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}
