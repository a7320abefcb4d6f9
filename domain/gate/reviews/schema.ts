import { z } from 'zod';
import { instantField, recordId, text, utcInstant } from '../../kit/fields';
import { pageInput } from '../../kit/pagination';
import { reviewStatuses } from './state';
import { withdrawalReasons } from './withdraw';

// The review on the wire: what REST, MCP and the console answer about a held write, and the inputs that ask for it.

/** Why a write a person approved could not be applied. */
const applyFailure = z.object({
  code: z.string().describe('An error code as in error answers, e.g. conflict, not_found, validation_failed'),
  message: z.string().describe('What went wrong, for a person to read'),
});

/** Where a person gave a verdict. */
const verdictChannel = z
  .enum(['console', 'link', 'slack', 'api_token'])
  .describe('Where the person gave it: the console, a decision link from a notification, a Slack button, or a personal access token');

export const reviewSchema = z
  .object({
    id: recordId('review', 'rev', 'use it as {id} in /v1/reviews/{id}; a person approves or denies it at /v1/reviews/{id}/approve or /deny'),
    status: z
      .enum(reviewStatuses)
      .describe(
        'pending (waiting for a person), approved (the write ran or is running), denied (nothing was written), expired (nobody decided in time; nothing was written), withdrawn (the key that made it was revoked, or its app disconnected, while it waited; nobody can decide it and nothing was written: see withdrawn)',
      ),
    operation: z.string().describe('The held write, e.g. tasks.create'),
    proposed: z.record(z.string(), z.unknown()).describe('The write as it was submitted'),
    resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the write'),
    before: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('For updates and deletes: the record as it was when the policy decided (compare with resource); null for creates'),
    policy: z
      .object({
        decision_id: z.string().describe('The id of the policy decision that held the write (dec_…)'),
        reason: z.string().describe('Why the policy held the write'),
        policy_ids: z.array(z.string()).describe('The policies that held it'),
        policy_version: z.number().int().describe("The version of the organization's policy set that decided; it increases with every policy change"),
        errors: z.array(z.string()).describe('Policies that could not be evaluated for this write, with the reason'),
      })
      .describe("The policy's decision"),
    submitted_by: z
      .object({
        api_key_id: z.string().describe('The API key that submitted the write (key_…)'),
        api_key_label: z.string().describe("The key's label, as given when it was created; a connected app's is the name it gave itself"),
        api_key_label_verified: z
          .boolean()
          .describe("false: the submitter is an app connected over OAuth, and its label is the name the app gave itself, which nobody verified; true: a person wrote it"),
        interface: z.enum(['rest', 'mcp']).describe('rest or mcp'),
      })
      .describe('Which key submitted the write, and through which interface'),
    created_at: instantField('When the write was held for review'),
    expires_at: instantField('The deadline', 'after it the review expires and the write never runs'),
    escalation: z
      .object({
        to: z.string().describe('The tier told because the review waited too long: admins, then owners'),
        at: instantField('When it escalated'),
      })
      .nullable()
      .describe("Whether the review waited past the organization's escalation wait, and whom it was escalated to; null: not escalated"),
    edit: z
      .object({
        id: z.string().describe('The edit (edt_…); send it as seen_edit to approve this version'),
        fields: z.array(z.string()).describe("The fields whose values the reviewer changed from the agent's version"),
        by: z
          .object({ user_id: z.string().describe('The reviewer who edited (usr_…)'), email: z.string().describe("The reviewer's sign-in email") })
          .describe('The reviewer who edited the write'),
        at: instantField('When the reviewer edited the write'),
        input: z.record(z.string(), z.unknown()).describe('The write as the reviewer edited it: what runs on approval (proposed keeps the agent\'s version)'),
        resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the edited write'),
        decision: z
          .object({
            decision: z.enum(['allow', 'review']).describe("The policy's decision on the edited write"),
            reason: z.string().describe('Why'),
            policy_ids: z.array(z.string()).describe('The policies that decided'),
            policy_version: z.number().int().describe('The version of the policy set that decided'),
          })
          .describe("The policy's decision on the edited write, with the agent's key as the principal and the editor in the context"),
      })
      .nullable()
      .describe('A reviewer\'s edit of the held write, which is what runs once approved; null when nobody edited it'),
    approvals: z
      .object({
        required: z.number().int().describe('How many distinct people must approve before the write runs (the policy\'s @approvals; 1 by default)'),
        given: z
          .array(
            z.object({
              user_id: z.string().describe('The person who approved (usr_…)'),
              email: z.string().describe("The person's sign-in email"),
              at: instantField('When they approved'),
              comment: z.string().nullable().describe('Their comment; null when none'),
              via: verdictChannel.nullable().describe('Where the person gave it; null for approvals given before this was kept'),
              passkey: z.boolean().describe("Whether the approval was signed with the person's passkey (the audit trail keeps the signature)"),
            }),
          )
          .describe('Who has approved so far, oldest first; one deny ends the review whatever the count'),
      })
      .describe('The approvals the write needs and has'),
    decided_at: instantField('When a person decided, or when the expiry or the withdrawal was recorded', 'null while pending').nullable(),
    decided_by: z
      .object({
        user_id: z.string().describe('The id of the person who decided (usr_…)'),
        email: z.string().describe("The person's sign-in email"),
      })
      .nullable()
      .describe('The person who decided; null while pending and for expired and withdrawn reviews'),
    decided_via: verdictChannel
      .nullable()
      .describe('Where the deciding verdict was given; null while pending, for expired and withdrawn reviews, and for those decided before this was kept'),
    withdrawn: z
      .object({
        reason: z
          .enum(withdrawalReasons)
          .describe('key_revoked: the API key that made the write was revoked; connection_ended: the app (an OAuth connection) that made it was disconnected, by a person or by the app itself'),
        by: z
          .object({
            type: z.enum(['user', 'api_key', 'system']).describe('user: a person; api_key: the connected app itself (it revoked its access, or replayed a token); system: the operator\'s CLI'),
            id: z.string().nullable().describe('The person (usr_…), the key (key_…), or cli'),
            name: z.string().nullable().describe("The person's email or the key's label; null for the system"),
          })
          .describe('Who withdrew it'),
        at: instantField('When it was withdrawn'),
      })
      .nullable()
      .describe('Why and by whom a withdrawn review was withdrawn; null unless its status is withdrawn'),
    comment: z.string().nullable().describe("The person's comment; null when none"),
    applied_at: instantField('When the approved write ran', 'null until it has run').nullable(),
    result: z.unknown().describe('What the approved write produced (the created record, say); null until it ran'),
    failure: applyFailure.nullable().describe('Why an approved write could not be applied (it conflicts with the data now, say); null otherwise'),
    workflow_id: z.string().describe('The Temporal workflow that holds the write; once applied, the id to undo it by'),
    undone_by: z.string().nullable().describe("The undo that took the applied write back (the undo's workflow id, or undo_… for a person's); null otherwise"),
    undone_at: instantField('When the applied write was undone', 'null unless it was').nullable(),
    undoable_until: instantField('Until when the applied write may be undone', "null when it cannot be (not applied, undone already, past the organization's window, or a write that cannot be undone)").nullable(),
    changeset: z
      .object({
        id: z.string().describe('The changeset (chs_…)'),
        mode: z.enum(['all_or_nothing', 'divisible']).describe('all_or_nothing: approve or deny it whole; divisible: items may also be rejected one by one'),
        items: z
          .array(
            z.object({
              index: z.number().int().describe('The item, from 0, in the order the agent sent'),
              ref: z.string().nullable().describe('Its ref, which later items name as "$ref:<ref>"'),
              operation: z.string().describe('The write, e.g. tasks.create'),
              input: z.record(z.string(), z.unknown()).describe('Its input as sent ($ref:… kept)'),
              references: z
                .array(
                  z.object({
                    field: z.string().describe('Where the input names it: a field, or a path into one (attendee_ids.1)'),
                    ref: z.string().describe('The ref named ("$ref:<ref>" in the input)'),
                    item: z.number().int().describe('The earlier item that makes the record (its index, from 0)'),
                    resource_type: z.string().describe("That item's record type: Project, Task, …"),
                  }),
                )
                .describe(
                  "Each record of an earlier item this item's input names by ref: resource and resource_id hold the id that record is proposed (or was written) under, this says which item makes it",
                ),
              decision: z.enum(['allow', 'review', 'deny']).describe("The policy's decision on this item, as if alone"),
              reason: z.string().describe('Why'),
              policy_ids: z.array(z.string()).describe('The rules that decided'),
              approvals_required: z.number().int().describe('The approvals this item alone would need'),
              resource_type: z.string().describe('Task, Project, …'),
              resource_id: z.string().describe("The record's id: as proposed while held, as written once applied"),
              resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the write'),
              before: z.record(z.string(), z.unknown()).nullable().describe('For updates and deletes: the record before'),
              verdict: z.enum(['approved', 'rejected']).nullable().describe("A reviewer's verdict on this item (divisible changesets); null: follows the whole"),
              verdict_reason: z.string().nullable().describe('Why the item was rejected'),
              edit: z
                .object({
                  fields: z.array(z.string()).describe("The fields whose values the reviewer changed from the agent's item"),
                  by: z
                    .object({ user_id: z.string().describe('The reviewer who edited (usr_…)'), email: z.string().describe("The reviewer's sign-in email") })
                    .describe('The reviewer who changed them'),
                  at: instantField('When they changed them'),
                  input: z.record(z.string(), z.unknown()).describe("The item as edited: what is applied on approval (input keeps the agent's)"),
                  resource: z.record(z.string(), z.unknown()).describe('The record as it would be after the edited item'),
                  decision: z.enum(['allow', 'review']).describe("The policy's decision on the edited item, as if alone"),
                  reason: z.string().describe('Why'),
                  policy_ids: z.array(z.string()).describe('The rules that decided'),
                })
                .nullable()
                .describe("A reviewer's edit of this item, part of the changeset's edit (the review's edit, send its id as seen_edit); null when not edited"),
              result: z.unknown().describe('The record as written, once applied'),
            }),
          )
          .describe('Every item, in order'),
      })
      .nullable()
      .describe('When the review holds a changeset (operation changesets.submit): its every item with its own decision; null for a single write'),
    trust_window: z
      .object({
        id: z.string().describe('The window (trw_…); close it with POST /v1/trust-windows/{id}/close'),
        state: z.enum(['open', 'expired', 'used_up', 'closed']).describe('open, expired, used_up or closed'),
        match: z.record(z.string(), z.unknown()).describe('The attribute values a write must have to be let through'),
        uses: z.number().int().describe('Writes it has let through'),
        max_uses: z.number().int().describe('Writes it lets through at most'),
        expires_at: instantField('When it closes by itself'),
      })
      .nullable()
      .describe("The trust window the approval that ended this review opened for the key that made the write (same operation and match values, without review); null when none, and always to API keys"),
  })
  .describe('A gated write held for a person to approve or deny');

