import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AppError, toAppError } from '../../domain/kit/errors';
import type { RequestVerdict } from '../../domain/usage/limits';

// What every HTTP answer of the service shares, REST's and MCP's alike: the error envelope, Fastify's own
// errors as ours, and the rate-limit headers.

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export function errorBody(error: AppError): ErrorBody {
  return {
    success: false,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
}

const fastifyCodes: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large', 'The request body is larger than this API accepts'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('unsupported_media_type', 'Send request bodies as JSON with Content-Type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('invalid_json', 'The Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('invalid_json', 'The body is empty but says it is JSON'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('invalid_json', 'The request body is not valid JSON'),
  FST_ERR_BAD_URL: () => new AppError('bad_request', 'The path is not valid: it has a malformed percent-encoding'),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('uri_too_long', 'A segment of the path is longer than any id or slug can be (100 characters)'),
};

/** Node's HTTP parser refused the request before Fastify saw it: the answer is written to the socket as is. */
const clientErrors: Record<string, () => AppError> = {
  HPE_HEADER_OVERFLOW: () =>
    new AppError('headers_too_large', 'The request line and headers are larger than this server reads (16 KB): send long input in a JSON body'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new AppError('request_timeout', 'The request did not arrive in time (60 seconds for its headers and body)'),
};

/**
 * The raw HTTP answer to a request that Node could not parse (the `clientError` event), in the envelope; the
 * connection is then closed, as Node does.
 */
export function clientErrorAnswer(error: { code?: string }): string {
  const appError = clientErrors[error.code ?? '']?.() ?? new AppError('bad_request', 'The request could not be read as HTTP');
  const body = JSON.stringify(errorBody(appError));
  return (
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * An error Fastify raised before any operation ran (a body it could not read, a route it does not have), as
 * one of ours; everything else is mapped as everywhere (kit/errors).
 */
export function httpError(error: unknown): AppError {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && fastifyCodes[code]) return fastifyCodes[code]();
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) {
    return new AppError('invalid_json', `The request body is not valid JSON: ${error.message}`);
  }
  const status = (error as { statusCode?: number } | null)?.statusCode;
  if (status === 404) return new AppError('not_found', 'No such route');
  if (status && status >= 400 && status < 500 && !(error instanceof AppError)) return new AppError('validation_failed', 'The request could not be read');
  return toAppError(error);
}

/**
 * The rate-limit headers, REST and MCP alike: the limit nearest exhaustion (the token's per-minute ceiling or
 * the organization's daily budget), what is left of it, and the seconds until it resets.
 */
export function rateLimitHeaders(verdict: RequestVerdict | undefined): Record<string, string> {
  if (!verdict) return {};
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(verdict.binding.limit),
    'x-ratelimit-remaining': String(verdict.binding.remaining),
    'x-ratelimit-reset': String(verdict.resetSeconds),
  };
  if (!verdict.admitted) headers['retry-after'] = String(verdict.resetSeconds);
  return headers;
}

/** Up to this size, the rest of a refused body is read and dropped: beyond it, the connection is closed. */
const drainedAtMost = 64 * 1024 * 1024;

/**
 * Fastify closes the connection when it refuses a body (too large, not JSON). Closing a socket whose client is
 * still sending makes the kernel reset it, and the client may lose the answer with the connection. Node reads
 * and drops what is left of a request when the connection stays open, so a body of sane size is let finish.
 */
export function keepReadingTheBody(request: FastifyRequest, reply: FastifyReply): void {
  if (reply.getHeader('connection') !== 'close' || request.raw.complete) return;
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length <= drainedAtMost) reply.removeHeader('connection');
}

/**
 * A Bearer challenge (RFC 6750) that names where the resource's OAuth metadata is (RFC 9728) and the scopes it
 * takes: a client that follows the MCP specification's authorization finds the authorization server from here.
 * `error` is left out when no token came at all.
 */
export function bearerChallenge({ resourceMetadataUrl, scopes, error, description }: { resourceMetadataUrl: string; scopes: readonly string[]; error?: 'invalid_token' | 'insufficient_scope'; description?: string }): string {
  const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`;
  const parts = [`realm="gatehouse"`, `resource_metadata=${quoted(resourceMetadataUrl)}`];
  if (error) parts.push(`error=${quoted(error)}`);
  if (description) parts.push(`error_description=${quoted(description)}`);
  parts.push(`scope=${quoted(scopes.join(' '))}`);
  return `Bearer ${parts.join(', ')}`;
}
