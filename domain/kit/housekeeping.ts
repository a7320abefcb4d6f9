// Housekeeping started from a request's path (deleting rows nothing reads any more): at most once per interval per
// process, one run at a time, never waited for by the request; a run that failed lets the next request try again.

export interface Housekeeping {
  /** Starts a run unless one ran within the interval or is under way. */
  poke(): void;
  /** Waits for a run under way (at shutdown). */
  settled(): Promise<void>;
}

export function housekeeping(everyMs: number, run: () => Promise<unknown>): Housekeeping {
  let lastRun = 0;
  let running: Promise<void> | undefined;
  return {
    poke() {
      if (running || Date.now() - lastRun < everyMs) return;
      lastRun = Date.now();
      running = run()
        .then(
          () => undefined,
          () => {
            lastRun = 0;
          },
        )
        .finally(() => {
          running = undefined;
        });
    },
    async settled() {
      await running;
    },
  };
}
