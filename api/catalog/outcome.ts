import { errorStatus, type AppError } from '../../domain/kit/errors';
import type { Page } from '../../domain/kit/pagination';
import type { Operation } from './operation';
import type { SubmittedWrite } from './submit-write';

/** How a call ended, whatever the interface: each interface renders it in its own wire format. */
export type CallOutcome =
  /** A read's record, or what a person's action produced. */
  | { kind: 'data'; data: unknown }
  /** One page of a list. */
  | { kind: 'page'; page: Page<unknown> }
  /** A gated write the policy decided: applied, held for review, denied, or failed in the workflow. */
  | { kind: 'gated'; submitted: SubmittedWrite }
  /** Refused before anything ran: the caller, its access, its limits or its input. */
  | { kind: 'refused'; error: AppError }
  /** Failed while it ran (a record not found, the gate not answering in time, a fault of ours). */
  | { kind: 'failed'; error: AppError };

/** The HTTP status of the outcome, as REST answers it. */
export function statusOf(operation: Operation | undefined, outcome: CallOutcome): number {
  switch (outcome.kind) {
    case 'data':
    case 'page':
      return 200;
    case 'refused':
    case 'failed':
      return outcome.error.status;
    case 'gated': {
      const { answer } = outcome.submitted;
      if (answer.outcome === 'applied') return operation?.kind === 'gated_write' ? operation.successStatus : 200;
      if (answer.outcome === 'pending_review') return 202;
      if (answer.outcome === 'denied') return errorStatus.policy_denied;
      return errorStatus[answer.code];
    }
  }
}

/** One word for how the call ended, as the call log keeps it: ok, applied, pending_review, policy_denied, or the error code. */
export function codeOf(outcome: CallOutcome): string {
  switch (outcome.kind) {
    case 'data':
    case 'page':
      return 'ok';
    case 'refused':
    case 'failed':
      return outcome.error.code;
    case 'gated': {
      const { answer } = outcome.submitted;
      if (answer.outcome === 'denied') return 'policy_denied';
      return answer.outcome === 'failed' ? answer.code : answer.outcome;
    }
  }
}
