import type { Attributes } from '@opentelemetry/api';
import type { IncomingMessage, RequestOptions } from 'node:http';

// What the HTTP instrumentation must not put on a span (runtime/tracing.ts). Its attributes are built from the
// request's address: an incoming request's path and query, and every outgoing URL whole. Some of those are secrets:
// the token of a decision link or a Slack link offer in the path of a link sent in the older form (/decide/<token>,
// /slack/link/<token>; links now carry it in the fragment, which no request has), and every outgoing URL's path
// and query (a webhook endpoint's, a Slack incoming webhook's, a press's response_url: whoever has them can post
// there). The instrumentation's start hooks return attributes that replace its own, so the secrets never reach a
// span, an exporter or a collector. The hooks cannot tell which conventions the instrumentation writes (the old
// http.target and http.url, the stable url.path and url.full, or both, by OTEL_SEMCONV_STABILITY_OPT_IN), so they
// write the redacted value under both.

/** What stands where a secret was. */
export const redacted = 'REDACTED';

/**
 * Incoming paths that carry a secret after a prefix: the older form of decision links and Slack link offers, and
 * the decision links' older API routes (/console/api/decision-links/<token>[/confirm|/passkey-challenge]), which a
 * page loaded before they moved may still call (refused, 404), each past the prefix whole.
 */
const secretPaths = [
  /^(\/decide\/)[^?#]+/,
  /^(\/slack\/link\/)[^?#]+/,
  /^(\/console\/api\/decision-links\/)(?!(?:read|confirm|passkey-challenge)(?:[?#]|$))[^?#]+/,
];

/** Query parameters that carry a secret, whatever the path. */
const secretQueryParameters = ['token'];

/** The request's path and query with their secrets redacted; the same string when it carries none. */
export function redactedTarget(target: string): string {
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : target.slice(queryAt + 1);
  const secretPath = secretPaths.find((pattern) => pattern.test(path));
  // A path that carries a secret takes its query with it: nothing after a token is worth keeping.
  if (secretPath) return path.replace(secretPath, `$1${redacted}`);
  if (!query) return path;
  const parameters = query.split('&').map((pair) => {
    const name = decodeURIComponentSafely(pair.split('=')[0] ?? '');
    return secretQueryParameters.includes(name) ? `${pair.split('=')[0]}=${redacted}` : pair;
  });
  return `${path}?${parameters.join('&')}`;
}

function decodeURIComponentSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** An incoming request's attributes that replace the instrumentation's where its path or query carries a secret. */
export function incomingRequestRedactions(request: IncomingMessage): Attributes {
  const target = request.url ?? '/';
  const safe = redactedTarget(target);
  if (safe === target) return {};
  const scheme = (request.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const queryAt = safe.indexOf('?');
  return {
    'http.target': safe,
    'http.url': `${scheme}://${request.headers.host ?? 'localhost'}${safe}`,
    'url.path': queryAt === -1 ? safe : safe.slice(0, queryAt),
  };
}

/** An outgoing request's URL attributes, its path and query redacted: the scheme, host and port stay. */
export function outgoingRequestRedactions(options: RequestOptions): Attributes {
  const protocol = options.protocol ?? 'http:';
  const host = options.hostname ?? options.host?.replace(/:\d+$/, '') ?? 'localhost';
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const defaultPort = protocol === 'https:' ? 443 : 80;
  const port = options.port !== undefined && options.port !== null && Number(options.port) !== defaultPort ? `:${options.port}` : '';
  const url = `${protocol}//${bracketed}${port}/${redacted}`;
  return { 'http.url': url, 'http.target': `/${redacted}`, 'url.full': url };
}
