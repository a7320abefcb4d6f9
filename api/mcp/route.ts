import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import type { Database } from '../../db/database';
import { authenticate } from '../../domain/authenticate';
import { AppError } from '../../domain/errors';
import type { GateClient } from '../catalog/gate-client';
import { catalog } from '../catalog/index';
import { toAppError } from '../rest/errors';
import { buildMcpServer } from './server';

export interface McpOptions {
  db: Database;
  gate: GateClient;
  apiBaseUrl: string;
  /** Browser origins allowed to call /mcp besides the service's own; requests without Origin (non-browser clients) pass. */
  allowedOrigins: string[];
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** A refusal before the MCP exchange starts, as a JSON-RPC error with the fitting HTTP status. */
function refuse(reply: FastifyReply, error: AppError) {
  if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="gatehouse", error="invalid_token"');
  return reply.status(error.status).send({
    jsonrpc: '2.0',
    error: { code: error.status === 401 ? -32001 : -32000, message: `${error.code}: ${error.message}`, data: { code: error.code } },
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
    if (caller.actor.kind !== 'api_key') {
      return refuse(reply, new AppError('person_required', 'The MCP server takes API keys; personal tokens are for people using the REST API'));
    }
    if (!caller.organization.apiAccess) {
      return refuse(reply, new AppError('api_access_disabled', `API access is turned off for the organization ${caller.organization.slug}`));
    }

    const server = buildMcpServer(
      { db: options.db, gate: options.gate, caller, interface: 'mcp', apiBaseUrl: options.apiBaseUrl, catalog },
      { version, log: (error) => request.log.error({ err: error }, 'mcp tool failed') },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
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
