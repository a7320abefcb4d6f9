import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database';
import { resumeSession, type SessionRules } from '../../domain/identity/sessions';
import { AppError } from '../../domain/kit/errors';
import type { AddressLimitOptions } from '../address-limits';
import type { CallPipeline } from '../catalog/call';
import { errorBody } from '../rest/http';
import { restRoutes, type RestDialect } from '../rest/routes';
import { changesState, crossSiteRefusal, headerValue, sessionCookie } from './cookies';
import { liveRoute } from './live';
import { passkeyRoutes } from './passkey-routes';
import { sessionRoutes, type TemporalUiLinks } from './session-routes';

export interface ConsoleApiOptions {
  db: Database;
  pipeline: CallPipeline;
  /** Where people reach the service: the origin the console's pages come from. */
  publicUrl: string;
  sessions: SessionRules;
  temporalUi?: TemporalUiLinks;
  /** How often live pages' organizations are polled for changes (default a second). */
  liveIntervalMs?: number;
  /** The per-address limits of signing in, counted in PostgreSQL (api/address-limits.ts). */
  addressLimits: AddressLimitOptions;
}

/**
 * The console's API under /console/api: the session door (sign in, sign out, set a password) and, under /v1,
 * every catalog operation offered to people in the console. No bearer token is read here. Needs the cookie
 * parser on the root.
 */
export async function consoleApi(app: FastifyInstance, options: ConsoleApiOptions): Promise<void> {
  const cookie = sessionCookie(options.publicUrl);
  // The REST dialect of the catalog, with a session where the agents' API takes a bearer token.
  const consoleDialect: RestDialect = {
    via: 'console',
    credentialOf: (request) => ({
      via: 'console',
      session: cookie.read(request),
      csrfToken: headerValue(request.headers['x-csrf-token']),
      changesState: changesState(request),
      activity: request.headers['x-gatehouse-background'] !== '1',
    }),
    explicitOrganization: false,
  };
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody(new AppError('not_found', `No console route ${request.method} ${request.url.split('?')[0]}`))),
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const refusal = crossSiteRefusal(request, options.publicUrl);
    if (refusal) return reply.status(refusal.status).send(errorBody(refusal));
    if (request.headers.authorization !== undefined) {
      const keyRefused = new AppError('unauthorized', 'The console takes a signed-in session, never a bearer token; agents use /api');
      return reply.status(401).send(errorBody(keyRefused));
    }
  });
  await app.register(sessionRoutes, {
    db: options.db,
    sessions: options.sessions,
    cookie,
    temporalUi: options.temporalUi,
    publicUrl: options.publicUrl,
    addressLimits: options.addressLimits,
  });
  await app.register(passkeyRoutes, { db: options.db, sessions: options.sessions, cookie, publicUrl: options.publicUrl });
  await app.register(liveRoute, { db: options.db, sessions: options.sessions, cookie, intervalMs: options.liveIntervalMs });
  await app.register(restRoutes, { pipeline: options.pipeline, dialect: consoleDialect });
}

/**
 * Keeps a page for signed-in people only (the API playground): a browser is sent to sign in and back, any other
 * client gets 401. Needs the cookie parser on the instance it guards.
 */
export function signedInOnly(options: { db: Database; sessions: SessionRules; publicUrl: string }) {
  const cookie = sessionCookie(options.publicUrl);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (await resumeSession(options.db, cookie.read(request), options.sessions)) return;
    if ((request.headers.accept ?? '').includes('text/html')) {
      return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
    }
    return reply.status(401).send(errorBody(new AppError('unauthorized', 'The API playground needs a signed-in person: sign in to the console first')));
  };
}
