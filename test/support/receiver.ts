import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver on loopback for the service's outgoing requests (webhooks, Slack messages), as a developer would run one. */
export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered (status codes, in order); then 204. */
  answerWith(...statuses: number[]): void;
  /** Waits until `count` requests matching `which` have arrived (10 s at most), and answers them. */
  waitFor(count: number, which?: (request: Received) => boolean): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = answers.shift() ?? 204;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? `refused (${status})` : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answerWith: (...statuses) => answers.push(...statuses),
    async waitFor(count, which = () => true) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const matching = received.filter(which);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) throw new Error(`${matching.length} of ${count} requests arrived: ${received.map((r) => r.body).join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
