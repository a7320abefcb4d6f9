import type { Queryable } from '../../db/database';
import { newId } from '../kit/ids';
import { contentDigest } from './chain';

/** Who did something: a key (agents, scripts), a person, or the system itself (expiry, the CLI). */
export type ActorRef =
  | { type: 'api_key'; id: string }
  | { type: 'user'; id: string }
  | { type: 'system'; id: string | null };

interface GateEvent {
  workflowId: string;
  reviewId?: string;
}

/**
 * How a person gave a verdict: where (console, decision link, Slack, personal access token), on which payload
 * (`payload_digest`, see domain/gate/reviews/signing.ts), and their passkey's assertion over it when signed.
 * Events before this was kept have none of it.
 */
export interface VerdictProvenance {
  via: 'console' | 'link' | 'slack' | 'api_token';
  payload_digest: string;
  passkey: { credential_id: string; authenticator_data: string; client_data_json: string; signature: string; signed_at: string } | null;
  /** A verdict signed with others in one batch: the digest of the reviews and payload digests the signature covered. */
  batch_digest?: string;
}

/** Every audit event the service records; `data` is typed per event. */
export type AuditEvent =
  | (GateEvent & {
      type: 'gate.decided';
      actor: ActorRef;
      /** `trust_window`: the window that let through a write the policy would have held (trw_…). */
      data: { operation: string; decision: string; reason: string; policyIds: string[]; interface: string; trust_window?: string };
    })
  | (GateEvent & {
      type: 'write.applied';
      actor: ActorRef;
      resourceType: string;
      resourceId: string;
      data: { operation: string };
    })
  | (GateEvent & { type: 'write.failed'; actor: ActorRef; data: { code: string; message: string } })
  /**
   * An applied write taken back. `workflowId` is the undo's own id (an agent's undo workflow, or undo_… for a
   * person's); `undoes` names the write undone, `operation` is that write's.
   */
  | (GateEvent & {
      type: 'write.undone';
      actor: ActorRef;
      resourceType: string;
      resourceId: string;
      /** outcome `undone`: a changeset (resource Changeset), its items recorded as changeset.item_undone. */
      /** `passkey`: a person's undo signed with their passkey (the statement: domain/gate/reviews/signing.ts undoStatement). */
      data: { operation: string; undoes: string; outcome: 'removed' | 'reverted' | 'restored' | 'undone'; version: number | null; passkey?: NonNullable<VerdictProvenance['passkey']> };
    })
  /**
   * One item of a changeset (domain/gate/changesets): its own decision, and once applied its write. The changeset
   * itself is recorded as gate.decided and write.applied (resource Changeset), so that webhooks and notifications
   * announce it as one event; its items are recorded with these, which no webhook relays.
   */
  | (GateEvent & {
      type: 'changeset.item_decided';
      actor: ActorRef;
      data: { changeset_id: string; item: number; operation: string; decision: string; reason: string; policyIds: string[] };
    })
  | (GateEvent & {
      type: 'changeset.item_applied';
      actor: ActorRef;
      resourceType: string;
      resourceId: string;
      data: { changeset_id: string; item: number; operation: string };
    })
  /** One item of a changeset taken back by the undo of the changeset (`undoes`: the changeset's workflow id). */
  | (GateEvent & {
      type: 'changeset.item_undone';
      actor: ActorRef;
      resourceType: string;
      resourceId: string;
      data: { changeset_id: string; undoes: string; item: number; operation: string; outcome: 'removed' | 'reverted' | 'restored'; version: number | null };
    })
  /** A reviewer rejected one item of a divisible changeset (the rest is applied once the review is approved). */
  | (GateEvent & { type: 'changeset.item_rejected'; actor: ActorRef; data: { changeset_id: string; item: number; operation: string; reason: string } })
  /**
   * A reviewer changed fields of one item of a held changeset as they approved it (`edit_id`: the version of the
   * changeset it made, recorded as review.edited); `decision` is the policy's on the item as edited.
   */
  | (GateEvent & {
      type: 'changeset.item_edited';
      actor: ActorRef;
      data: { changeset_id: string; item: number; operation: string; edit_id: string; fields: string[]; decision: string; reason: string; policyIds: string[] };
    })
  | (GateEvent & {
      type: 'review.approved' | 'review.denied';
      actor: ActorRef;
      data: { comment: string | null; approvals?: string[]; edit_id?: string } & VerdictProvenance;
    })
  /** One person's approval of a write that needs more than one: the review stays pending. */
  | (GateEvent & {
      type: 'review.approval_added';
      actor: ActorRef;
      data: { comment: string | null; approvals: number; required: number; edit_id?: string } & VerdictProvenance;
    })
  /** A reviewer's edit of a held write, and the policy's decision on the edited write (edt_…). */
  | (GateEvent & {
      type: 'review.edited';
      actor: ActorRef;
      data: { edit_id: string; fields: string[]; decision: string; reason: string; policyIds: string[] };
    })
  /** A person's approval opened a trust window (trw_…) for the key that made the write. */
  | (GateEvent & {
      type: 'trust_window.opened';
      actor: ActorRef;
      resourceType: 'trust_window';
      resourceId: string;
      data: { api_key_id: string; operation: string; match: Record<string, unknown>; max_uses: number; minutes: number; expires_at: string };
    })
  /**
   * A trust window closed: by a person (`reason: closed`, the person as actor), or by the write that took its last use
   * (`used_up`: that write's key as actor, its workflow id). An expiry is no event: `expires_at` says when.
   */
  | (Partial<GateEvent> & {
      type: 'trust_window.closed';
      actor: ActorRef;
      resourceType: 'trust_window';
      resourceId: string;
      data: { api_key_id: string; operation: string; uses: number; max_uses: number; reason: 'closed' | 'used_up' };
    })
  | (GateEvent & { type: 'review.expired'; actor: ActorRef; data: Record<string, never> })
  /**
   * A pending review withdrawn (domain/gate/reviews/withdraw.ts): nothing of it will be applied. The actor withdrew
   * it (the person who revoked the key, the key itself for a client ending its own connection, the CLI); `reason`
   * says why, and `api_key_id` names the key that made the write.
   */
  | (GateEvent & { type: 'review.withdrawn'; actor: ActorRef; data: { reason: 'key_revoked' | 'connection_ended'; api_key_id: string } })
  | (GateEvent & { type: 'review.escalated'; actor: ActorRef; data: { tier: string; notified: string[] } })
  | { type: 'policy.updated'; actor: ActorRef; data: { version: number; comment?: string } }
  | { type: 'policy.shadow_started' | 'policy.shadow_stopped'; actor: ActorRef; data: Record<string, never> }
  | { type: 'api_key.created' | 'api_key.revoked'; actor: ActorRef; resourceId: string; data: { label: string; access?: string; abilities?: string[]; expires_at?: string | null } }
  /** A client a person connected over OAuth (its key, key_…), its tokens refreshed, and its end. */
  | {
      type: 'oauth.connected';
      actor: ActorRef;
      resourceId: string;
      data: { client_id: string; client_name: string; identified_by: string; access: string; abilities: string[]; expires_at: string; renewed?: true };
    }
  | { type: 'oauth.refreshed'; actor: ActorRef; resourceId: string; data: { client_id: string; client_name: string } }
  | { type: 'oauth.disconnected'; actor: ActorRef; resourceId: string; data: { client_id: string; client_name: string; reason: string } }
  /** A key's own daily request budget or write caps set or changed (key_…), with what they were. */
  | { type: 'api_key.budget_changed'; actor: ActorRef; resourceId: string; data: { label: string; daily_request_budget: number | null; write_caps: Record<string, number>; before: { daily_request_budget: number | null; write_caps: Record<string, number> } } }
  | {
      type:
        | 'person.invited'
        | 'person.updated'
        | 'person.password_set'
        | 'person.password_reset'
        | 'person.sessions_ended'
        | 'person.signed_in'
        /** A set-password link that could not be emailed to its person: it was voided (`problem`: why not sent). */
        | 'person.password_link_unsent';
      actor: ActorRef;
      /** The person concerned (usr_…). */
      resourceId: string;
      data: Record<string, unknown>;
    }
  /**
   * A person approved a held write within a day of their password being reset by someone else (`reset_by`, an owner
   * or admin, at `reset_at`); `resourceId`: the person. The organization's owners are emailed of the first such
   * approval after a reset (domain/notify/owner-alerts.ts).
   */
  | (GateEvent & {
      type: 'person.approved_after_reset';
      actor: ActorRef;
      resourceId: string;
      data: { reset_by: string; reset_at: string; via: VerdictProvenance['via'] };
    })
  /**
   * Failed password attempts at a person's account started a wait (usr_…): from one address (`scope` address), or
   * from many together (`account`). The trail of older versions has `person.locked` instead.
   */
  | { type: 'person.sign_in_throttled'; actor: ActorRef; resourceId: string; data: { scope: 'address' | 'account'; failed_attempts: number; address: string } }
  /** A person's passkey registered (usr_…), with its public key for verifiers that work offline (docs/verify-audit-export.mjs). */
  | {
      type: 'person.passkey_added';
      actor: ActorRef;
      resourceId: string;
      /** public_key_spki: DER SubjectPublicKeyInfo, base64url; algorithm: its COSE number (-7 ES256). */
      data: { credential_id: string; public_key_spki: string; algorithm: number; rp_id: string; name: string };
    }
  | { type: 'person.passkey_removed'; actor: ActorRef; resourceId: string; data: { credential_id: string; name: string } }
  | { type: 'organization.updated'; actor: ActorRef; data: Record<string, unknown> }
  | {
      type: 'memory.corrected' | 'memory.forgotten';
      actor: ActorRef;
      /** The memory (mry_…). */
      resourceId: string;
      data: { api_key_id: string; reason: string } & Record<string, unknown>;
    }
  | { type: 'data.imported'; actor: ActorRef; data: Record<string, number> }
  /** A Slack user linked to a person (by that person, signed in); `resourceId`: the person (usr_…). */
  | {
      type: 'slack.linked';
      actor: ActorRef;
      resourceId: string;
      /** The Slack user by Slack's ids, and by the names its press gave (null: none). */
      data: { slack_team_id: string; slack_user_id: string; slack_team_domain: string | null; slack_user_name: string | null };
    }
  /**
   * A Slack user's link to a person (`resourceId`, usr_…) removed: by the person, replaced by a newer link, or with
   * every link of the organization when its Slack app's signing secret changed.
   */
  | {
      type: 'slack.unlinked';
      actor: ActorRef;
      resourceId: string;
      data: { slack_team_id: string; slack_user_id: string; reason: 'removed by the person' | 'replaced by a newer link' | 'signing secret changed' | 'password reset of an account someone else set up' };
    }
  | {
      type: 'webhook.created' | 'webhook.updated' | 'webhook.deleted' | 'webhook.disabled';
      actor: ActorRef;
      /** The endpoint (whk_…). */
      resourceId: string;
      data: Record<string, unknown>;
    };

