import {
  ClientRequestSchema,
  ErrorCode,
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import type { Database } from '../../db/database';
import { AppError } from '../../domain/kit/errors';
import type { CallPipeline } from '../catalog/call';
import { allAbilities } from '../../domain/identity/abilities';
import { scopesToAskFor, scopeShortfall } from '../catalog/access';
import { bearerChallenge, httpError, keepReadingTheBody, rateLimitHeaders } from '../rest/http';
import { operationOfTool } from '../catalog/index';
import { noteMcpClient } from '../../domain/usage/mcp-clients';
import { buildMcpServer } from './server';
import { ExchangeTransport } from './transport';

export interface McpOptions {
  pipeline: CallPipeline;
  db: Database;
  apiBaseUrl: string;
  /** Where people reach the console (links to held writes). */
  publicUrl: string;
  /** Browser origins allowed to call /mcp besides the service's own; requests without Origin (non-browser clients) pass. */
  allowedOrigins: string[];
  /** Where the MCP server's OAuth metadata is (RFC 9728): named in every Bearer challenge. */
  resourceMetadataUrl: string;
}

/**
 * The JSON-RPC code of an authorization denial. SEP-2643 (structured authorization denials) leaves its value to be
 * assigned; until it is, this one, in the server range, with the SEP's `data.authorization` envelope.
 */
export const authorizationDenialCode = -32043;

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * A refusal before the MCP exchange starts, as a JSON-RPC error with the fitting HTTP status. A 401 carries the
 * Bearer challenge that sends an MCP client to the server's OAuth metadata (`challenge`).
 */
function refuse(reply: FastifyReply, error: AppError, challenge?: string) {
  if (error.status === 401 && challenge) reply.header('www-authenticate', challenge);
  return reply.status(error.status).send({
    jsonrpc: '2.0',
    error: { code: jsonRpcCodeOf(error), message: `${error.code}: ${error.message}`, data: { code: error.code, ...error.details } },
    id: null,
  });
}

/** JSON-RPC's own codes where it has one (a body that is not JSON is its parse error); else ours, in the server range. */
function jsonRpcCodeOf(error: AppError): number {
  if (error.code === 'invalid_json') return ErrorCode.ParseError;
  return error.status === 401 ? -32001 : -32000;
}

/**
 * MCP over Streamable HTTP, stateless: every POST carries its own bearer key, is admitted by the call pipeline,
 * gets a server built for that key's organization and abilities, and is answered with plain JSON. Any api
 * process can answer any request.
 */
export async function mcpRoute(app: FastifyInstance, options: McpOptions): Promise<void> {
  const { pipeline } = options;
  const ownOrigin = new URL(options.apiBaseUrl).origin;
  const allowed = new Set([ownOrigin, ...options.allowedOrigins]);
  // Exchanges still open (a tasks/result waiting on a review, say) are closed when the app closes: the task
  // lives in the database, and the client asks again, of this process or another.
  const open = new Set<{ close(): Promise<void> }>();
  app.addHook('preClose', async () => {
    await Promise.all([...open].map((exchange) => exchange.close().catch(() => {})));
  });

  const { resourceMetadataUrl } = options;
  app.setErrorHandler((error, request, reply) => {
    const appError = httpError(error);
    keepReadingTheBody(request, reply);
    if (appError.status >= 500) request.log.error({ err: error }, 'mcp request failed');
    const challenge = bearerChallenge({ resourceMetadataUrl, scopes: allAbilities, error: request.headers.authorization ? 'invalid_token' : undefined });
    return refuse(reply, appError, challenge);
  });

  app.post('/mcp', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      return refuse(reply, new AppError('insufficient_ability', `Origin ${origin} may not call this MCP server`));
    }
    // Every authenticated POST counts against the MCP ceiling and the daily budget, refused ones too.
    const admission = await pipeline.admit({ via: 'mcp', authorization: request.headers.authorization });
    reply.headers(rateLimitHeaders(admission.verdict));
    // One message per request: MCP dropped JSON-RPC batches (2025-06-18), and a batch would pass many calls
    // through the limits as one.
    if (Array.isArray(request.body) && request.body.length !== 1) {
      return reply.status(400).send({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Send one JSON-RPC message per request: batches are not supported' },
        id: null,
      });
    }
    if (!admission.admitted) {
      // A tool call refused at the door is a call all the same: the call log keeps it.
      const toolCall = toolCallIn(request.body);
      if (toolCall) await pipeline.call(admission, { operation: operationOfTool(toolCall.name), tool: toolCall.name, input: toolCall.input });
      return refuse(reply, admission.refusal);
    }

    // A connected client's tool call outside its grant: HTTP 403 with the scope challenge (the client may ask the
    // person for more), and the denial in the structured shape of SEP-2643.
    const toolCall = toolCallIn(request.body);
    const operation = toolCall && operationOfTool(toolCall.name);
    if (toolCall && operation && admission.caller.actor.kind === 'api_key' && admission.caller.actor.oauthClientId && scopeShortfall(operation, admission.caller)) {
      const outcome = await pipeline.call(admission, { operation, tool: toolCall.name, input: toolCall.input });
      const refusal = outcome.kind === 'refused' || outcome.kind === 'failed' ? outcome.error : new AppError('insufficient_scope', 'Not granted');
      reply.header('www-authenticate', bearerChallenge({ resourceMetadataUrl, scopes: scopesToAskFor(refusal), error: 'insufficient_scope', description: refusal.message }));
      return reply.status(403).send({
        jsonrpc: '2.0',
        id: ((Array.isArray(request.body) ? request.body[0] : request.body) as { id?: string | number }).id ?? null,
        error: {
          code: authorizationDenialCode,
          message: refusal.message,
          data: {
            code: refusal.code,
            ...refusal.details,
            authorization: { reason: 'insufficient_authorization', credentialDisposition: 'replacement' },
          },
        },
      });
    }

    const message = (Array.isArray(request.body) ? request.body[0] : request.body) as JSONRPCMessage;
    if (!isJsonRpcMessage(message)) {
      return reply.status(400).send({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: 'Not a JSON-RPC 2.0 message: send {"jsonrpc": "2.0", "id", "method", "params"}' }, id: null });
    }
    const malformed = invalidParams(message);
    if (malformed) return reply.status(200).send({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidParams, message: malformed.message }, id: malformed.id });
    const unfit = unfitHeaders(request.headers, isInitializeRequest(message));
    if (unfit) return reply.status(unfit.status).send({ jsonrpc: '2.0', error: { code: -32000, message: unfit.message }, id: null });
    // Stateless: a tool call does not say which client sends it, so the client each key initializes with is noted.
    const { actor } = admission.caller;
    if (isInitializeRequest(message) && actor.kind === 'api_key') {
      const { name, version } = message.params.clientInfo;
      await noteMcpClient(options.db, admission.caller.organization.id, actor.keyId, { name, version });
    }

    const server = buildMcpServer({
      method: (message as { method?: string }).method,
      pipeline,
      admission,
      db: options.db,
      apiBaseUrl: options.apiBaseUrl,
      publicUrl: options.publicUrl,
      version,
      log: (error, message) => request.log.error({ err: error }, message),
    });
    const transport = new ExchangeTransport();
    // Closing stops a request still at work (a tasks/result waiting on a review). An exchange that answered has
    // nothing left to stop: it is dropped, and the server with it (closing would abort and reject what is done).
    let settled = false;
    const exchange = {
      async close() {
        open.delete(exchange);
        if (settled) return;
        settled = true;
        await transport.close();
        await server.close();
      },
    };
    open.add(exchange);
    // A client that hangs up ends the exchange.
    reply.raw.once('close', () => void exchange.close());
    await server.connect(transport);
    const answer = await transport.exchange(message, { requestInfo: { headers: request.headers, url: new URL(request.url, options.apiBaseUrl) } });
    settled = true;
    open.delete(exchange);
    if (answer) return reply.status(200).type('application/json').send(answer);
    if (isJSONRPCRequest(message)) {
      // Closed before it answered: the api is stopping (or the client hung up, and nobody reads this).
      return reply.status(503).send({ jsonrpc: '2.0', error: { code: -32000, message: 'The server is shutting down; send the request again' }, id: message.id });
    }
    return reply.status(202).send();
  });

  const notInStatelessMode = (_request: unknown, reply: FastifyReply) =>
    reply
      .status(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'This MCP server is stateless: send requests with POST' }, id: null });
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: '/mcp', handler: notInStatelessMode });
}

