import { connect } from 'node:net';
import type { HttpAnswer } from './answers';

// HTTP/1.1 over a bare socket, for what inject cannot send: requests Node's own parser must read (bad
// percent-encoding, header blocks past its limit, unknown methods, malformed framing) and bodies past the limit
// sent as a real client sends them, still uploading while the server answers.

export interface RawRequest {
  /** The request line and headers exactly as sent, without the blank line that ends them. */
  head: string;
  /** The body, or a function that makes it (a body of megabytes is made only for the cases a run sends). */
  body?: Buffer | string | (() => Buffer);
  /** Send the body in pieces of this many bytes, as a slow client would (default: in one write). */
  chunkSize?: number;
}

export type RawOutcome = { kind: 'answer'; answer: HttpAnswer } | { kind: 'reset'; error: string; received: number };

/** Sends one request on its own connection and reads the answer until the server closes it. */
export function rawRequest(baseUrl: string, request: RawRequest, timeoutMs = 15_000): Promise<RawOutcome> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    let settled = false;
    const finish = (outcome: () => RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome());
    };
    const timer = setTimeout(() => finish(() => answerOrReset(received, 'no answer in time')), timeoutMs);
    socket.on('data', (chunk) => {
      received.push(chunk);
      // A complete answer is enough: a server that keeps the connection open must not hold up the suite.
      if (completeAnswer(Buffer.concat(received))) finish(() => answerOrReset(received, 'never'));
    });
    socket.on('end', () => finish(() => answerOrReset(received, 'closed before answering')));
    socket.on('error', (error) => finish(() => answerOrReset(received, error.message)));
    socket.on('connect', () => {
      void send(socket, request).catch(() => {
        // The server may answer and close while the body is still going out; what it said is read above.
      });
    });
  });
}

async function send(socket: ReturnType<typeof connect>, request: RawRequest): Promise<void> {
  const write = (data: Buffer | string) =>
    new Promise<void>((resolve, reject) => {
      if (socket.destroyed) return reject(new Error('closed'));
      socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
  await write(`${request.head}\r\n\r\n`);
  if (request.body === undefined) return;
  const body = typeof request.body === 'function' ? request.body() : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body);
  const size = request.chunkSize ?? body.length;
  for (let offset = 0; offset < body.length; offset += size) await write(body.subarray(offset, offset + size));
}

function answerOrReset(received: Buffer[], error: string): RawOutcome {
  const data = Buffer.concat(received);
  const answer = completeAnswer(data) ?? partialAnswer(data);
  return answer ? { kind: 'answer', answer } : { kind: 'reset', error, received: data.length };
}

/** The answer, once its head and the whole body it announces have arrived. */
function completeAnswer(data: Buffer): HttpAnswer | undefined {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const { status, headers } = parseHead(data.subarray(0, split).toString('latin1'));
  const rest = data.subarray(split + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const body = dechunk(rest);
    return body === undefined ? undefined : { status, headers, body: body.toString('utf8') };
  }
  const length = headers['content-length'];
  if (length === undefined || rest.length < Number(length)) return undefined;
  return { status, headers, body: rest.subarray(0, Number(length)).toString('utf8') };
}

/** What arrived before the server closed: a head with whatever body came (a close-delimited answer). */
function partialAnswer(data: Buffer): HttpAnswer | undefined {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const { status, headers } = parseHead(data.subarray(0, split).toString('latin1'));
  return { status, headers, body: data.subarray(split + 4).toString('utf8') };
}

function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers };
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/** A request head: the request line, Host, Connection: close, then the headers given. */
export function requestHead(method: string, target: string, baseUrl: string, headers: Record<string, string> = {}): string {
  const lines = [`${method} ${target} HTTP/1.1`, `host: ${new URL(baseUrl).host}`, 'connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return lines.join('\r\n');
}