export async function recordAudit(tx: Queryable, orgId: string, event: AuditEvent): Promise<void> {
  const { sql, values } = auditInsert(orgId, event);
  await tx.query(sql, values);
}

const auditColumns = 'id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data, digest';

/**
 * The INSERT of an audit record, to send alone or as a data-modifying CTE of the statement that makes the change
 * it records (one round trip for both). Its parameters are numbered from `first`; with `after`, the record is
 * inserted once for each row of that CTE, so none when the change did not happen.
 */
export function auditInsert(orgId: string, event: AuditEvent, { first = 1, after }: { first?: number; after?: string } = {}): { sql: string; values: unknown[] } {
  const gate = 'workflowId' in event ? event : undefined;
  const content = {
    id: newId('evt'),
    org_id: orgId,
    type: event.type,
    actor_type: event.actor.type,
    actor_id: event.actor.id,
    workflow_id: gate?.workflowId ?? null,
    review_id: gate?.reviewId ?? null,
    resource_type: 'resourceType' in event ? event.resourceType : null,
    resource_id: 'resourceId' in event ? event.resourceId : null,
    // As the database will hold it (jsonb of the JSON text): what the digest, and a later check of it, read.
    data: JSON.parse(JSON.stringify(event.data)) as unknown,
  };
  // The content's digest goes in with the event; the audit ledger's sealer chains it (audit-ledger.ts).
  const values = [
    content.id,
    orgId,
    content.type,
    content.actor_type,
    content.actor_id,
    content.workflow_id,
    content.review_id,
    content.resource_type,
    content.resource_id,
    JSON.stringify(event.data),
    contentDigest(content),
  ];
  // Typed, since a SELECT list does not take its types from the columns it fills.
  const types = values.map((_, index) => (index === values.length - 1 ? 'bytea' : index === values.length - 2 ? 'jsonb' : 'text'));
  const row = types.map((type, index) => `$${first + index}::${type}`).join(', ');
  return { sql: `INSERT INTO audit_events (${auditColumns}) SELECT ${row}${after ? ` FROM ${after}` : ''}`, values };
}

export const cliActor: ActorRef = { type: 'system', id: 'cli' };
