import { z } from 'zod';
import { newId } from '../../domain/kit/ids';
import { appliedWriteAsSeenByKey, readAppliedWrite, readsEveryWrite, undoWrites } from '../../domain/gate/undo';
import { undoneSchema, undoWriteInput } from '../../domain/gate/undo-write';
import { findGatedWrite, undoWrite } from '../../domain/resources';
import { reviewerRoles, rolesThat, type ApiKeyActor, type PersonActor } from '../../domain/identity/actors';
import { passkeyAssertionInput } from '../../domain/gate/reviews/schema';
import { undoChallenge } from '../../domain/gate/reviews/signing';
import { verifySignedAssertion } from '../../domain/identity/passkey-assertions';
import { relyingPartyOf } from '../../domain/identity/passkeys';
import { AppError } from '../../domain/kit/errors';
import { gatedOperation } from './define';
import { signingChallengeFor, signingChallengeSchema } from './review-passkeys';
import { defineOperation } from './operation';

// Applied gated writes: read one (was it undone?), and undo one, as an agent (a gated write of its own) or as a person.

const appliedWriteSchema = z
  .object({
    write: z.string().describe("The write's id: its workflow id, as its answer and its audit events carry it"),
    operation: z.string().describe('What it was (tasks.update)'),
    resource_type: z.string().describe('The kind of record it wrote (Task)'),
    resource_id: z.string().describe('The record'),
    applied_at: z.string().describe('When it was applied (RFC 3339, UTC)'),
    api_key_id: z.string().nullable().describe('The key that submitted it'),
    review_id: z.string().nullable().describe('The review a person approved it in, when it was held'),
    result: z.unknown().describe('The record as the write left it'),
    undone_by: z.string().nullable().describe("The undo that took it back (the undo's workflow id, or undo_… for a person's); null otherwise"),
    undone_at: z.string().nullable().describe('When it was undone; null otherwise'),
    undoable_until: z
      .string()
      .nullable()
      .describe("Until when it may be undone; null when it cannot be (undone already, past the organization's window, or a write that cannot be undone)"),
  })
  .describe('An applied gated write');

export const getAppliedWriteOperation = defineOperation({
  kind: 'read',
  name: 'writes.get',
  tool: 'get_applied_write',
  family: 'writes',
  summary: 'Read an applied write',
  description:
    "One applied gated write (or changeset) by its workflow_id: what it did, the record it left, and whether it was undone (undone_by) or until when it may be (undoable_until). A key reads the writes it submitted (any, with reviews.read); people who read the audit trail read any.",
  method: 'GET',
  path: '/writes/:write',
  list: false,
  input: undoWriteInput,
  output: appliedWriteSchema,
  // Like reviews.status: any key follows its own writes.
  access: { apiKey: { ability: null }, person: { roles: rolesThat.readAudit } },
  handler: async (input, { db, caller }) => {
    const key = caller.actor.kind === 'api_key' ? (caller.actor as ApiKeyActor) : undefined;
    const view = await readAppliedWrite(db, caller.organization.id, input.write, key && !readsEveryWrite(key.abilities) ? { apiKeyId: key.keyId } : {});
    return key ? appliedWriteAsSeenByKey(view, key.keyId) : view;
  },
});

const undoGated = gatedOperation({
  write: undoWrite,
  tool: 'undo_write',
  summary: 'Undo an applied write',
  description:
    "Takes back an applied gated write, named by its workflow_id: a created record is removed, an updated one reverted to its fields before, a deleted one restored with its id. Only while the record is as the write left it (else 409 conflict with the changed fields and the current version; a key undoing another key's write without reviews.read, which cannot read that write, is told only that its record changed), within the organization's undo window (7 days by default), and once. The key needs the write ability of the record's family. The policy decides it as Action::\"writes.undo\", the resource being the record as the undo would leave it and context.undoes the write undone; the default policy holds undos for review. A changeset's workflow_id undoes every item it applied, in reverse order, in one transaction: all or nothing (409 listing each item whose record changed since, in details.items); the key needs the write ability of every item's family; the policy sees resource type Changeset (resource.items: each item's operation, kind, resource_type, resource_id and restored, the record as the undo leaves it) and context.undoes with kind \"changeset\" and items; the answer's outcome is undone, with items.",
  method: 'POST',
  path: '/undo',
  output: undoneSchema,
  successStatus: 200,
});

