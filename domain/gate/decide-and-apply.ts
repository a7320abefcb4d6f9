import type { Database } from '../../db/database';
import { asRefusal } from '../kit/errors';
import { applyIn } from './apply';
import type { DecidedWrite, GatedWriteRequest } from './contract';
import { decideIn } from './decide';
import type { GatedWrite } from './writes';

/**
 * Decides a write and, when the policy allows it, applies it, in one transaction: a retry after a crash finds
 * both or neither, and finds them by the workflow id (so at-least-once is exactly once). A Deny, a refusal by a
 * full review queue and a write held for review are recorded alike. A write that the data refuses after an Allow
 * keeps its decision: the transaction goes back to before the write, and the refusal is returned.
 */
export async function decideAndApply(
  db: Database,
  write: GatedWrite,
  workflowId: string,
  request: GatedWriteRequest,
  reviewExpiresAt: Date,
): Promise<DecidedWrite> {
  return db.transaction(async (tx) => {
    const { recorded: decision, justDecided } = await decideIn(tx, write, workflowId, request, reviewExpiresAt);
    if (decision.decision !== 'allow') return decision;
    await tx.query('SAVEPOINT apply');
    try {
      return { ...decision, applied: { result: await applyIn(tx, write, workflowId, request, { justAllowed: justDecided }) } };
    } catch (error) {
      const refusal = asRefusal(error);
      if (!refusal) throw error;
      await tx.query('ROLLBACK TO SAVEPOINT apply');
      return { ...decision, applied: { refusal: { code: refusal.code, message: refusal.message, ...(refusal.details ? { details: refusal.details } : {}) } } };
    }
  });
}
