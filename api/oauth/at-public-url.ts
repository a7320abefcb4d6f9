import type { IncomingMessage } from 'node:http';

// The authorization server (oidc-provider, a Koa app) builds its endpoints in the metadata, its redirects and its
// cookies' Secure flag from the request's host and protocol: the Host header, or, with Koa's proxy switch on,
// X-Forwarded-Host and X-Forwarded-Proto. A client writes all three, and a proxy passes on what it does not
// overwrite. So the library is never shown a client's: every request is handed to it as one that came at
// PUBLIC_URL, its switch on (api/oauth/server.ts) so that it believes the protocol written here, which is https
// when PUBLIC_URL is (behind a proxy that ends TLS), whatever the connection to the api was.

/**
 * Rewrites the request the library is handed: its host and protocol PUBLIC_URL's, its address the one the api
 * determined (Fastify's, under TRUST_PROXY), its target the path and query alone (never an absolute URL naming
 * another host), or `path` when given.
 */
export function handOverAtPublicUrl(raw: IncomingMessage, publicUrl: URL, clientAddress: string, path?: string): void {
  const target = raw.url ?? '/';
  // Origin-form (/path?query) is kept as it came; an absolute URL (GET http://host/path) loses its host.
  if (path !== undefined) raw.url = path;
  else if (!target.startsWith('/') || target.startsWith('//')) {
    const asked = new URL(target, publicUrl);
    raw.url = `${asked.pathname}${asked.search}`;
  }
  const headers = raw.headers;
  delete headers.forwarded;
  delete headers['x-forwarded-port'];
  delete headers['x-forwarded-prefix'];
  headers.host = publicUrl.host;
  headers['x-forwarded-host'] = publicUrl.host;
  headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
  headers['x-forwarded-for'] = clientAddress;
}
