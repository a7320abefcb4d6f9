/** Every refusal the service gives, by code; the REST and MCP adapters map them to their transports. */
export const errorStatus = {
  unauthorized: 401,
  api_access_disabled: 403,
  read_only_key: 403,
  insufficient_ability: 403,
  person_required: 403,
  insufficient_role: 403,
  policy_denied: 403,
  feature_not_in_plan: 403,
  organization_mismatch: 404,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_json: 400,
  validation_failed: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  review_queue_full: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} was not found`);
