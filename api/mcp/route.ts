import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import type { Database } from '../../db/database';
import { activityRecorder, type ActivityEntry } from '../../domain/usage/call-log';
import { authenticate } from '../../domain/identity/authenticate';
import { AppError } from '../../domain/kit/errors';
import { rateLimitedError, type RequestLimits } from '../../domain/usage/limits';
import type { GateClient } from '../catalog/gate-client';
import { catalog } from '../catalog/index';
import { toAppError } from '../rest/errors';
import { rateLimitHeaders } from '../rest/rate-limit-headers';
import { outcomeOf, type ToolOutcome } from './results';
import { buildMcpServer } from './server';

export interface McpOptions {
  db: Database;
  gate: GateClient;
  apiBaseUrl: string;
  /** Browser origins allowed to call /mcp besides the service's own; requests without Origin (non-browser clients) pass. */
  allowedOrigins: string[];
  limits: RequestLimits;
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** A refusal before the MCP exchange starts, as a JSON-RPC error with the fitting HTTP status. */
function refuse(reply: FastifyReply, error: AppError) {
  if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="gatehouse", error="invalid_token"');
  return reply.status(error.status).send({
    jsonrpc: '2.0',
    error: { code: error.status === 401 ? -32001 : -32000, message: `${error.code}: ${error.message}`, data: { code: error.code, ...error.details } },
    id: null,
  });
}

/**
 * MCP over Streamable HTTP, stateless: every POST carries its own bearer key, gets a server built for that
 * key's organization and abilities, and is answered with plain JSON. Any api process can answer any request.
 */
export async function mcpRoute(app: FastifyInstance, options: McpOptions): Promise<void> {
  const ownOrigin = new URL(options.apiBaseUrl).origin;
  const allowed = new Set([ownOrigin, ...options.allowedOrigins]);
  // The activity record: one row per tools/call, written in the background.
  const activity = activityRecorder(options.db, (error) => app.log.warn({ err: error }, 'activity not recorded'));
  app.addHook('onClose', () => activity.drain());
  // Exchanges still open (a tasks/result waiting on a review, say) are closed when the app closes: the task
  // lives in the database, and the client asks again, of this process or another.
  const open = new Set<{ close(): Promise<void> }>();
  app.addHook('preClose', async () => {
    await Promise.all([...open].map((exchange) => exchange.close().catch(() => {})));
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'mcp request failed');
    return refuse(reply, appError);
  });

  app.post('/mcp', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      return refuse(reply, new AppError('insufficient_ability', `Origin ${origin} may not call this MCP server`));
    }
    const caller = await authenticate(options.db, request.headers.authorization);
    // Every authenticated POST counts against the MCP ceiling and the daily budget, refused ones too.
    // One message per request: MCP dropped JSON-RPC batches (2025-06-18), and a batch would pass many calls
    // through the limits as one.
    if (Array.isArray(request.body) && request.body.length !== 1) {
      return reply.status(400).send({
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Send one JSON-RPC message per request: batches are not supported' },
        id: null,
      });
    }
    const verdict = await options.limits.count(caller, 'mcp');
    if (verdict) {
      // On the raw response: after reply.hijack() the MCP transport writes the answer, and keeps these.
      for (const [name, value] of Object.entries(rateLimitHeaders(verdict))) reply.raw.setHeader(name, value);
      if (!verdict.admitted) {
        const { actor } = caller;
        if (actor.kind === 'api_key') {
          for (const tool of toolCallsIn(request.body).values()) {
            const operation = catalog.find((op) => op.tool === tool)?.name ?? tool;
            activity.record({
              orgId: caller.organization.id,
              apiKeyId: actor.keyId,
              userId: null,
              interface: 'mcp',
              tool,
              operation,
              latencyMs: reply.elapsedTime,
              outcome: 'rate_limited',
              status: 429,
            });
          }
        }
        return refuse(reply, rateLimitedError(caller, 'mcp', verdict));
      }
    }
    if (caller.actor.kind !== 'api_key') {
      return refuse(reply, new AppError('person_required', 'The MCP server takes API keys; personal tokens are for people using the REST API'));
    }
    if (!caller.organization.apiAccess) {
      return refuse(reply, new AppError('api_access_disabled', `API access is turned off for the organization ${caller.organization.slug}`));
    }

    const keyId = caller.actor.keyId;
    const recordCall = (call: Pick<ActivityEntry, 'tool' | 'operation' | 'latencyMs'> & ToolOutcome) =>
      activity.record({ orgId: caller.organization.id, apiKeyId: keyId, userId: null, interface: 'mcp', ...call });
    const ran: string[] = [];

    const server = buildMcpServer(
      { db: options.db, gate: options.gate, caller, interface: 'mcp', apiBaseUrl: options.apiBaseUrl, catalog, limits: options.limits, usage: verdict?.today },
      {
        version,
        log: (error) => request.log.error({ err: error }, 'mcp tool failed'),
        onToolCall: (call) => {
          ran.push(call.tool);
          recordCall({ tool: call.tool, operation: call.operation, latencyMs: call.latencyMs, ...outcomeOf(call.result) });
        },
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const asked = toolCallsIn(request.body);
    if (asked.size > 0) {
      // A call the SDK refuses before any tool runs (a tool this key does not have, arguments that fail the
      // input schema) is recorded from the answer it gets.
      const send = transport.send.bind(transport);
      transport.send = (message, sendOptions) => {
        const id = 'method' in message ? undefined : (message as { id?: string | number }).id;
        const tool = id === undefined ? undefined : asked.get(id);
        if (id !== undefined && tool !== undefined) {
          asked.delete(id);
          const index = ran.indexOf(tool);
          const refusal = index < 0 ? refusalOf(message) : undefined;
          if (index >= 0) ran.splice(index, 1);
          if (refusal) {
            const operation = catalog.find((op) => op.tool === tool)?.name ?? tool;
            recordCall({ tool, operation, latencyMs: reply.elapsedTime, ...refusal });
          }
        }
        return send(message, sendOptions);
      };
    }
    reply.hijack();
    const exchange = {
      async close() {
        open.delete(exchange);
        await transport.close();
        await server.close();
        if (!reply.raw.writableEnded) reply.raw.destroy();
      },
    };
    open.add(exchange);
    reply.raw.on('close', () => void exchange.close());
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  const notInStatelessMode = (_request: unknown, reply: FastifyReply) =>
    reply
      .status(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'This MCP server is stateless: send requests with POST' }, id: null });
  app.get('/mcp', notInStatelessMode);
  app.delete('/mcp', notInStatelessMode);
}

/** The tools/call requests of a POST body (one message or a batch), by JSON-RPC id. */
function toolCallsIn(body: unknown): Map<string | number, string> {
  const calls = new Map<string | number, string>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; id?: unknown; params?: { name?: unknown } } | null;
    if (m?.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number') && typeof m.params?.name === 'string') {
      calls.set(m.id, m.params.name);
    }
  }
  return calls;
}

/**
 * Why the SDK refused a call that no tool ran for: a tool this key does not have, or arguments the tool's
 * schema refuses. Undefined when the answer is no error (a task created, to run later).
 */
function refusalOf(message: JSONRPCMessage): ToolOutcome | undefined {
  let text: string;
  if ('error' in message) text = message.error.message;
  else if ('result' in message && message.result.isError === true) text = JSON.stringify(message.result.content ?? '');
  else return undefined;
  return /Tool \S+ (not found|disabled)/.test(text) ? { outcome: 'not_found', status: 404 } : { outcome: 'validation_failed', status: 422 };
}
