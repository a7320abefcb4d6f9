import { ApplicationFailure } from '@temporalio/workflow';
import { writeRefusedFailure, type WriteRefusal } from '../domain/gate/contract';
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
