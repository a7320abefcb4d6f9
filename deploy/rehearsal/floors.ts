import { startFloor, type Floor, type FloorShape } from '../../bench/floor/index';
import { gatedWrite, runRounds, type Operation } from '../../bench/measure';
import { round, summarize } from '../../bench/stats';
import { combine, runWindow, type Window } from '../../bench/throughput';
import { connectDatabase } from '../../db/database';
import { EncryptionCodec, parsePayloadKeys } from '../../runtime/payload-codec';
import { createChaosOrganization } from '../../test/chaos/fixture';
import { applicationNames } from '../../test/chaos/stack';
import type { Deployment } from './deployment';

export interface FloorSettings {
  samples: number;
  warmup: number;
  writers: number;
  secondsPerWindow: number;
  repeats: number;
}

type Kind = 'allow' | FloorShape;
const kinds: Kind[] = ['allow', 'floor', 'floorLocal', 'fairFloor', 'fairFloorLocal'];

export interface ClusterFloorResults {
  settings: FloorSettings;
  /** One at a time, rounds rotating through the kinds: the gated Allow through the proxy, and the floors. */
  latency: Record<Kind, { n: number; p50: number; p99: number }>;
  /** The writers back to back, windows interleaved: the gated Allow and the fair floor with an empty local activity. */
  throughput: Record<'allow' | 'fairFloorLocal', { writesPerSecond: number; byWindow: number[]; p50: number | null; p99: number | null; errors: number }>;
  ratios: {
    allowOverFairFloorLocalP50: number;
    allowOverFairFloorP50: number;
    allowOverFloorP50: number;
    fairFloorOverFloorP50: number;
    allowOverFairFloorLocalWritesPerSecond: number;
  };
  /** The gated Allow's p50 (through the proxy) minus the fair floor with a local activity's. */
  gateOwnCostMsP50: number;
  /** What the fair floors carried, read back from a gated Allow of the deployment (its payloads encrypted, as theirs). */
  carried: { inputBytes: number; answerBytes: number };
}

/**
 * Temporal's floors on the deployment's own Temporal cluster (PostgreSQL-backed, four services): the rehearsal's
 * process runs a floor worker with the gated-write worker's settings and the deployment's payload key, so the fair
 * floors carry what a gated Allow carries, encrypted as it is. Beside them, the gated Allow through the proxy.
 */
export async function measureFloorsOnCluster(deployment: Deployment, settings: FloorSettings, log: (line: string) => void, signal: AbortSignal): Promise<ClusterFloorResults> {
  const db = connectDatabase(deployment.databaseUrl(applicationNames.driver), { maxConnections: 2 });
  const org = await createChaosOrganization(db, 1).finally(() => db.close());
  const keys = parsePayloadKeys(deployment.variables.PAYLOAD_ENCRYPTION_KEYS!);
  let floor: Floor | undefined;
  try {
    floor = await startFloor(deployment.temporal.clientAddress, 'rehearsal-floor', {
      grpcCompression: 'auto',
      dataConverter: { payloadCodecs: [new EncryptionCodec(keys)] },
    });
    const sampleIds: string[] = [];
    await gatedWrite(deployment.proxyUrl, org.agentTokens[0]!, 'allow', { workflowIds: sampleIds })(-1);
    const sample = await floor.useGatedAllow(sampleIds[0]!);
    const allow = gatedWrite(deployment.proxyUrl, org.agentTokens[0]!, 'allow');
    const operations = Object.fromEntries(
      kinds.map((kind) => [kind, kind === 'allow' ? allow : floor!.operation(kind, kind)]),
    ) as Record<Kind, Operation>;
    log(`floors on the deployment's Temporal: ${settings.warmup} + ${settings.samples} rounds of ${kinds.join(', ')}…`);
    const rounds = await runRounds(operations, { rotate: true, samples: settings.samples, warmup: settings.warmup, aborted: () => signal.aborted });
    const windows: Window<string>[] = [];
    let sequence = 1_000_000;
    for (let repeat = 0; repeat < settings.repeats && !signal.aborted; repeat++) {
      for (const kind of repeat % 2 === 0 ? (['allow', 'fairFloorLocal'] as const) : (['fairFloorLocal', 'allow'] as const)) {
        const window = await runWindow(kind, operations[kind], { writers: settings.writers, seconds: settings.secondsPerWindow, firstSequence: (sequence += 100_000), processes: [] });
        windows.push(window);
        log(`floors: ${kind} × ${settings.writers}: ${(window.writes / window.seconds).toFixed(1)} writes/s, ${window.errors} errors`);
      }
    }
    const summaries = Object.fromEntries(kinds.map((kind) => [kind, summarize(rounds.samples[kind])])) as Record<Kind, ReturnType<typeof summarize>>;
    const throughput = Object.fromEntries(
      (['allow', 'fairFloorLocal'] as const).map((kind) => {
        const combined = combine(windows.filter((window) => window.kind === kind));
        return [kind, { writesPerSecond: combined.writesPerSecond, byWindow: combined.writesPerSecondByWindow, p50: combined.latency?.p50 ?? null, p99: combined.latency?.p99 ?? null, errors: combined.errors }];
      }),
    ) as ClusterFloorResults['throughput'];
    const p50 = (kind: Kind) => summaries[kind].p50;
    return {
      settings,
      latency: Object.fromEntries(kinds.map((kind) => [kind, { n: summaries[kind].n, p50: round(summaries[kind].p50, 2), p99: round(summaries[kind].p99, 2) }])) as ClusterFloorResults['latency'],
      throughput,
      ratios: {
        allowOverFairFloorLocalP50: round(p50('allow') / p50('fairFloorLocal'), 2),
        allowOverFairFloorP50: round(p50('allow') / p50('fairFloor'), 2),
        allowOverFloorP50: round(p50('allow') / p50('floor'), 2),
        fairFloorOverFloorP50: round(p50('fairFloor') / p50('floor'), 2),
        allowOverFairFloorLocalWritesPerSecond: round(throughput.allow.writesPerSecond / throughput.fairFloorLocal.writesPerSecond, 2),
      },
      gateOwnCostMsP50: round(p50('allow') - p50('fairFloorLocal'), 2),
      carried: { inputBytes: sample.inputBytes, answerBytes: sample.answerBytes },
    };
  } finally {
    await floor?.close().catch(() => {});
  }
}
