import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Operation } from '../catalog/operation';
import { buildOpenApiDocument } from './openapi';

export interface DocsOptions {
  catalog: readonly Operation[];
  /** Absolute URL of the REST base, ending in /api. */
  apiBaseUrl: string;
  /** Who may open the playground (a signed-in person); the OpenAPI document stays public. */
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/**
 * Only our own origin: the page loads Swagger UI from node_modules and calls the API it documents, so a
 * stray request elsewhere (a CDN, a remote validator) is refused by the browser rather than leaking a token.
 */
const contentSecurityPolicy = {
  'default-src': "'self'",
  'connect-src': "'self'",
  'script-src': "'self'",
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'object-src': "'none'",
  'base-uri': "'self'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
};

/** The OpenAPI document at /api/openapi.json (public) and the playground that tries it at /api/docs (people signed in). */
export async function apiDocs(app: FastifyInstance, options: DocsOptions): Promise<void> {
  const document = buildOpenApiDocument(options.catalog, { serverUrl: options.apiBaseUrl });
  app.get('/api/openapi.json', async () => document);

  // The playground calls the origin that served it: same-origin needs no CORS, whatever the public URL says.
  const playgroundDocument = buildOpenApiDocument(options.catalog, { serverUrl: '/api', serverDescription: 'This server' });
  await app.register(fastifySwagger, { mode: 'static', specification: { document: playgroundDocument } });
  await app.register(fastifySwaggerUi, {
    routePrefix: '/api/docs',
    uiHooks: {
      onRequest: (request, reply, done) => {
        // A guard that answered (sent the browser to sign in) ends the request here.
        options.guard(request, reply).then(() => reply.sent || done(), done);
      },
    },
    staticCSP: contentSecurityPolicy,
    theme: { title: 'Gatehouse API playground' },
    uiConfig: {
      // No top bar: it would offer to load other documents from anywhere.
      layout: 'BaseLayout',
      docExpansion: 'list',
      deepLinking: true,
      tryItOutEnabled: true,
      displayRequestDuration: true,
      filter: true,
      defaultModelsExpandDepth: -1,
    },
  });
}
