import { z } from 'zod';
import { recordVerdict } from '../../domain/gate/reviews/verdicts';
import { assertSignedAmongNamed, batchLimit, recordBatchVerdict } from '../../domain/gate/reviews/batch';
import { asSeenByKey, followReview, getReview, listReviews } from '../../domain/gate/reviews/reads';
import { countReviews, reviewFilterChoices } from '../../domain/gate/reviews/filters';
import {
  approveReviewInput,
  countReviewsInput,
  decideReviewInput,
  followReviewInput,
  listReviewsInput,
  passkeyAssertionInput,
  reviewProgressSchema,
  reviewSchema,
  type Review,
} from '../../domain/gate/reviews/schema';
import { reviewWebUrl } from '../../domain/gate/links';
import { editFieldsInput, itemVerdictsInput } from '../../domain/gate/changesets/schema';
import { text } from '../../domain/kit/fields';
import { trustTermsInput } from '../../domain/gate/trust-windows';
import { findGatedWrite } from '../../domain/resources';
import { signedReviewSchema, verifyApprovalPasskey } from './review-passkeys';
import { invalidFields } from '../../domain/kit/errors';
import { reviewerRoles, roles, type ApiKeyActor, type Caller, type PersonActor } from '../../domain/identity/actors';
import { defineOperation, type OperationContext } from './operation';

// Every person sees the queue; only reviewers and above decide (members see, and do not decide).
const readAccess = { apiKey: { ability: 'reviews.read' as const }, person: { roles } };

const seenBy = (review: Review, caller: Caller) => (caller.actor.kind === 'api_key' ? asSeenByKey(review, caller.actor.keyId) : review);

/** How long an approve or deny waits for the held write's workflow to finish before answering. */
const outcomeWaitMs = 20_000;

export const listReviewsOperation = defineOperation({
  kind: 'read',
  name: 'reviews.list',
  tool: 'list_reviews',
  family: 'reviews',
  summary: 'List the review queue',
  description:
    'Lists gated writes held for review, newest first; filter by status (pending to see the queue), key, operation, how long ago they were held (held_before) and when they expire (expires_before). Paginated.',
  method: 'GET',
  path: '/reviews',
  list: true,
  input: listReviewsInput,
  output: z.array(reviewSchema),
  access: readAccess,
  handler: async (input, { db, caller }) => {
    const page = await listReviews(db, caller.organization.id, input);
    return { ...page, items: page.items.map((review) => seenBy(review, caller)) };
  },
});

export const countReviewsOperation = defineOperation({
  kind: 'read',
  name: 'reviews.count',
  family: 'reviews',
  summary: 'Count the review queue',
  description: 'The exact number of reviews that pass the filters reviews.list takes (without its paging): the queue\'s "1,000 pending".',
  method: 'GET',
  path: '/reviews/count',
  list: false,
  input: countReviewsInput,
  output: z.object({ count: z.number().int().describe('How many reviews pass the filters') }),
  access: { person: { roles } },
  interfaces: ['console'],
  handler: async (input, { db, caller }) => ({ count: await countReviews(db, caller.organization.id, input) }),
});

export const reviewFilterChoicesOperation = defineOperation({
  kind: 'read',
  name: 'reviews.filter_choices',
  family: 'reviews',
  summary: 'What the review queue can be filtered by',
  description: 'Every API key and operation with a review in the organization, whatever its status, each with how many of its reviews wait now.',
  method: 'GET',
  path: '/reviews/filter-choices',
  list: false,
  input: z.strictObject({}),
  output: z.object({
    keys: z
      .array(
        z.object({
          api_key_id: z.string().describe('The key (key_…)'),
          label: z.string().describe("The key's label"),
          pending: z.number().int().describe('Its writes waiting now'),
        }),
      )
      .describe('The keys that submitted a held write, by label'),
    operations: z
      .array(z.object({ operation: z.string().describe('e.g. tasks.update'), pending: z.number().int().describe('Its writes waiting now') }))
      .describe('The operations held for review, by name'),
  }),
  access: { person: { roles } },
  interfaces: ['console'],
  handler: (_input, { db, caller }) => reviewFilterChoices(db, caller.organization.id),
});

export const getReviewOperation = defineOperation({
  kind: 'read',
  name: 'reviews.get',
  tool: 'get_review',
  family: 'reviews',
  summary: 'Read one review',
  description: "One held write: what it would do, the policy's decision and reason, who submitted it, when it expires, and how it ended.",
  method: 'GET',
  path: '/reviews/:id',
  list: false,
  input: z.strictObject({ id: z.string().max(100).describe('The review id') }),
  output: reviewSchema,
  access: readAccess,
  handler: async (input, { db, caller }) => seenBy(await getReview(db, caller.organization.id, input.id), caller),
});


