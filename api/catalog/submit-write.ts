import { createHash } from 'node:crypto';
import type { ApiKeyActor } from '../../domain/identity/actors';
import { AppError, isErrorCode } from '../../domain/kit/errors';
import type { GateAnswer, GatedWriteRequest } from '../../domain/gate/contract';
import {
  claimIdempotencyKey,
  releaseIdempotencyKey,
  requestFingerprint,
  storeIdempotentAnswer,
  type IdempotencyScope,
} from '../../domain/gate/idempotency';
import { sortableUnique } from '../../domain/kit/ids';
import { spendWriteCap } from '../../domain/usage/key-budgets';
import { remediationOf, type Remediation } from '../../domain/gate/remediation';
import { authorize } from './access';
import { GateUnavailableError } from './gate-client';
import { reviewLinks, type ReviewLinks } from './links';
import type { GatedWriteOperation, OperationContext } from './operation';

export interface SubmittedWrite {
  workflowId: string;
  answer: GateAnswer;
  /** True when an Idempotency-Key repeated an earlier request and this is that request's answer. */
  replayed: boolean;
  /** For a held write: where agents and scripts follow it (the API) and where a person decides it (the console). */
  review?: ReviewLinks;
  /** For a Deny or a Review: the rules that decided and what the agent can do about it. */
  remediation?: Remediation;
}


const idempotencyKeyShape = /^[\x21-\x7e]{1,255}$/;

/**
 * Runs a gated operation: the same for every transport. The workflow id is readable in the Temporal
 * Web UI (`<org>:<operation>:<unique part>`); with an Idempotency-Key its unique part derives from the key.
 */
export async function submitGatedWrite(
  operation: GatedWriteOperation,
  input: unknown,
  context: OperationContext,
  idempotencyKey?: string,
): Promise<SubmittedWrite> {
  const { caller, db, gate } = context;
  const key = caller.actor as ApiKeyActor;
  // Gated writes are the agents' (their access names API keys only), so they come over REST or MCP.
  if (context.interface === 'console') throw new Error(`${operation.name} is not offered on the console`);
  const org = caller.organization;
  if (operation.changeset) assertMayWriteItems(input, context);
  const request: GatedWriteRequest = {
    orgId: org.id,
    orgSlug: org.slug,
    operation: operation.write.name,
    input,
    interface: context.interface,
    apiKey: { id: key.keyId, label: key.label, access: key.access, abilities: key.abilities, labelVerified: key.oauthClientId === undefined },
  };

  let workflowId = `${org.slug}:${operation.write.name}:${sortableUnique()}`;
  let scope: IdempotencyScope | undefined;
  /** A request whose Idempotency-Key another one, still running, claimed: it joins that one's workflow. */
  let joins = false;
  if (idempotencyKey !== undefined) {
    if (!idempotencyKeyShape.test(idempotencyKey)) {
      throw new AppError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
        fields: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
      });
    }
    scope = { orgId: org.id, apiKeyId: key.keyId, key: idempotencyKey };
    const fingerprint = requestFingerprint(operation.write.name, input);
    // The body is part of the id: a key whose first run failed can never lend that run's decision to another body.
    const digest = createHash('sha256').update(`${key.keyId}\0${idempotencyKey}\0${fingerprint}`).digest('hex').slice(0, 26);
    const claim = await claimIdempotencyKey(db, scope, fingerprint, `${org.slug}:${operation.write.name}:idem-${digest}`);
    if (claim.state === 'replay') return explained({ workflowId: claim.workflowId, answer: known(claim.answer), replayed: true }, operation, context);
    workflowId = claim.workflowId;
    joins = claim.state === 'in_flight';
  }

  // The key's daily cap for this operation counts each write submitted, whatever the policy will decide; a replay
  // of a stored answer is not counted again. A join is: it may start the workflow itself (its claimant may have died
  // before it did), so one let past the cap could write uncounted; a retry that joins near the cap may be refused,
  // never a write let through. Refused, nothing starts; the claimant's key is let go, so that the same
  // Idempotency-Key can be sent again once the cap resets.
  if (context.limits.enabled) {
    // A changeset counts once for each of its items' writes, so that it never goes round a key's cap of one.
    const counted = operation.changeset ? changesetItems(input).map((item) => item.operation) : [operation.write.name];
    for (const name of counted) {
      const refusal = await spendWriteCap(db, caller, name, context.limits.clock());
      if (refusal) {
        if (scope && !joins) await releaseIdempotencyKey(db, scope);
        throw refusal;
      }
    }
  }

  let answer: GateAnswer;
  try {
    answer = known(await (operation.changeset ? gate.submitChangeset(workflowId, request) : gate.submit(workflowId, request)));
  } catch (error) {
    if (!(error instanceof GateUnavailableError)) throw error;
    // The workflow goes on and may still apply the write; only the wait for its answer ended.
    throw new AppError(
      'unavailable',
      scope
        ? `The write was not decided in time (a worker or Temporal may be restarting); it may still complete. Retry with the same Idempotency-Key: the retry joins workflow ${workflowId} and answers with its outcome, and never writes twice.`
        : `The write was not decided in time (a worker or Temporal may be restarting); it may still complete as workflow ${workflowId}. Check for the record before sending it again, and send an Idempotency-Key next time: a retry with the same key answers with the outcome and never writes twice.`,
      { workflow_id: workflowId, may_still_complete: true, ...(scope ? { idempotency_key: scope.key } : {}) },
      { cause: error },
    );
  }
  if (scope) {
    if (answer.outcome === 'failed' && answer.code === 'unavailable') await releaseIdempotencyKey(db, scope);
    else await storeIdempotentAnswer(db, scope, answer);
  }
  return explained({ workflowId, answer, replayed: false }, operation, context);
}

