import { z } from 'zod';
import { CommitOutcomeUnknown, isConnectionFault } from '../../db/database';

/** Every refusal the service gives, by code; the REST and MCP adapters map them to their transports. */
export const errorStatus = {
  unauthorized: 401,
  sign_in_required: 401,
  api_access_disabled: 403,
  read_only_key: 403,
  insufficient_ability: 403,
  insufficient_scope: 403,
  person_required: 403,
  insufficient_role: 403,
  csrf_failed: 403,
  wrong_person: 403,
  policy_denied: 403,
  self_approval: 403,
  set_up_by_key_creator: 403,
  passkey_required: 403,
  passkey_failed: 403,
  feature_not_in_plan: 403,
  organization_mismatch: 404,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_changed: 409,
  request_timeout: 408,
  link_invalid: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  invalid_json: 400,
  bad_request: 400,
  validation_failed: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  review_queue_full: 429,
  headers_too_large: 431,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export function isErrorCode(code: string): code is ErrorCode {
  return code in errorStatus;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** What caused it, for the log; never shown to a caller. */
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

/** One field that failed, as `details.fields` lists them. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A validation refusal naming every field that failed, so that a client (or an agent) can fix its request. */
export function invalidFields(fields: FieldProblem[]): AppError {
  return new AppError('validation_failed', `The request is not valid: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, { fields });
}

function fieldsOf(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: at ? `${at}.${key}` : key, message: 'unknown field' }));
    }
    return [{ field: at || '(body)', message: issue.message }];
  });
}

/**
 * The error as one of ours when it is a refusal: the request's fault, final, never worth a retry. Our own
 * errors, input that fails its schema, and what PostgreSQL refuses as data (class 22) or as a clash with other
 * records (class 23). Anything else (a lost connection, a bug) is a fault: undefined.
 */
export function asRefusal(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof z.ZodError) return invalidFields(fieldsOf(error));
  const sqlState = (error as { code?: unknown } | null)?.code;
  if (typeof sqlState !== 'string' || !/^2[23][0-9A-Z]{3}$/.test(sqlState)) return undefined;
  if (sqlState.startsWith('22')) return new AppError('validation_failed', 'A value in the request is outside what the database can store or search');
  return new AppError(
    'conflict',
    sqlState === '23503'
      ? 'The write conflicts with other records: the record is still referred to (by tasks or work logs, say), or refers to one that is gone'
      : 'The write conflicts with the data as it is now',
  );
}

/**
 * Whatever was thrown, as one of our errors: a database that stayed out of reach through the retries is a 503
 * (saying so when a change may have been saved all the same); any other fault a bare 500 that says nothing of its
 * cause.
 */
export function toAppError(error: unknown): AppError {
  const refusal = asRefusal(error);
  if (refusal) return refusal;
  if (error instanceof CommitOutcomeUnknown) {
    return new AppError('unavailable', 'The connection to the database failed while the change was being saved: it may have been made. Check before sending it again.');
  }
  if (isConnectionFault(error)) return new AppError('unavailable', 'The database could not be reached in time; try again shortly');
  return new AppError('internal_error', 'Something went wrong on our side; it has been logged');
}
