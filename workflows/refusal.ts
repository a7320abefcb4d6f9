import { ApplicationFailure } from '@temporalio/workflow';
import { writeRefusedFailure, type GateAnswer, type WriteRefusal } from '../domain/gate/contract';
import type { ErrorCode } from '../domain/kit/errors';

/** How activities of the version before the typed contract named a refusal: `AppError:<code>`, details[0] its details. */
const previousVersionPrefix = 'AppError:';

/**
 * The refusal an activity failed with, if a refusal is how it failed (see WriteRefusal in the contract). While a
 * deployment rolls over, an activity may still run on a worker of the previous version, which named the code
 * in the failure's type; that reads the same. Remove it once no such worker runs.
 */
export function refusalOf(failure: unknown): (WriteRefusal & { message: string }) | undefined {
  if (!(failure instanceof ApplicationFailure)) return undefined;
  if (failure.type === writeRefusedFailure) return { ...(failure.details?.[0] as WriteRefusal), message: failure.message };
  if (failure.type?.startsWith(previousVersionPrefix)) {
    const details = failure.details?.[0] as Record<string, unknown> | undefined;
    return { code: failure.type.slice(previousVersionPrefix.length) as ErrorCode, ...(details ? { details } : {}), message: failure.message };
  }
  return undefined;
}

/** The refusal a failed activity raised: the cause of a regular activity's failure, a local activity's failure itself. */
export function refusalIn(error: unknown) {
  return refusalOf(error) ?? refusalOf((error as { cause?: unknown }).cause);
}

/** The type of the ApplicationFailure an activity raised, if it raised one. */
export function failureTypeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/**
 * What the caller is told of an activity that failed: the refusal it raised, or `notDone` (that the write could
 * not be done, and was not applied).
 */
export function failedAnswer(error: unknown, notDone: string): Extract<GateAnswer, { outcome: 'failed' }> {
  const refusal = refusalIn(error);
  if (refusal) return { outcome: 'failed', code: refusal.code, message: refusal.message, details: refusal.details };
  return { outcome: 'failed', code: 'unavailable', message: notDone };
}