export type Review = z.infer<typeof reviewSchema>;

/** The queue's filters, shared by its list and its count: a review matches when it passes every one given. */
export const reviewFilters = {
  status: z.enum(reviewStatuses).optional().describe('Only reviews with this status'),
  api_key_id: text({ max: 100 }).optional().describe('Only writes submitted by this API key (key_…)'),
  operation: text({ max: 100 }).optional().describe('Only this operation, e.g. tasks.update'),
  held_before: utcInstant
    .optional()
    .describe('Only writes held before this instant (RFC 3339, e.g. 2026-03-02T09:30:00Z): send the time an hour ago for those waiting longer than an hour'),
  expires_before: utcInstant
    .optional()
    .describe('Only reviews whose deadline falls before this instant (RFC 3339): with status pending and the time an hour from now, those that expire within the hour'),
};

export const listReviewsInput = z.strictObject({ ...reviewFilters, ...pageInput });

export const countReviewsInput = z.strictObject(reviewFilters);

export type ReviewFilters = z.infer<typeof countReviewsInput>;

export const decideReviewInput = z.strictObject({
  id: text({ max: 100 }).describe('The review id'),
  comment: text({ max: 2000 }).optional().describe('Why, for the record'),
});

const base64url = (max: number, what: string) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, 'base64url')
    .describe(what);

