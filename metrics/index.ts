/**
 * Gatehouse's Prometheus metrics, in prom-client's registry of the process: the api counts what it answers;
 * reviews are read from the database when scraped. Each process serves them on a port of its own
 * (runtime/metrics-server.ts), not on the public api port; the worker's come from the Temporal SDK.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, register, type Registry } from 'prom-client';

export const metricsRegistry: Registry = register;

/** How often the event loop's delay is sampled (ms); each sample reads this much over the delay itself. */
export const eventLoopResolutionMs = 10;

/**
 * Node's own metrics (prom-client's defaults, `process_` and `nodejs_`): resident memory, CPU, heap, garbage
 * collection, and the event loop's delay as perf_hooks' monitorEventLoopDelay sees it every
 * `eventLoopResolutionMs` (`nodejs_eventloop_lag_p50_seconds`, `…_p99_seconds`, `…_max_seconds`; each sample is
 * the time between two ticks, so an idle loop reads the resolution; reset at each scrape, so a figure is of the
 * time since the last). Once per process: the soak reads them, and an operator's dashboard may.
 */
export function collectNodeMetrics(): void {
  if (metricsRegistry.getSingleMetric('nodejs_eventloop_lag_p99_seconds')) return;
  collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: eventLoopResolutionMs });
}

/** Gated writes as the api answered them: by operation, interface and answer (applied, pending_review, denied, failed). */
export const gatedWritesTotal = new Counter({
  name: 'gatehouse_gated_writes_total',
  help: 'Gated writes the api answered, by operation, interface (rest, mcp) and answer (applied, pending_review, denied, failed)',
  labelNames: ['operation', 'interface', 'answer'] as const,
});

/** From the request's arrival to the gated write's answer: the decision (and, for an Allow, the write) included. */
export const gatedWriteSeconds = new Histogram({
  name: 'gatehouse_gated_write_answer_seconds',
  help: "Seconds from a gated write's request to its answer (the decision, and for an Allow the write), by answer",
  labelNames: ['answer'] as const,
  buckets: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

/** Every call the pipeline ran, REST, MCP or console, by interface and status class. */
export const calls = new Counter({
  name: 'gatehouse_calls_total',
  help: 'Calls the api answered, by interface (rest, mcp, console) and outcome (ok, or the error code)',
  labelNames: ['interface', 'outcome'] as const,
});

/** Requests refused by the plan's limits. */
export const limitRefusals = new Counter({
  name: 'gatehouse_limit_refusals_total',
  help: 'Requests refused by the request limits, by interface and limit (per_minute, daily, key_daily, key_operation_daily)',
  labelNames: ['interface', 'limit'] as const,
});

const reviewStatuses = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;

/**
 * Reviews by status across organizations, read from the database when scraped (`count` is handed in by the
 * process that serves them, with its database): exact whichever api or worker moved them. A pending review past
 * its deadline counts as expired, as the API shows it.
 */
export function reviewsGauge(count: () => Promise<Partial<Record<(typeof reviewStatuses)[number], number>>>): Gauge<'status'> {
  const name = 'gatehouse_reviews';
  if (metricsRegistry.getSingleMetric(name)) metricsRegistry.removeSingleMetric(name);
  return new Gauge({
    name,
    help: 'Reviews by status (pending, approved, denied, expired, withdrawn), all organizations, read from the database when scraped',
    labelNames: ['status'] as const,
    async collect() {
      const counts = await count();
      for (const status of reviewStatuses) this.set({ status }, counts[status] ?? 0);
    },
  });
}
