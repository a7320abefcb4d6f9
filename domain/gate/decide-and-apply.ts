import type { Database } from '../../db/database';
import { asRefusal, type AppError } from '../kit/errors';
import { applyIn } from './apply';
import type { DecidedWrite, GatedWriteRequest } from './contract';
import { decideIn, type TrustedInstead } from './decide';
import type { GatedWrite } from './writes';

/** The data refused a write the policy allowed (an unknown id, a stale If-Match): the transaction is given up. */
class RefusedAfterAllow extends Error {
  constructor(
    readonly refusal: AppError,
    /** The trust window that let it through, whose use went with the rolled-back transaction. */
    readonly trusted?: TrustedInstead,
  ) {
    super(refusal.message);
  }
}

/**
 * Decides a write and, when the policy allows it, applies it, in one transaction: a retry after a crash finds
 * both or neither, and finds them by the workflow id (so at-least-once is exactly once). A Deny, a refusal by a
 * full review queue and a write held for review are recorded alike. A write that the data refuses after an Allow
 * keeps its decision: the transaction is rolled back whole, and a second one records the decision alone (the
 * policy asked again, as a retry would) with the refusal; a trust window that let it through is named by that
 * decision without spending a use. Refusals are rare, so the usual Allow needs no savepoint.
 */
export async function decideAndApply(
  db: Database,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  reviewExpiresAt: Date,
): Promise<DecidedWrite> {
  try {
    return await db.transaction(async (tx) => {
      const { recorded: decision, justDecided, trusted } = await decideIn(tx, write, workflowId, request, reviewExpiresAt);
      if (decision.decision !== 'allow') return decision;
      try {
        return { ...decision, applied: { result: await applyIn(tx, write, workflowId, request, { justAllowed: justDecided }) } };
      } catch (error) {
        const refusal = asRefusal(error);
        throw refusal ? new RefusedAfterAllow(refusal, trusted) : error;
      }
    });
  } catch (error) {
    if (!(error instanceof RefusedAfterAllow)) throw error;
    const { refusal, trusted } = error;
    return db.transaction(async (tx) => {
      // A window that let the write through keeps its use: the write it counted did not apply.
      const { recorded: decision } = await decideIn(tx, write, workflowId, request, reviewExpiresAt, { spentNothing: trusted });
      if (decision.decision !== 'allow') return decision;
      return { ...decision, applied: { refusal: { code: refusal.code, message: refusal.message, ...(refusal.details ? { details: refusal.details } : {}) } } };
    });
  }
}