/** A passkey's WebAuthn assertion over an approval's challenge (the console gets it from the authenticator). */
export const passkeyAssertionInput = z
  .strictObject({
    credential_id: base64url(1400, "The passkey's credential id (base64url)"),
    authenticator_data: base64url(4096, 'The authenticator data it signed (base64url)'),
    client_data_json: base64url(4096, "The client data JSON it signed, whose challenge is the approval's (base64url)"),
    signature: base64url(2048, 'The signature over the authenticator data and the SHA-256 of the client data (base64url)'),
    signed_at: z.iso.datetime().describe('The time the challenge committed to, exactly as the challenge was asked for (RFC 3339, UTC)'),
  })
  .describe(
    "Your passkey's signature over this approval, when the organization needs approvals signed: the challenge is base64url(SHA-256(\"gatehouse approval v1\\nreview <id>\\npayload sha256:<payload digest>\\nverdict approved\\nat <signed_at>\")). Without it such an organization refuses the approval (403 passkey_required, details.finish_url); one that does not verify is refused with 403 passkey_failed",
  );

/** An approval names the version it approves when a reviewer edited the write (the review's edit.id). */
export const approveReviewInput = decideReviewInput.extend({
  passkey: passkeyAssertionInput.optional(),
  seen_edit: text({ max: 100 })
    .optional()
    .describe("The edit you saw (the review's edit.id) when a reviewer edited the write; leave it out to approve the agent's version. 409 when the review holds another version now"),
});

