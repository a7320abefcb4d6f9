import type { RequestVerdict } from '../../domain/usage/limits';

/**
 * The rate-limit headers of an answer, REST and MCP alike: the limit nearest exhaustion (the token's per-minute
 * ceiling or the organization's daily budget), what is left of it, and the seconds until it resets.
 */
export function rateLimitHeaders(verdict: RequestVerdict): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(verdict.binding.limit),
    'x-ratelimit-remaining': String(verdict.binding.remaining),
    'x-ratelimit-reset': String(verdict.resetSeconds),
  };
  if (!verdict.admitted) headers['retry-after'] = String(verdict.resetSeconds);
  return headers;
}