/** Whether the body is a JSON-RPC 2.0 message at all; its params are judged apart (-32602 when they do not fit). */
function isJsonRpcMessage(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { params: _params, ...envelope } = body as Record<string, unknown>;
  return JSONRPCMessageSchema.safeParse(envelope).success;
}

/** The SDK's schema of each request a client may send, by method. */
const requestSchemas = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema]));

/**
 * A request whose params do not fit its method (`arguments` that are not an object, say): the SDK would answer
 * -32603 with zod's raw issue list; it is the client's mistake, so -32602 with a sentence it can act on.
 */
function invalidParams(body: unknown): { id: string | number | null; message: string } | undefined {
  const message = (Array.isArray(body) ? body[0] : body) as { method?: unknown; id?: unknown } | null;
  if (typeof message !== 'object' || message === null || typeof message.method !== 'string' || message.id === undefined) return undefined;
  const parsed = requestSchemas.get(message.method)?.safeParse(message);
  if (!parsed || parsed.success) return undefined;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(message)'}: ${issue.message}`);
  const id = typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null;
  return { id, message: `Invalid params for ${message.method}: ${problems.join('; ')}` };
}

/** The tools/call request of a POST body (one message, or a batch of one), if it is one. */
function toolCallIn(body: unknown): { name: string; input: unknown } | undefined {
  const message = (Array.isArray(body) ? body[0] : body) as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  return { name: message.params.name, input: message.params.arguments ?? {} };
}

/**
 * What Streamable HTTP asks of a POST's headers: the client accepts both JSON and an event stream (406 if not),
 * and after initialize names a protocol version this server speaks (400 if another).
 */
function unfitHeaders(headers: IncomingHttpHeaders, initializing: boolean): { status: number; message: string } | undefined {
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' };
  }
  const version = headers['mcp-protocol-version'];
  if (!initializing && version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
    return { status: 400, message: `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})` };
  }
  return undefined;
}
