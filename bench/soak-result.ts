import os from 'node:os';
import { lateStartMs, type KindCounts } from './soak-load';
import { sampledProcesses, type SampledLoop, type SampledProcess, type SoakSample } from './soak-samples';
import type { WebhookTally } from './soak-webhooks';
import { formatTable, round, summarize, type Summary } from './stats';

/** Arrivals a second of each kind of the soak's load. */
export interface SoakRates {
  /** Gated Allow writes over REST (POST /api/v1/tasks, 201). */
  gatedWrites: number;
  /** REST reads: a customer search and a task list page by turns. */
  reads: number;
  /** MCP tool calls: list_tasks and create_task (Allow) by turns. */
  mcpCalls: number;
  /** Review-held writes submitted (202) and then approved by a reviewer (200, applied). */
  reviewsDecided: number;
}
export type SoakKind = keyof SoakRates;
export const soakKinds = ['gatedWrites', 'reads', 'mcpCalls', 'reviewsDecided'] as const satisfies readonly SoakKind[];

/** The single calls an arrival makes, timed each on its own. */
export const soakCalls = ['allow', 'search', 'taskPage', 'mcpList', 'mcpCreate', 'reviewSubmit', 'approve'] as const;
export type SoakCall = (typeof soakCalls)[number];

/** The issue's targets for the soak. */
export const soakTargets = { rssGrowthMax: 0.1, eventLoopDelayP99MaxMs: 50, errors: 0 } as const;

export interface SoakResult {
  date: string;
  machine: Record<string, unknown>;
  options: { minutes: number; warmupMinutes: number; rates: SoakRates; sampleSeconds: number };
  setup: Record<string, string>;
  /** Stopped before its time (interrupted): the figures are of the span that ran, `measuredMinutes`. */
  stoppedEarly: boolean;
  measuredMinutes: number;
  soak: {
    /**
     * RSS growth as a fraction: the mean of the samples in the last window of the measured span over the mean in
     * its first window, less one; a window is 5 minutes, or a third of the measured span when that is shorter.
     */
    rssGrowth: Record<SampledProcess, number | null>;
    rssWindowMinutes: number;
    rssMb: Record<SampledProcess, { firstWindowMean: number | null; lastWindowMean: number | null; max: number | null }>;
    /** Least-squares slope of RSS over the measured span, MiB an hour. */
    rssSlopeMbPerHour: Record<SampledProcess, number | null>;
    /**
     * The largest of the sampled p99s of the event loop's delay over the measured span (ms), and their median; the
     * soak process's own (`bench`, mostly idle) shows what the machine alone costs a loop.
     */
    eventLoopDelayP99Ms: Record<SampledLoop, number | null>;
    eventLoopDelayP99MedianMs: Record<SampledLoop, number | null>;
    /** The largest single delay seen in the measured span (ms). */
    eventLoopDelayMaxMs: Record<SampledLoop, number | null>;
    /** Failed arrivals (warm-up included) and webhook events missing, unexpected or badly signed. */
    errors: number;
    errorsBy: Record<SoakKind | 'webhooks', number>;
    errorSamples: Record<SoakKind | 'webhooks', string[]>;
    rates: { target: SoakRates; achieved: SoakRates };
    /** Of each kind's arrivals in the measured span, from the start to the last answer (a review: submit and approve). */
    latencyMs: Record<SoakKind, Summary | null>;
    latencyMsByCall: Record<SoakCall, Summary | null>;
    lateStarts: { thresholdMs: number; count: number; byKind: Record<SoakKind, number>; maxStartDelayMs: number };
    maxInFlight: number;
    webhooks: Omit<WebhookTally, 'lagMs' | 'samples'> & {
      lagMs: Summary | null;
      /** The service's own delivery log at the end (webhook_deliveries by status). */
      deliveryLog: Record<string, number>;
    };
    targets: typeof soakTargets & { met: { rssGrowth: boolean; eventLoopDelay: boolean; errors: boolean } };
  };
  samples: SoakSample[];
}

const mean = (values: number[]) => (values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : null);
const median = (values: number[]) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const roundedOrNull = (value: number | null, digits = 3) => (value === null ? null : round(value, digits));
const summaryOf = (values: number[]): Summary | null => {
  if (!values.length) return null;
  const summary = summarize(values);
  return Object.fromEntries(Object.entries(summary).map(([key, value]) => [key, round(value, 2)])) as unknown as Summary;
};

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number | null {
  if (points.length < 2) return null;
  const [mx, my] = [mean(points.map(([x]) => x))!, mean(points.map(([, y]) => y))!];
  const numerator = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const denominator = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return denominator ? numerator / denominator : null;
}

export interface SoakMeasurement {
  options: SoakResult['options'];
  /** The measured span that ran: minutes × 60, or less when the soak was stopped early. */
  measuredSeconds: number;
  stoppedEarly: boolean;
  setup: Record<string, string>;
  counts: Record<SoakKind, KindCounts>;
  callLatencyMs: Record<SoakCall, number[]>;
  maxInFlight: number;
  samples: SoakSample[];
  webhooks: WebhookTally;
  deliveryLog: Record<string, number>;
}

