import type { ErrorCode } from '../kit/errors';

// What crosses Temporal between the api, the gated-write workflow and its activities, as JSON. The workflow
// imports this file at run time (for the failure types at the end), so it imports nothing but types.

export type Interface = 'rest' | 'mcp';

/** A gated write as the api hands it to the workflow. */
export interface GatedWriteRequest {
  orgId: string;
  orgSlug: string;
  /** The gated write's name, which is also the policy's action: `tasks.create`. */
  operation: string;
  input: unknown;
  interface: Interface;
  apiKey: {
    id: string;
    label: string;
    access: 'read' | 'read_write';
    abilities: string[];
    /**
     * Whether a person wrote the label (a key), or a connected app named itself (OAuth: false). Absent from requests
     * made before it was added: read from the key then.
     */
    labelVerified?: boolean;
  };
}

export interface RecordedDecision {
  decisionId: string;
  /**
   * The policy's decision; `refused` when the write's key was revoked before it was decided, or when it was Review
   * but the organization's review queue was full (`refusal` says which).
   */
  decision: 'allow' | 'review' | 'deny' | 'refused';
  /** Why a `refused` decision was refused, as the error code its caller is answered. */
  refusal?: 'unauthorized' | 'review_queue_full';
  reason: string;
  policyIds: string[];
  policyVersion: number;
  review?: { id: string; expiresAt: string };
}

/** Settings of the worker that the workflow needs: how often a held write re-reads its review. */
export interface DecisionWithSettings extends RecordedDecision {
  reviewRecheckMs: number;
}

/**
 * A write decided and, for an Allow, applied in one step: the decision, and the write's result or the refusal the
 * data gave it after the policy allowed it (a clash the policy could not see).
 */
export interface DecidedWrite extends RecordedDecision {
  applied?: { result: unknown } | { refusal: WriteRefusal & { message: string } };
}

/** The first answer a gated write gets: what the caller of the REST route or MCP tool is told. */
export type GateAnswer =
  | { outcome: 'applied'; decisionId: string; reason: string; policyIds: string[]; result: unknown }
  | {
      outcome: 'pending_review';
      decisionId: string;
      reason: string;
      policyIds: string[];
      review: { id: string; expiresAt: string };
      /** For a changeset: every item's decision. */
      items?: ChangesetItemOutcome[];
    }
  | { outcome: 'denied'; decisionId: string; reason: string; policyIds: string[]; items?: ChangesetItemOutcome[] }
  | { outcome: 'failed'; code: ErrorCode; message: string; details?: Record<string, unknown> };

/** How one item of a changeset was decided (and, once applied, what it wrote): in a changeset's answers. */
export interface ChangesetItemOutcome {
  index: number;
  ref: string | null;
  operation: string;
  decision: 'allow' | 'review' | 'deny';
  reason: string;
  policy_ids: string[];
  resource_type: string;
  /** The record's id: the one the changeset would create while it is proposed, the written one once applied. */
  resource_id: string;
  /** The record as written, once applied; null before (or when a reviewer rejected the item). */
  result: unknown;
  /** A reviewer's verdict on the item of a divisible changeset (null: none, the item follows the whole). */
  verdict?: 'approved' | 'rejected' | null;
  /** For a held or denied item, in the api's answer: the rules that decided it and what to do next. */
  remediation?: Record<string, unknown>;
}

/** A changeset decided and, when every item is allowed, applied in one step (the changeset workflow's first). */
export interface DecidedChangeset extends RecordedDecision {
  changesetId: string;
  items: ChangesetItemOutcome[];
  applied?: { result: unknown };
}

/** What a person decided of a held write. */
export type ReviewVerdict = 'approved' | 'denied';

export type ReviewResolution =
  | { status: 'approved'; result: unknown }
  | { status: 'approved'; failure: { code: ErrorCode; message: string } }
  | { status: 'denied' }
  | { status: 'expired' }
  /** The key that made the write was revoked (or its connection ended) while it waited: nothing was applied. */
  | { status: 'withdrawn' };

/** What the workflow returns: its first answer and, for a held write, how the review ended. */
export interface GatedWriteResult {
  answer: GateAnswer;
  resolution?: ReviewResolution;
}

/**
 * The type of the ApplicationFailure an activity raises when it refuses a write: final, never retried. Its
 * first detail is a WriteRefusal. Every other failure of an activity is a fault, which Temporal retries.
 */
export const writeRefusedFailure = 'WriteRefused';

export interface WriteRefusal {
  code: ErrorCode;
  details?: Record<string, unknown>;
}

/** The failure of an activity asked to apply a held write whose review no person approved: it never runs. */
export const reviewNotApprovedFailure = 'ReviewNotApproved';
