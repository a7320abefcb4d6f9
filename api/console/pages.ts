import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
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

export const consolePages = fp(async (app: FastifyInstance, options: ConsolePagesOptions) => {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy },
    frameguard: { action: 'deny' },
    // Review links carry ids; keep them to ourselves.
    referrerPolicy: { policy: 'same-origin' },
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
