import { z } from 'zod';
import { AppError } from '../../domain/kit/errors';

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

/** Names every field that failed, so a client (or an agent) can fix its request. */
export function validationError(error: z.ZodError): AppError {
  const fields = error.issues.flatMap((issue) => {
    const at = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: at ? `${at}.${key}` : key, message: 'unknown field' }));
    }
    return [{ field: at || '(body)', message: issue.message }];
  });
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  return new AppError('validation_failed', `The request is not valid: ${summary}`, { fields });
}

const fastifyCodes: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large', 'The request body is larger than this API accepts'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('unsupported_media_type', 'Send request bodies as JSON with Content-Type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('invalid_json', 'The Content-Length does not match the body'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('invalid_json', 'The body is empty but says it is JSON'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('invalid_json', 'The request body is not valid JSON'),
};

/** Whatever was thrown, as one of our errors; anything unexpected becomes a bare 500 without details. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof z.ZodError) return validationError(error);
  const code = (error as { code?: string }).code;
  if (code && fastifyCodes[code]) return fastifyCodes[code]();
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) {
    return new AppError('invalid_json', `The request body is not valid JSON: ${error.message}`);
  }
  // A value PostgreSQL refuses (class 22, data exception) that validation let through is still the request's fault.
  if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) {
    return new AppError('validation_failed', 'A value in the request is outside what can be stored or searched');
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 404) return new AppError('not_found', 'No such route');
  if (status && status >= 400 && status < 500) return new AppError('validation_failed', 'The request could not be read');
  return new AppError('internal_error', 'Something went wrong on our side; it has been logged');
}
