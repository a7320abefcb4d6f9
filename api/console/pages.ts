import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import helmet from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// The console's pages: the single-page app built from web/ (static files), and the security headers every
// answer carries. Registered on the root, not encapsulated: the headers and the page fallback apply everywhere.

export interface ConsolePagesOptions {
  /** The built app (web/dist) as `builtConsole` found it at start; undefined: pages say how to build it. */
  dir: string | undefined;
}

/** The folder when it holds a built console; decided once, at start, as the routes to its files are. */
export function builtConsole(dir: string): string | undefined {
  return existsSync(join(dir, 'index.html')) ? dir : undefined;
}

/**
 * Only our own origin, and no framing at all: no other site can frame an Approve button. The app has no inline
 * script or style, so none is allowed.
 */
const contentSecurityPolicy = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * The security headers every answer carries, as helmet sets them. They are the same for every request (no
 * per-request nonce), so helmet runs once, at start, rather than on every request as @fastify/helmet runs it
 * (building its middleware anew each time cost about 0.1 ms a request).
 */
export const securityHeaders: Record<string, string> = headersSetBy(
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy },
    frameguard: { action: 'deny' },
    // Review links carry ids; keep them to ourselves.
    referrerPolicy: { policy: 'same-origin' },
  }),
);

function headersSetBy(middleware: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  middleware({} as IncomingMessage, response as unknown as ServerResponse, (error) => {
    if (error) throw error;
  });
  return headers;
}

export const consolePages = fp(async (app: FastifyInstance, options: ConsolePagesOptions) => {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(securityHeaders);
    done();
  });
  if (options.dir === undefined) return;
  await app.register(fastifyStatic, {
    root: options.dir,
    prefix: '/',
    // One route per built file, found at start: anything else falls through to the page fallback or a 404.
    wildcard: false,
    index: false,
    setHeaders(response, path) {
      // Built files carry a content hash in their names; the page itself must be fetched fresh each time.
      response.setHeader('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
});

/** Only GET requests that accept HTML, outside /api, /mcp and /console/api, get the app's page. */
export function wantsConsolePage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url.split('?')[0]!;
  if (/^\/(api|mcp|console\/api)(\/|$)/.test(path)) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

export function sendConsolePage(reply: FastifyReply, dir: string | undefined): FastifyReply {
  if (dir === undefined) {
    return reply
      .status(503)
      .type('text/html; charset=utf-8')
      .send('<!doctype html><title>Gatehouse</title><p>The console is not built. Run <code>npm run build</code> (<code>npm install</code> does it too) and start again.</p>');
  }
  return reply.header('cache-control', 'no-cache').sendFile('index.html', dir);
}