export const reviewStatusOperation = defineOperation({
  kind: 'read',
  name: 'reviews.status',
  tool: 'get_review_status',
  family: 'reviews',
  summary: 'Follow a held write',
  description:
    'The state of a write held for review: pending (a person has not decided yet), approved (with the record written, or why it could not be), denied, expired, or withdrawn (the key that made it was revoked while it waited; nothing was written). Use the review id a held write returned.',
  method: 'GET',
  path: '/reviews/:review_id/status',
  list: false,
  input: followReviewInput,
  output: reviewProgressSchema,
  // Any key follows the writes it submitted itself; another key's take reviews.read (see followReview).
  access: { apiKey: { ability: null } },
  handler: (input, { db, caller }) => {
    const key = caller.actor as ApiKeyActor;
    return followReview(db, caller.organization.id, { apiKeyId: key.keyId, mayReadQueue: key.abilities.includes('reviews.read') }, input.review_id);
  },
});

const approveWithEditInput = approveReviewInput.extend({
  items: itemVerdictsInput
    .optional()
    .describe(
      "For a review holding a changeset: verdicts on some of its items as you approve it. Edit an item (any changeset) with verdict approved and its edit: the changeset as edited is decided by the policy again, each item as if alone as at submission (a Deny refuses the approval, 403 policy_denied naming the item, and the review keeps waiting; a Review asks for its approvals, yours the first); once approved, the edited items are what is applied. Reject an item (a divisible changeset only) with a reason; an item left must not refer to a rejected item's record (422 naming it); rejecting every item is refused (deny instead). The approved items are applied together once the review is approved",
    ),
  edit: editFieldsInput()
    .optional()
    .describe(
      "Fields to change in a held create or update before approving it (e.g. {\"due_on\": \"2026-12-01\"}), over the agent's input (a changeset's items are edited with items[k].edit instead); id and if_match cannot change. The edited write is decided by the policy again (the agent's key as principal, you in context.editor): a Deny refuses the edit (403 policy_denied, the review still waits), an Allow applies it with your approval, a Review counts your approval as the first",
    ),
  trust: trustTermsInput.optional(),
});

/** Who gives a verdict, and where: a person in the console (a session) or with a personal access token. */
function personOf(caller: Caller) {
  const person = caller.actor as PersonActor;
  return { person: { userId: person.userId, role: person.role }, via: person.credential.type === 'session' ? ('console' as const) : ('api_token' as const) };
}

/** What a verdict needs from outside the gate: the held writes by name, their workflows, and the person's passkey. */
function verdictPorts({ gate, publicUrl }: OperationContext) {
  return {
    writeOf: findGatedWrite,
    reviewEnded: (workflowId: string, given: 'approved' | 'denied') => gate.reviewDecided(workflowId, given, outcomeWaitMs),
    finishUrl: (reviewId: string) => reviewWebUrl(publicUrl, reviewId),
    verifyPasskey: (tx: Parameters<typeof verifyApprovalPasskey>[0], check: Parameters<typeof verifyApprovalPasskey>[1]) => verifyApprovalPasskey(tx, check, publicUrl),
    decidingRoles: reviewerRoles,
  };
}

/** A person's verdict: the domain's one entry for it, which tells the held write's workflow once the review ends. */
function giveVerdict(verdict: 'approved' | 'denied', input: z.infer<typeof approveWithEditInput>, context: OperationContext) {
  return recordVerdict(
    context.db,
    {
      orgId: context.caller.organization.id,
      reviewId: input.id,
      ...personOf(context.caller),
      verdict,
      comment: input.comment,
      seenEditId: input.seen_edit,
      edit: verdict === 'approved' ? input.edit : undefined,
      trust: verdict === 'approved' ? input.trust : undefined,
      items: verdict === 'approved' ? input.items : undefined,
      passkey: verdict === 'approved' ? input.passkey : undefined,
    },
    verdictPorts(context),
  );
}

