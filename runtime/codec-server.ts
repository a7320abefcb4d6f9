import fastifyCors from '@fastify/cors';
import type { Payload, PayloadCodec } from '@temporalio/common';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { errorBody } from '../api/rest/http';
import { AppError } from '../domain/kit/errors';

/**
 * Temporal's remote codec protocol, so that the Web UI (and `temporal workflow show --codec-endpoint`) shows the
 * encrypted payloads as they were: POST /decode and /encode take and answer `{"payloads": [...]}`, each payload
 * in protobuf's JSON form (metadata values and data in base64). Browsers reach it from the Web UI's origin only
 * (CORS); it has no login, as the Web UI has none, so it listens on loopback unless told otherwise and belongs
 * where the Web UI is: with the operators.
 */
export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'is not base64');
// Protobuf's JSON leaves out an empty list: `{}` is no payloads (the Temporal CLI sends it).
const payloadsBody = z.object({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), base64).optional(), data: base64.optional() }))
    .max(10_000)
    .default([]),
});

const fromJson = (payload: z.infer<typeof payloadsBody>['payloads'][number]): Payload => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
  data: Buffer.from(payload.data ?? '', 'base64'),
});

const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value ?? new Uint8Array()).toString('base64')])),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});

export async function serveCodec(options: {
  codec: PayloadCodec;
  host: string;
  port: number;
  /** Browser origins allowed to call it: the Web UI's. */
  allowedOrigins: string[];
}): Promise<CodecServer> {
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
  app.removeContentTypeParser('text/plain');
  await app.register(fastifyCors, {
    origin: options.allowedOrigins,
    methods: ['POST'],
    allowedHeaders: ['content-type', 'x-namespace', 'authorization'],
    credentials: true,
    maxAge: 600,
  });
  app.setErrorHandler((error, _request, reply) => {
    const statusCode = (error as { statusCode?: number }).statusCode;
    const refusal =
      error instanceof AppError
        ? error
        : statusCode === 413
          ? new AppError('payload_too_large', 'The request body is larger than the codec accepts (16 MB)')
          : statusCode === 415
            ? new AppError('unsupported_media_type', 'Send {"payloads": [...]} as JSON with Content-Type: application/json')
            : statusCode && statusCode < 500
              ? new AppError('invalid_json', 'The request body is not valid JSON')
              : new AppError('internal_error', 'The codec failed');
    return reply.status(refusal.status).send(errorBody(refusal));
  });
  const route = (direction: 'encode' | 'decode') => async (request: { body: unknown }) => {
    const parsed = payloadsBody.safeParse(request.body);
    if (!parsed.success) {
      throw new AppError('validation_failed', `Send {"payloads": [{"metadata": {...}, "data": "<base64>"}]}: ${parsed.error.issues[0]!.path.join('.')} ${parsed.error.issues[0]!.message}`);
    }
    let payloads: Payload[];
    try {
      payloads = await options.codec[direction](parsed.data.payloads.map(fromJson));
    } catch (error) {
      throw new AppError('validation_failed', `The payloads could not be ${direction}d: ${(error as Error).message}`);
    }
    return { payloads: payloads.map(toJson) };
  };
  app.post('/decode', route('decode'));
  app.post('/encode', route('encode'));
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address() as AddressInfo;
  // The URL handed to browsers (the Web UI): a wildcard or loopback address reads as localhost.
  const wildcardOrLoopback = ['0.0.0.0', '127.0.0.1', '::', '::1'].includes(address.address);
  const host = wildcardOrLoopback ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, close: () => app.close() };
}
