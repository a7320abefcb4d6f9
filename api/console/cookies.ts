import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/kit/errors';

// The session cookie, and the checks every console request passes before its session is looked at.

const plainName = 'gatehouse_session';
/** Over https the `__Host-` prefix binds the cookie to this host, path / and Secure; browsers refuse it otherwise. */
const hostName = '__Host-gatehouse_session';

export function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

export function sessionCookieOf(request: FastifyRequest): string | undefined {
  return request.cookies[isHttps(request) ? hostName : plainName];
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void {
  reply.setCookie(isHttps(request) ? hostName : plainName, token, {
    path: '/',
    httpOnly: true,
    secure: isHttps(request),
    // Strict: no other site's link or form carries it. The console's page is public; it asks for the session
    // itself (a same-site fetch), so arriving from a link in an email still finds the person signed in.
    sameSite: 'strict',
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(isHttps(request) ? hostName : plainName, { path: '/', httpOnly: true, secure: isHttps(request), sameSite: 'strict' });
}

/** Whether the method may change something: every such console call needs the session's CSRF token too. */
export function changesState(request: FastifyRequest): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(request.method);
}

/**
 * Refuses a state-changing request that a browser says came from another site (Fetch Metadata), or whose Origin
 * is not this service's. A client that sends neither is no browser, and no cross-site request.
 */
export function crossSiteRefusal(request: FastifyRequest): AppError | undefined {
  if (!changesState(request)) return undefined;
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return refusal();
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) return refusal();
  return undefined;
}

function refusal(): AppError {
  return new AppError('csrf_failed', 'Cross-site requests to the console are refused');
}

/** A header's one value (Node folds repeats into an array for a few). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