export const approveReviewOperation = defineOperation({
  kind: 'person_action',
  name: 'reviews.approve',
  family: 'reviews',
  summary: 'Approve a held write',
  description:
    "Approves a pending review. When the policy asks for more than one approval (@approvals), each distinct person's approval counts and the review stays pending until enough have approved; then the held write runs and the answer carries its result. At that moment only approvals of people still active and still reviewers or above count, and a person set up by an owner or admin (see people.list set_up_by) counts as one with them. Nobody approves a write made with a key they created, unless the organization allows self-approval (403 self_approval); nor, then, anyone tied to the key's creator by a set-up, either way (403 set_up_by_key_creator). Send `edit` to change fields of a held create or update as you approve it, or `items[k].edit` for an item of a held changeset: the edited write (or changeset) is decided by the policy again (403 policy_denied refuses the edit and the review keeps waiting). Send `trust` to also open a trust window for the key that made the write (the same operation and picked attribute values, bounded in minutes and uses; see trust_windows.list). Only people with the reviewer role or above, with a personal token; a review is decided once (409 after), and a person approves it once (409).",
  method: 'POST',
  path: '/reviews/:id/approve',
  input: approveWithEditInput,
  refusals: ['self_approval', 'set_up_by_key_creator', 'policy_denied', 'passkey_required', 'passkey_failed'],
  output: reviewSchema,
  access: { person: { roles: reviewerRoles } },
  handler: (input, context) => giveVerdict('approved', input, context),
});

export const denyReviewOperation = defineOperation({
  kind: 'person_action',
  name: 'reviews.deny',
  family: 'reviews',
  summary: 'Deny a held write',
  description:
    'Denies a pending review: nothing is written. Only people with the reviewer role or above, with a personal token; a review is decided once (409 after).',
  method: 'POST',
  path: '/reviews/:id/deny',
  input: decideReviewInput,
  output: reviewSchema,
  access: { person: { roles: reviewerRoles } },
  handler: (input, context) => giveVerdict('denied', input, context),
});

const batchInput = z.strictObject({
  verdict: z.enum(['approved', 'denied']).describe('approved: approve every write named; denied: deny them (nothing of them is written)'),
  review_ids: z
    .array(text({ max: 100 }))
    .min(1)
    .max(batchLimit)
    .describe(`The reviews to decide (rev_…), at most ${batchLimit}: those the person selected in the queue, as listed with its filters`),
  comment: text({ max: 2000 }).optional().describe('Why, for the record: kept on each decided review'),
  passkey: passkeyAssertionInput.optional().describe(
    "Your passkey's one signature over this verdict on every review in signed_reviews, where the organization needs approvals signed: the challenge from reviews.batch_passkey_challenge. A review it covers is decided only as the payload it signed (payload_changed otherwise); one it does not cover is refused with passkey_required. One that does not verify refuses the whole batch (403 passkey_failed) and decides nothing",
  ),
  signed_reviews: z
    .array(signedReviewSchema)
    .max(batchLimit)
    .optional()
    .describe('With passkey: the reviews and payload digests the challenge covered, exactly as reviews.batch_passkey_challenge listed them'),
});

export const decideBatchOperation = defineOperation({
  kind: 'person_action',
  name: 'reviews.decide_batch',
  family: 'reviews',
  summary: 'Approve or deny several held writes',
  description: `Gives one verdict on several pending reviews (at most ${batchLimit}), the ones the person selected. Each review is decided on its own, as if approved or denied one by one: its own audit event, and every rule checked for it (quorum, self-approval, roles, a reviewer's edit, passkeys). The answer lists the reviews decided, as they stand after the verdict (an approved write carries its result), and those refused, each with the code and message a single verdict would have got. Where the organization needs approvals signed with a passkey, one assertion signs the whole batch: ask reviews.batch_passkey_challenge, sign its challenge, and send the assertion as \`passkey\` with its \`reviews\` as \`signed_reviews\`; denials need none. Only people with the reviewer role or above.`,
  method: 'POST',
  path: '/reviews/batch',
  input: batchInput,
  output: z.object({
    decided: z.array(reviewSchema).describe('The reviews the verdict was recorded on'),
    refused: z
      .array(
        z.object({
          id: z.string().describe('The review (rev_…)'),
          code: z.string().describe('Why, as an error code: self_approval, conflict, not_found, passkey_required…'),
          message: z.string().describe('Why, for a person to read: what a single verdict on it would have been told'),
        }),
      )
      .describe('The reviews it was refused for, and why'),
  }),
  refusals: ['passkey_failed'],
  access: { person: { roles: reviewerRoles } },
  handler: (input, context) => {
    if (input.signed_reviews) assertSignedAmongNamed(input.review_ids, input.signed_reviews);
    if (input.passkey && !input.signed_reviews) throw invalidFields([{ field: 'signed_reviews', message: 'a batch signed with a passkey names the reviews and digests it signed' }]);
    return recordBatchVerdict(
      context.db,
      {
        orgId: context.caller.organization.id,
        ...personOf(context.caller),
        verdict: input.verdict,
        comment: input.comment,
        reviewIds: input.review_ids,
        passkey: input.passkey ? { assertion: input.passkey, signed: input.signed_reviews! } : undefined,
      },
      verdictPorts(context),
    );
  },
});