/**
 * An answer as it comes back from Temporal or the idempotency record (JSON, perhaps written by another version):
 * a failure whose code this version does not know reads as `unavailable`.
 */
function known(answer: GateAnswer): GateAnswer {
  return answer.outcome === 'failed' && !isErrorCode(answer.code) ? { ...answer, code: 'unavailable' } : answer;
}

const changesetItems = (input: unknown) => (input as { items: { operation: string }[] }).items;

/**
 * A changeset's key needs each item's own write ability (and whatever else that write's operation needs), checked
 * before any policy runs: the refusal names the first item it may not write.
 */
function assertMayWriteItems(input: unknown, context: OperationContext): void {
  for (const [index, item] of changesetItems(input).entries()) {
    const itemOperation = context.catalog.find((candidate) => candidate.kind === 'gated_write' && !candidate.changeset && candidate.write.name === item.operation);
    if (!itemOperation) throw new AppError('validation_failed', `item ${index}: ${item.operation} is not a gated write`, { fields: [{ field: `items.${index}.operation`, message: 'not a gated write' }] });
    try {
      authorize(itemOperation, context.caller);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new AppError(error.code, `item ${index} (${item.operation}): ${error.message}`, { ...error.details, item: index, operation: item.operation });
    }
  }
}

/** A Deny or a Review with its remediation (and a Review with its links): what the agent needs to go on. */
async function explained(submitted: SubmittedWrite, operation: GatedWriteOperation, context: OperationContext): Promise<SubmittedWrite> {
  const { answer } = submitted;
  if (answer.outcome !== 'pending_review' && answer.outcome !== 'denied') return submitted;
  const { organization } = context.caller;
  if (answer.items) {
    // A changeset: each held or denied item with its own remediation, and the changeset's from the items that decided it.
    const items = await Promise.all(
      answer.items.map(async (item) =>
        item.decision === 'allow'
          ? item
          : {
              ...item,
              remediation: await remediationOf(
                context.db,
                organization.id,
                { outcome: item.decision === 'deny' ? 'denied' : 'pending_review', decisionId: answer.decisionId, reason: item.reason, policyIds: item.policy_ids } as Extract<GateAnswer, { outcome: 'denied' }>,
                item.operation,
                { sharePolicyText: organization.sharePolicyText },
              ),
            },
      ),
    );
    submitted = { ...submitted, answer: { ...answer, items } };
  }
  const remediation = await remediationOf(context.db, organization.id, answer, operation.write.name, { sharePolicyText: organization.sharePolicyText });
  if (answer.outcome === 'denied') return { ...submitted, remediation };
  return { ...submitted, remediation, review: reviewLinks(context, answer.review.id) };
}