/** The undo's ability depends on the write it undoes (its family's write ability), checked as the gate proposes it. */
export const undoWriteOperation = { ...undoGated, access: { apiKey: { ability: null } } };

export const undoAppliedWriteOperation = defineOperation({
  kind: 'person_action',
  name: 'writes.undo_now',
  family: 'writes',
  summary: 'Undo an applied write (a person)',
  description:
    "A person takes back an applied gated write at once (not decided by the agents' policy): a created record is removed, an updated one reverted, a deleted one restored with its id. Only while the record is as the write left it (409 conflict with what changed otherwise), within the organization's undo window, and once (409). A changeset's workflow_id undoes every item it applied, in reverse order, in one transaction: all or nothing (409 listing each item whose record changed since). For people with the reviewer role or above; recorded in the audit trail as write.undone with the person as actor (a changeset's items also as changeset.item_undone).",
  method: 'POST',
  path: '/writes/:write/undo',
  input: undoWriteInput.extend({
    passkey: passkeyAssertionInput
      .optional()
      .describe(
        'Your passkey\'s signature over this undo, where the organization needs approvals signed: the challenge from writes.undo_passkey_challenge, base64url(SHA-256("gatehouse undo v1\\nwrite <write>\\nat <signed_at>")). Without it such an organization refuses the undo (403 passkey_required); one that does not verify is refused with 403 passkey_failed',
      ),
  }),
  output: undoneSchema,
  refusals: ['passkey_required', 'passkey_failed'],
  access: { person: { roles: reviewerRoles } },
  handler: async (input, { db, caller, publicUrl }) => {
    const person = caller.actor as PersonActor;
    const signer = { orgId: caller.organization.id, userId: person.userId };
    if (!input.passkey && caller.organization.approvalsNeedPasskey) {
      throw new AppError(
        'passkey_required',
        `this organization needs approvals, and a person's undo, signed with their passkey, which ${person.credential.type === 'session' ? 'an undo without one' : 'a personal access token'} cannot carry; undo it in the console`,
      );
    }
    const [undone] = await db.transaction(async (tx) => {
      if (input.passkey) await verifySignedAssertion(tx, signer, input.passkey, undoChallenge(input.write, input.passkey.signed_at), relyingPartyOf(publicUrl));
      return undoWrites(tx, caller.organization.id, [input.write], { actor: { type: 'user', id: person.userId }, undoId: newId('undo'), passkey: input.passkey }, findGatedWrite);
    });
    return undone;
  },
});

export const undoPasskeyChallengeOperation = defineOperation({
  kind: 'person_action',
  name: 'writes.undo_passkey_challenge',
  family: 'writes',
  summary: "The challenge a person's passkey signs to undo an applied write",
  description:
    'For an organization that needs approvals signed: the WebAuthn challenge over undoing this applied write now, and your passkeys to sign it with. Changes nothing; the undo then carries the assertion as `passkey`.',
  method: 'POST',
  path: '/writes/:write/undo/passkey-challenge',
  input: undoWriteInput,
  output: signingChallengeSchema('"gatehouse undo v1\\nwrite <write>\\nat <signed_at>"'),
  access: { person: { roles: reviewerRoles } },
  interfaces: ['console'],
  handler: async (input, { db, caller, publicUrl }) => {
    const person = caller.actor as PersonActor;
    // The write must be one of the organization's (404 otherwise), as the undo would find it.
    await readAppliedWrite(db, caller.organization.id, input.write, {});
    const signer = { orgId: caller.organization.id, userId: person.userId };
    return signingChallengeFor(db, signer, publicUrl, (signedAt) => undoChallenge(input.write, signedAt));
  },
});

export const writeOperations = [getAppliedWriteOperation, undoWriteOperation, undoAppliedWriteOperation, undoPasskeyChallengeOperation];
