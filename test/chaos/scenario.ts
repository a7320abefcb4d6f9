import type { Stack, StackOptions } from './stack';

/** One figure of a scenario's result, printed in order: `lost 0`, `applied 312`, `time 41.2 s`. */
export type Figures = [name: string, value: number | string][];

/** What every scenario must end with, in numbers: no write lost, none applied twice, no process exiting by itself. */
export interface Tally {
  /** Writes (and held writes approved) with no row. */
  lost: number;
  /** Writes with more than one row. */
  doubled: number;
  /** Processes of the service that exited without the suite stopping them. */
  exits: number;
}

export interface ScenarioResult {
  /** What the scenario did, in a line: the load, the faults and how many. */
  did: string;
  figures: Figures;
  /** Absent for a scenario that writes nothing (the fuzz run) or was skipped. */
  tally?: Tally;
  /** Each assertion the run broke, in words; none means the scenario passed. */
  failures: string[];
  /** For a scenario that could not run here (a hook not yet wired, say): why. */
  skipped?: string;
}

export interface ScenarioContext {
  /** `--short` (CHAOS_SHORT=1): fewer rounds, for CI. */
  short: boolean;
  /** Writes held for review before the faults of a round-based scenario, approved and counted after them (0: none). */
  heldThroughFaults: number;
  /** Aborted when the scenario runs past its time budget (or the suite is interrupted). */
  signal: AbortSignal;
  log(line: string): void;
  /** Where to keep a file of output under the run's log folder. */
  logFile(name: string): string;
  /** The service to fault: a PostgreSQL database, Temporal, an api and workers, and an organization; torn down after. */
  stack(options?: StackOptions): Promise<Stack>;
  /** Runs `cleanup` when the scenario ends, however it ends: last registered, first run (stacks included). */
  onCleanup(cleanup: () => Promise<void>): void;
}

export interface Scenario {
  id: string;
  title: string;
  /** The scenario's bound in time; past it the suite stops it and counts it failed. */
  budgetMs: { full: number; short: number };
  /** Left out of `--short` runs (unless `--only` names it): it has a short version of its own elsewhere. */
  fullOnly?: boolean;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}

/** Collects the broken assertions of a run in the words the report shows. */
export class Checks {
  readonly failures: string[] = [];

  equal(what: string, actual: number | string, wanted: number | string): void {
    if (actual !== wanted) this.failures.push(`${what}: ${actual}, wanted ${wanted}`);
  }

  atLeast(what: string, actual: number, least: number): void {
    if (actual < least) this.failures.push(`${what}: ${actual}, wanted at least ${least}`);
  }

  that(what: string, holds: boolean): void {
    if (!holds) this.failures.push(what);
  }
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);
