import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

/** The events the soak's writes raise, which its endpoint subscribes to. */
export const soakWebhookTypes = ['write.applied', 'review.created', 'review.decided'] as const;
export type SoakWebhookType = (typeof soakWebhookTypes)[number];

export interface WebhookTally {
  /** Events the soak's successful writes raised (each must arrive once). */
  expected: number;
  /** Of those, arrived with a valid signature. */
  delivered: number;
  missing: number;
  /** A second request with a webhook-id already received (a retry of a delivery that did arrive). */
  duplicates: number;
  /** Signed requests for no event a write of the soak raised, or of a type it did not expect. */
  unexpected: number;
  /** Requests whose signature did not verify. */
  badSignatures: number;
  byType: Record<SoakWebhookType, { expected: number; delivered: number }>;
  /**
   * From the request that raised it to its arrival (ms), for the measured window's writes: the call's own time,
   * then the outbox, the relay and the delivery (a request, not its answer, since a review's decision is sent
   * before the approval's answer, which waits for the write).
   */
  lagMs: number[];
  samples: string[];
}

/** A loopback HTTP receiver for the soak's webhook endpoint, matching what arrives to what the writes raised. */
export interface WebhookReceiver {
  url: string;
  /** Set once the endpoint is registered: requests are verified with it. */
  useSecret(secret: string): void;
  /** The events the request sent at `requestedAt` (performance.now()) raised for the write of workflow `workflowId`, once answered. */
  expect(workflowId: string, types: SoakWebhookType[], requestedAt: number, measured: boolean): void;
  /** Events expected and not yet arrived. */
  pending(): number;
  /** Resolves once nothing is pending, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
  tally(): WebhookTally;
  close(): Promise<void>;
}

interface Expectation {
  requestedAt: number;
  measured: boolean;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let verifier: Webhook | undefined;
  const seenIds = new Set<string>();
  // Keyed `${workflowId} ${type}`: what a write raised and is still awaited; what arrived before its write was
  // answered (its time of arrival), matched when the write's answer comes.
  const awaited = new Map<string, Expectation>();
  const early = new Map<string, number>();
  const byType = Object.fromEntries(soakWebhookTypes.map((type) => [type, { expected: 0, delivered: 0 }])) as WebhookTally['byType'];
  const tally = { duplicates: 0, unexpectedCandidates: 0, badSignatures: 0, lagMs: [] as number[], samples: [] as string[] };
  const sample = (line: string) => {
    if (tally.samples.length < 5) tally.samples.push(line.slice(0, 300));
  };

  const arrived = (type: SoakWebhookType, at: number, expectation: Expectation) => {
    byType[type].delivered++;
    if (expectation.measured) tally.lagMs.push(at - expectation.requestedAt);
  };

  const receive = (headers: Record<string, string>, body: string) => {
    const at = performance.now();
    let event: { type?: string; data?: { workflow_id?: unknown } };
    try {
      if (!verifier) throw new Error('no secret yet');
      event = verifier.verify(body, headers) as typeof event;
    } catch (error) {
      tally.badSignatures++;
      sample(`bad signature (${(error as Error).message}): ${body}`);
      return;
    }
    const id = headers['webhook-id'] ?? '';
    if (seenIds.has(id)) {
      tally.duplicates++;
      return;
    }
    seenIds.add(id);
    const key = `${String(event.data?.workflow_id)} ${String(event.type)}`;
    const expectation = awaited.get(key);
    if (expectation) {
      awaited.delete(key);
      arrived(event.type as SoakWebhookType, at, expectation);
    } else if (early.has(key)) {
      tally.unexpectedCandidates++;
      sample(`a second ${key}`);
    } else {
      early.set(key, at);
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receive(request.headers as Record<string, string>, Buffer.concat(chunks).toString('utf8'));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/soak-hook`,
    useSecret(secret) {
      verifier = new Webhook(secret);
    },
    expect(workflowId, types, requestedAt, measured) {
      for (const type of types) {
        byType[type].expected++;
        const key = `${workflowId} ${type}`;
        const earlyAt = early.get(key);
        if (earlyAt === undefined) awaited.set(key, { requestedAt, measured });
        else {
          early.delete(key);
          arrived(type, earlyAt, { requestedAt, measured });
        }
      }
    },
    pending: () => awaited.size,
    async drain(timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      while (awaited.size && performance.now() < deadline) await sleep(200);
    },
    tally() {
      const expected = soakWebhookTypes.reduce((sum, type) => sum + byType[type].expected, 0);
      const delivered = soakWebhookTypes.reduce((sum, type) => sum + byType[type].delivered, 0);
      for (const key of [...awaited.keys()].slice(0, 5 - tally.samples.length)) sample(`missing: ${key}`);
      for (const key of [...early.keys()].slice(0, 5 - tally.samples.length)) sample(`unexpected: ${key}`);
      return {
        expected,
        delivered,
        missing: awaited.size,
        duplicates: tally.duplicates,
        unexpected: early.size + tally.unexpectedCandidates,
        badSignatures: tally.badSignatures,
        byType,
        lagMs: tally.lagMs,
        samples: tally.samples,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