export function buildSoakResult(measured: SoakMeasurement): SoakResult {
  const { options, counts, samples } = measured;
  const { measuredSeconds } = measured;
  const inSpan = samples.filter((sample) => sample.measured);
  const windowSeconds = Math.min(300, measuredSeconds / 3);
  const spanStart = options.warmupMinutes * 60;
  const spanEnd = spanStart + measuredSeconds;
  const first = inSpan.filter((sample) => sample.atSeconds <= spanStart + windowSeconds);
  const last = inSpan.filter((sample) => sample.atSeconds >= spanEnd - windowSeconds);
  const rssOf = (list: SoakSample[], name: SampledProcess) => list.map((sample) => sample.rssMb[name]).filter((value): value is number => value !== null);
  const perProcess = <T>(of: (name: SampledProcess) => T) => Object.fromEntries(sampledProcesses.map((name) => [name, of(name)])) as Record<SampledProcess, T>;
  const perLoop = <T>(of: (name: SampledLoop) => T) => ({ api: of('api'), worker: of('worker'), bench: of('bench') });
  const rssMb = perProcess((name) => ({ firstWindowMean: mean(rssOf(first, name)), lastWindowMean: mean(rssOf(last, name)), max: Math.max(...rssOf(inSpan, name)) }));
  const rssGrowth = perProcess((name) => {
    const { firstWindowMean, lastWindowMean } = rssMb[name];
    return firstWindowMean && lastWindowMean !== null ? round(lastWindowMean / firstWindowMean - 1, 4) : null;
  });
  const p99s = (name: SampledLoop) => inSpan.map((sample) => sample.eventLoopDelayP99Ms[name]).filter((value): value is number => value !== null);
  const maxes = (name: SampledLoop) => inSpan.map((sample) => sample.eventLoopDelayMaxMs[name]).filter((value): value is number => value !== null);
  const eventLoopDelayP99Ms = perLoop((name) => (p99s(name).length ? round(Math.max(...p99s(name)), 2) : null));

  const webhookErrors = measured.webhooks.missing + measured.webhooks.unexpected + measured.webhooks.badSignatures;
  const errorsBy = { ...(Object.fromEntries(soakKinds.map((kind) => [kind, counts[kind].errors])) as Record<SoakKind, number>), webhooks: webhookErrors };
  const errors = Object.values(errorsBy).reduce((sum, n) => sum + n, 0);
  const lateByKind = Object.fromEntries(soakKinds.map((kind) => [kind, counts[kind].lateStarts])) as Record<SoakKind, number>;
  const { lagMs, samples: webhookSamples, ...webhookCounts } = measured.webhooks;
  const cpus = os.cpus();

  return {
    date: new Date().toISOString(),
    machine: {
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      cpuCount: cpus.length,
      totalMemoryGiB: round(os.totalmem() / 1024 ** 3, 1),
      nodeVersion: process.version,
      loadAverage: os.loadavg().map((load) => round(load, 2)),
    },
    options,
    setup: measured.setup,
    stoppedEarly: measured.stoppedEarly,
    measuredMinutes: round(measuredSeconds / 60, 2),
    soak: {
      rssGrowth,
      rssWindowMinutes: round(windowSeconds / 60, 2),
      rssMb: perProcess((name) => ({
        firstWindowMean: roundedOrNull(rssMb[name].firstWindowMean, 1),
        lastWindowMean: roundedOrNull(rssMb[name].lastWindowMean, 1),
        max: Number.isFinite(rssMb[name].max) ? round(rssMb[name].max!, 1) : null,
      })),
      rssSlopeMbPerHour: perProcess((name) => {
        const perSecond = slope(inSpan.filter((sample) => sample.rssMb[name] !== null).map((sample) => [sample.atSeconds, sample.rssMb[name]!]));
        return perSecond === null ? null : round(perSecond * 3600, 1);
      }),
      eventLoopDelayP99Ms,
      eventLoopDelayP99MedianMs: perLoop((name) => roundedOrNull(median(p99s(name)), 2)),
      eventLoopDelayMaxMs: perLoop((name) => (maxes(name).length ? round(Math.max(...maxes(name)), 2) : null)),
      errors,
      errorsBy,
      errorSamples: { ...(Object.fromEntries(soakKinds.map((kind) => [kind, counts[kind].errorSamples])) as Record<SoakKind, string[]>), webhooks: webhookSamples },
      rates: {
        target: options.rates,
        achieved: Object.fromEntries(soakKinds.map((kind) => [kind, measuredSeconds > 0 ? round(counts[kind].measuredSucceeded / measuredSeconds, 2) : 0])) as unknown as SoakRates,
      },
      latencyMs: Object.fromEntries(soakKinds.map((kind) => [kind, summaryOf(counts[kind].latencyMs)])) as Record<SoakKind, Summary | null>,
      latencyMsByCall: Object.fromEntries(soakCalls.map((call) => [call, summaryOf(measured.callLatencyMs[call])])) as Record<SoakCall, Summary | null>,
      lateStarts: {
        thresholdMs: lateStartMs,
        count: Object.values(lateByKind).reduce((sum, n) => sum + n, 0),
        byKind: lateByKind,
        maxStartDelayMs: round(Math.max(...soakKinds.map((kind) => counts[kind].maxStartDelayMs)), 1),
      },
      maxInFlight: measured.maxInFlight,
      webhooks: { ...webhookCounts, lagMs: summaryOf(lagMs), deliveryLog: measured.deliveryLog },
      targets: {
        ...soakTargets,
        met: {
          rssGrowth: rssGrowth.api !== null && rssGrowth.worker !== null && rssGrowth.api <= soakTargets.rssGrowthMax && rssGrowth.worker <= soakTargets.rssGrowthMax,
          eventLoopDelay:
            eventLoopDelayP99Ms.api !== null &&
            eventLoopDelayP99Ms.worker !== null &&
            eventLoopDelayP99Ms.api < soakTargets.eventLoopDelayP99MaxMs &&
            eventLoopDelayP99Ms.worker < soakTargets.eventLoopDelayP99MaxMs,
          errors: errors === soakTargets.errors,
        },
      },
    },
    samples,
  };
}

