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
};

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