export const followReviewInput = z.strictObject({ review_id: text({ max: 100 }).describe('The review id from the held write') });

/** Where a held write stands, as the agent that submitted it follows it. */
export const reviewProgressSchema = z.object({
  id: z.string().describe('The review id'),
  status: z.enum(reviewStatuses).describe('Where the review stands'),
  operation: z.string().describe('The held write, e.g. tasks.create'),
  reason: z.string().describe('Why the policy held it'),
  expires_at: z.string().describe('When it expires if nobody decides (RFC 3339)'),
  edited: z
    .object({
      fields: z.array(z.string()).describe('The fields the reviewer changed'),
      input: z.record(z.string(), z.unknown()).describe('The write as the reviewer edited it; what runs (or ran) instead of yours'),
    })
    .nullable()
    .describe('Set when a reviewer changed your write before approving it: result is then the edited write\'s record'),
  approvals_required: z.number().int().describe('How many distinct people must approve before the write runs'),
  approvals_given: z.number().int().describe('How many have approved so far'),
  decided_at: z.string().nullable().describe('When a person decided (or the review expired or was withdrawn), or null'),
  withdrawn_reason: z
    .enum(withdrawalReasons)
    .nullable()
    .describe('Why a withdrawn review was withdrawn (key_revoked, connection_ended); null unless its status is withdrawn'),
  comment: z.string().nullable().describe("The person's comment, or null"),
  applied: z.boolean().describe('True once the approved write has run'),
  result: z.unknown().describe('The record the approved write produced, once applied'),
  failure: applyFailure.nullable().describe('Why an approved write could not be applied, or null'),
  write: z.string().describe('The write\'s id (its workflow id): once applied, undo it with POST /v1/undo (undo_write) and read it at /v1/writes/{write}'),
  undone_by: z.string().nullable().describe('The undo that took the applied write back, or null'),
});