const figure = (value: number | null | undefined, digits = 1) => (value === null || value === undefined ? '–' : value.toFixed(digits));
const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)} %`);

/** The soak's figures as tables for the terminal. */
export function printableSoak(result: SoakResult): string {
  const { soak, options } = result;
  const rows = [
    ['kind', 'target /s', 'achieved /s', 'p50 ms', 'p99 ms', 'errors', 'late starts'],
    ...soakKinds.map((kind) => [
      kind,
      figure(soak.rates.target[kind], 1),
      figure(soak.rates.achieved[kind], 2),
      figure(soak.latencyMs[kind]?.p50),
      figure(soak.latencyMs[kind]?.p99),
      String(soak.errorsBy[kind]),
      String(soak.lateStarts.byKind[kind]),
    ]),
  ];
  const calls = [['call', 'n', 'p50 ms', 'p99 ms'], ...soakCalls.map((call) => [call, String(soak.latencyMsByCall[call]?.n ?? 0), figure(soak.latencyMsByCall[call]?.p50), figure(soak.latencyMsByCall[call]?.p99)])];
  const processes = [
    ['process', 'RSS first MiB', 'RSS last MiB', 'growth', 'MiB/hour', 'loop delay p99 max ms', 'median ms', 'max ms'],
    ...sampledProcesses.map((name) => [
      name,
      figure(soak.rssMb[name].firstWindowMean),
      figure(soak.rssMb[name].lastWindowMean),
      percent(soak.rssGrowth[name]),
      figure(soak.rssSlopeMbPerHour[name]),
      name === 'temporal' ? '' : figure(soak.eventLoopDelayP99Ms[name], 2),
      name === 'temporal' ? '' : figure(soak.eventLoopDelayP99MedianMs[name], 2),
      name === 'temporal' ? '' : figure(soak.eventLoopDelayMaxMs[name], 2),
    ]),
    ['bench (own loop)', '', '', '', '', figure(soak.eventLoopDelayP99Ms.bench, 2), figure(soak.eventLoopDelayP99MedianMs.bench, 2), figure(soak.eventLoopDelayMaxMs.bench, 2)],
  ];
  const { webhooks } = soak;
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `Soak: ${options.warmupMinutes} min warm-up + ${result.measuredMinutes} min measured${result.stoppedEarly ? ` (stopped early, of ${options.minutes})` : ''}, samples every ${options.sampleSeconds} s (${result.samples.length}); RSS windows of ${soak.rssWindowMinutes} min`,
    '',
    formatTable(rows),
    '',
    formatTable(calls),
    '',
    formatTable(processes),
    '',
    `Webhooks: ${webhooks.delivered} of ${webhooks.expected} delivered (${webhooks.missing} missing, ${webhooks.duplicates} duplicates, ${webhooks.unexpected} unexpected, ` +
      `${webhooks.badSignatures} bad signatures); lag from the request p50 ${figure(webhooks.lagMs?.p50, 0)} ms, p99 ${figure(webhooks.lagMs?.p99, 0)} ms; ` +
      `the service's log: ${Object.entries(webhooks.deliveryLog).map(([status, n]) => `${n} ${status}`).join(', ') || 'empty'}`,
    `Most in flight at once: ${soak.maxInFlight}; latest start ${soak.lateStarts.maxStartDelayMs} ms after its time`,
    `Targets: RSS growth ≤ ${soakTargets.rssGrowthMax * 100} % ${met(soak.targets.met.rssGrowth)}; event-loop delay p99 < ${soakTargets.eventLoopDelayP99MaxMs} ms ` +
      `${met(soak.targets.met.eventLoopDelay)}; ${soak.errors} errors ${met(soak.targets.met.errors)}`,
    ...Object.entries(soak.errorSamples).flatMap(([kind, samples]) => samples.map((sample) => `  ${kind}: ${sample}`)),
  ].join('\n');
}
