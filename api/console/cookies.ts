import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/kit/errors';

// The session cookie, and the checks every console request passes before its session is looked at.

const plainName = 'gatehouse_session';
/** Over https the `__Host-` prefix binds the cookie to this host, path / and Secure; browsers refuse it otherwise. */
const hostName = '__Host-gatehouse_session';

/** The session cookie as the console sets and reads it. */
export interface SessionCookie {
  read(request: FastifyRequest): string | undefined;
  set(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void;
  clear(request: FastifyRequest, reply: FastifyReply): void;
}

/**
 * Secure (and `__Host-`) when the request came over https, or when the service's public URL is https: behind a
 * proxy that ends TLS and is not trusted (TRUST_PROXY), the request itself says http.
 */
export function sessionCookie(publicUrl: string): SessionCookie {
  const publicHttps = publicUrl.startsWith('https:');
  const secure = (request: FastifyRequest) => publicHttps || request.protocol === 'https';
  const nameFor = (request: FastifyRequest) => (secure(request) ? hostName : plainName);
  return {
    read: (request) => request.cookies[nameFor(request)],
    set(request, reply, token, maxAgeMs) {
      reply.setCookie(nameFor(request), token, {
        path: '/',
        httpOnly: true,
        secure: secure(request),
        // Strict: no other site's link or form carries it. The console's page is public; it asks for the session
        // itself (a same-site fetch), so arriving from a link in an email still finds the person signed in.
        sameSite: 'strict',
        maxAge: Math.floor(maxAgeMs / 1000),
      });
    },
    clear(request, reply) {
      reply.clearCookie(nameFor(request), { path: '/', httpOnly: true, secure: secure(request), sameSite: 'strict' });
    },
  };
}

/** Whether the method may change something: every such console call needs the session's CSRF token too. */
export function changesState(request: FastifyRequest): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(request.method);
}

/**
 * Refuses a state-changing request that a browser says came from another site (Fetch Metadata), or whose Origin
 * is neither this service's public URL nor the address it was reached at. A client that sends neither header is
 * no browser, and no cross-site request.
 */
export function crossSiteRefusal(request: FastifyRequest, publicUrl: string): AppError | undefined {
  if (!changesState(request)) return undefined;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return refusal();
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== new URL(publicUrl).origin && origin !== `${request.protocol}://${request.host}`) return refusal();
  return undefined;
}

function refusal(): AppError {
  return new AppError('csrf_failed', 'Cross-site requests to the console are refused');
}

/** A header's one value (Node folds repeats into an array for a few). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
