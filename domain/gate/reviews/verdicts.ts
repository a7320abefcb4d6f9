import type { QueryResultRow } from 'pg';
import type { Database, Queryable } from '../../../db/database';
import { recordAudit, type VerdictProvenance } from '../../audit/events';
import { AppError, invalidFields } from '../../kit/errors';
import { assertItemsEditable, editHeldChangeset, editsItems, type ItemEditDeniedError } from '../changesets/edits';
import { checkItemVerdicts, recordItemVerdicts, type ItemVerdict } from '../changesets/verdicts';
import type { GatedWrite } from '../writes';
import { openTrustWindow, type TrustTerms } from '../trust-windows';
import { assertEditable, editHeldWrite, type EditRefused, type HeldWrite } from './edits';
import { getReview } from './reads';
import type { Review } from './schema';
import { approvalChallenge, decidedPayload, payloadDigest, type ApprovalTerms, type DecidedPayload, type Verdict } from './signing';
import { reviewStatusSql, type ReviewStatus } from './state';
import { noteApprovalAfterReset } from './approval-after-reset';
import type { WithdrawalReason } from './withdraw';

// A review's verdict: a person's approval (of the agent's version, or with their edit) or denial, and the expiry its
// workflow records when nobody gave one. (The policy *decides* a write; a person gives a *verdict* on its review.)
// Each is written first and atomically, with its audit event.

/** Where a person gave their verdict: the console, a decision link, a Slack button, or a personal access token. */
export type VerdictChannel = 'console' | 'link' | 'slack' | 'api_token';

/** A WebAuthn assertion over a verdict's challenge (`approvalChallenge`), its binary fields base64url. */
export interface PasskeyAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  /** The time the challenge committed to (ISO 8601), as the console asked the authenticator to sign it. */
  signed_at: string;
}

/** What a person's passkey assertion is checked against: theirs, over this challenge (see ./signing.ts). */
export interface PasskeyCheck {
  orgId: string;
  userId: string;
  /** The challenge the assertion must have signed: one review's verdict, or a batch's. */
  challenge: string;
  assertion: PasskeyAssertion;
}

/** A person's verdict on a held write, as they sent it. */
export interface PersonsVerdict {
  orgId: string;
  reviewId: string;
  person: { userId: string; role: string };
  verdict: Verdict;
  /** Where they gave it (the audit trail and the review record it). */
  via: VerdictChannel;
  /** Their passkey's signature over the verdict, when they gave one. */
  passkey?: PasskeyAssertion;
  /**
   * Set by recordBatchVerdict only, once it has verified `passkey` over a batch statement that lists this review
   * with `expectedDigest`: the digest naming that batch. The verdict then checks the digest, not the signature again.
   */
  signedBatch?: { digest: string };
  /**
   * The payload digest the person was shown (a decision link carries the one it was sent for): refused with
   * `payload_changed` when the held write differs now.
   */
  expectedDigest?: string;
  comment?: string;
  /** The reviewer's edit the person saw and approves (its id); absent: the agent's version. */
  seenEditId?: string;
  /** Fields to change over the agent's input as they approve (a held create or update only). */
  edit?: Record<string, unknown>;
  /**
   * A trust window to open as they approve (see ../trust-windows.ts): opened only by the approval that ends the
   * review approved, and part of the payload a passkey signs.
   */
  trust?: TrustTerms;
  /** For a divisible changeset: verdicts on some of its items (the others are approved with the whole). */
  items?: ItemVerdict[];
}

/** An edit of a changeset's items the policy denied: recorded, and the person told once the transaction has committed. */
interface ItemEditRefused {
  refusal: ItemEditDeniedError;
}

/** What a verdict needs from outside the gate: the held writes by name, and the workflow that holds the write. */
export interface VerdictPorts {
  /** The gated write an operation names (the resources' registry), for an edit to be parsed and decided as it. */
  writeOf(operation: string): GatedWrite | undefined;
  /**
   * Told once a verdict that ends the review is committed: tells the held write's workflow, and may wait for it
   * to run the write, so that the answer carries its result.
   */
  reviewEnded(workflowId: string, verdict: 'approved' | 'denied'): Promise<unknown>;
  /**
   * Checks a passkey's assertion over a verdict, in the verdict's transaction (the person's registered key, the
   * challenge, the time; its signature counter moves on). Throws `passkey_failed` when it does not verify.
   * Absent: no passkey can be checked here, so an organization that needs one refuses every approval.
   */
  verifyPasskey?(tx: Queryable, check: PasskeyCheck): Promise<void>;
  /** Where a person finishes an approval that needs a passkey (the review's page, or a decision link). */
  finishUrl?(reviewId: string): string;
  /**
   * The roles that decide reviews (domain/identity/actors.ts reviewerRoles): an approval counts toward a quorum only
   * while its person is active and still has one of them.
   */
  decidingRoles: readonly string[];
}

/**
 * A person's verdict on a review: the one way in. It locks the review once and, in that transaction, denies it,
 * or counts the approval (after the edit, when there is one, is decided by the policy again); a verdict that ends
 * the review is then told to its workflow. Answers the review as it stands after all that, read once.
 *
 * A deny ends the review. An approval counts once per person; the review is approved when it has as many as the
 * policy asked for (one, unless a rule's @approvals says more), and stays pending until then. Unless the
 * organization allows it, nobody approves a write made with an API key they created. Of verdicts racing, the
 * first to lock the review settles it and the others are told 409.
 */
export async function recordVerdict(db: Database, given: PersonsVerdict, ports: VerdictPorts): Promise<Review> {
  const { workflowId, ended, refused } = await db.transaction(async (tx): Promise<{ workflowId: string; ended: boolean; refused?: EditRefused | ItemEditRefused }> => {
    const review = await lockPendingReview(tx, given.orgId, given.reviewId);
    if (given.trust && given.verdict !== 'approved') throw new AppError('validation_failed', 'a trust window is opened only with an approval');
    const digest = payloadDigest(decidedPayload(review, termsOf(given)));
    if (given.expectedDigest !== undefined && given.expectedDigest !== digest) {
      throw new AppError(
        'payload_changed',
        `the write held in review ${review.id} has changed (a reviewer edited it) since this was sent; open the review to decide the write it holds now`,
        { status: 'pending', edit_id: review.edit?.id ?? null },
      );
    }
    await checkPasskey(tx, review, given, digest, ports);
    if (given.verdict === 'denied') {
      await settle(tx, review, given, 'denied', howDecided(given, digest));
      return { workflowId: review.workflowId, ended: true };
    }
    if (review.changesetId && given.trust) {
      // A window lets single writes of one operation through; a changeset is decided item by item, by the policy.
      throw invalidFields([{ field: 'trust', message: 'a trust window is opened by approving a single held write, not a changeset' }]);
    }
    if (review.changesetId && given.edit !== undefined) {
      throw invalidFields([{ field: 'edit', message: "a changeset is edited item by item: send an item's changes as items[k].edit, with its index and verdict approved" }]);
    }
    if (review.changesetId && editsItems(given.items)) {
      return { workflowId: review.workflowId, ...(await approveWithItemEdits(tx, review, given, ports, digest)) };
    }
    if (given.edit === undefined) {
      await assertNotSelfApproval(tx, review, given.person.userId);
      assertSawCurrentVersion(review, given.seenEditId);
      if (given.items?.length) await recordItemVerdicts(tx, { reviewId: review.id, orgId: review.orgId, workflowId: review.workflowId, changesetId: review.changesetId, mode: review.changesetMode }, given.person, given.items);
      return { workflowId: review.workflowId, ended: await approveIn(tx, review, given, ports, decidedPayload(review, termsOf(given)), digest) };
    }
    const write = heldWrite(review, ports);
    assertEditable(review, write);
    await assertNotSelfApproval(tx, review, given.person.userId);
    const edited = await editHeldWrite(tx, review, write, given.person, given.edit);
    // A refused edit stays on the record (with its decision): the transaction commits, then the person is told.
    if ('refusal' in edited) return { workflowId: review.workflowId, ended: false, refused: edited };
    return { workflowId: review.workflowId, ended: await approveIn(tx, { ...review, approvalsRequired: edited.approvalsRequired }, given, ports, decidedPayload(review, termsOf(given)), digest, { edit_id: edited.editId }) };
  });
  if (refused) throw refused.refusal;
  if (ended) await ports.reviewEnded(workflowId, given.verdict);
  return getReview(db, given.orgId, given.reviewId);
}

/**
 * An approval of a held changeset with edits to some of its items (items[k].edit): checked as a single write's
 * edit-then-approve is (what cannot be edited first, then self-approval, then the version the person saw), the
 * edited changeset decided by the policy again (../changesets/edits.ts), then the item verdicts and the approval
 * recorded. A refused edit stays on the record, and nothing else of the approval does.
 */
async function approveWithItemEdits(
  tx: Queryable,
  review: LockedReview,
  given: PersonsVerdict,
  ports: VerdictPorts,
  digest: string,
): Promise<{ ended: boolean; refused?: ItemEditRefused }> {
  const verdicts = given.items!;
  const held = { reviewId: review.id, orgId: review.orgId, workflowId: review.workflowId, changesetId: review.changesetId, mode: review.changesetMode };
  const checked = await checkItemVerdicts(tx, held, verdicts);
  assertItemsEditable(checked, ports.writeOf, verdicts);
  await assertNotSelfApproval(tx, review, given.person.userId);
  // Items edited before stay edited in the new version: the person must have seen them.
  assertSawCurrentVersion(review, given.seenEditId);
  const edited = await editHeldChangeset(tx, { ...review, changesetId: review.changesetId! }, ports.writeOf, given.person, verdicts, checked);
  if ('refusal' in edited) return { ended: false, refused: edited };
  await recordItemVerdicts(tx, held, given.person, verdicts);
  const payload = decidedPayload(review, termsOf(given));
  return { ended: await approveIn(tx, { ...review, approvalsRequired: edited.approvalsRequired }, given, ports, payload, digest, { edit_id: edited.editId }) };
}

/**
 * The payload a verdict on a pending review is bound to now, as `recordVerdict` digests it (`proposedEdit`: the
 * fields the person changes as they approve), and whether the organization needs approvals signed: what a
 * passkey is asked to sign before the verdict is sent.
 */
export async function pendingVerdictPayload(
  db: Database,
  orgId: string,
  reviewId: string,
  terms: ApprovalTerms = {},
): Promise<{ payload: DecidedPayload; digest: string; approvalsNeedPasskey: boolean }> {
  const review = await db.transaction((tx) => lockPendingReview(tx, orgId, reviewId));
  const payload = decidedPayload(review, terms);
  return { payload, digest: payloadDigest(payload), approvalsNeedPasskey: review.approvalsNeedPasskey };
}

/**
 * The digest of the write each of these reviews holds, for the pending ones (a batch verdict decides them as
 * held, with no edit), in the order given; the others are left out, and a verdict on them is refused as it would be.
 */
export async function pendingPayloadDigests(db: Queryable, orgId: string, reviewIds: string[]): Promise<{ review_id: string; payload_digest: string }[]> {
  const { rows } = await db.query(`${reviewsAmong} AND ${reviewStatusSql('r')} = 'pending'`, [orgId, reviewIds]);
  const digests = new Map(rows.map((row) => [row.id as string, payloadDigest(decidedPayload(lockedReviewOf(orgId, row)))]));
  return reviewIds.flatMap((id) => (digests.has(id) ? [{ review_id: id, payload_digest: digests.get(id)! }] : []));
}

/** The gated write a review holds, for an edit to be parsed and decided as that write. */
function heldWrite(review: LockedReview, ports: VerdictPorts): GatedWrite {
  const write = ports.writeOf(review.operation);
  if (!write) throw new AppError('conflict', `review ${review.id} holds ${review.operation}, which this version of Gatehouse does not know`);
  return write;
}

/** A review being decided, locked in the caller's transaction: the held write and what a verdict on it needs. */
interface LockedReview extends HeldWrite {
  approvalsRequired: number;
  /** The person who created the key that made the write (null: the CLI). */
  keyCreatedBy: string | null;
  /** Who held that person's account as the key was made (an owner or admin given their set-password link). */
  keyCreatedWhileHeldBy: string | null;
  selfApproval: boolean;
  /** The organization needs every approval signed with the approver's passkey. */
  approvalsNeedPasskey: boolean;
  /** The changeset the review holds (chs_…) and its mode; null for a single write. */
  changesetId: string | null;
  changesetMode: string | null;
}

const heldReviews = `
  SELECT r.id, r.workflow_id, r.approvals_required, ${reviewStatusSql('r')} AS status, r.withdrawn_reason, d.operation, d.input, d.interface,
         d.api_key_id, k.label AS api_key_label, k.access AS api_key_access, k.abilities AS api_key_abilities,
         k.created_by AS key_created_by, k.created_while_held_by AS key_held_by, o.self_approval, o.approvals_need_passkey, r.edit_id, e.input AS edit_input,
         r.changeset_id, (SELECT c.mode FROM changesets c WHERE c.id = r.changeset_id) AS changeset_mode
  FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id JOIN api_keys k ON k.id = d.api_key_id JOIN organizations o ON o.id = r.org_id
  LEFT JOIN review_edits e ON e.id = r.edit_id`;
const lockReview = `${heldReviews} WHERE r.org_id = $1 AND r.id = $2 FOR UPDATE OF r`;
/** The reviews of an organization among a list of ids, read without a lock. */
const reviewsAmong = `${heldReviews} WHERE r.org_id = $1 AND r.id = ANY($2::text[])`;

/**
 * Locks a review that is still pending, for a verdict in this transaction; 404 when there is none, 409 when it
 * was decided, expired or withdrawn already. Of verdicts racing, the first to lock it goes first.
 */
async function lockPendingReview(tx: Queryable, orgId: string, reviewId: string): Promise<LockedReview> {
  const row = (await tx.query(lockReview, [orgId, reviewId])).rows[0];
  if (!row) throw new AppError('not_found', `review ${reviewId} was not found`);
  if (row.status === 'withdrawn') {
    throw new AppError('conflict', `review ${reviewId} was withdrawn (${withdrawnBecause[row.withdrawn_reason as WithdrawalReason]}): nobody can approve or deny it, and nothing of it will be written`, {
      status: row.status,
      withdrawn_reason: row.withdrawn_reason,
    });
  }
  if (row.status !== 'pending') {
    throw new AppError('conflict', `review ${reviewId} is ${row.status} already; it can be decided only once, while pending`, { status: row.status });
  }
  return lockedReviewOf(orgId, row);
}

/** Why a withdrawn review cannot be decided, in the words of a refusal. */
const withdrawnBecause: Record<WithdrawalReason, string> = {
  key_revoked: 'the API key that made the write was revoked',
  connection_ended: 'the connected app that made the write was disconnected',
};

function lockedReviewOf(orgId: string, row: QueryResultRow): LockedReview {
  return {
    id: row.id,
    orgId,
    workflowId: row.workflow_id,
    operation: row.operation,
    input: row.input,
    apiKey: { id: row.api_key_id, label: row.api_key_label, access: row.api_key_access, abilities: row.api_key_abilities },
    interface: row.interface,
    approvalsRequired: row.approvals_required,
    keyCreatedBy: row.key_created_by,
    keyCreatedWhileHeldBy: row.key_held_by,
    selfApproval: row.self_approval,
    approvalsNeedPasskey: row.approvals_need_passkey,
    edit: row.edit_id ? { id: row.edit_id, input: row.edit_input } : null,
    changesetId: row.changeset_id,
    changesetMode: row.changeset_mode,
  };
}

/**
 * An approval counts for the version of the write the person saw: the agent's (`seenEditId` absent) or a
 * reviewer's edit (its id). Approving after someone else edited it, without having seen the edit, is refused.
 */
function assertSawCurrentVersion(review: LockedReview, seenEditId: string | undefined): void {
  if ((review.edit?.id ?? undefined) === seenEditId) return;
  throw new AppError(
    'conflict',
    review.edit
      ? `review ${review.id} was edited (${review.edit.id}) since you read it; read it again and approve the write it holds now (send seen_edit "${review.edit.id}")`
      : `review ${review.id} holds the agent's version, not the edit ${seenEditId}; read it again`,
    { status: 'pending', edit_id: review.edit?.id ?? null },
  );
}

/**
 * Unless the organization allows it, nobody approves (or edits and approves) a write made with a key they created;
 * nor anyone tied to the key's creator by set-password links (domain/identity/set-up.ts), either way: a person the
 * creator set up (who could have set the password and approve as them), the one who set up the creator, or held
 * their account when the key was made (who could have made the key signed in as them), and anyone these chains
 * share. The people so tied are those whose chains of set-up holders meet, as a quorum counts them as one.
 */
async function assertNotSelfApproval(tx: Queryable, review: LockedReview, userId: string): Promise<void> {
  if (review.selfApproval || review.keyCreatedBy === null) return;
  if (review.keyCreatedBy === userId) {
    throw new AppError(
      'self_approval',
      `you created the API key that made this write, so you cannot approve it; another reviewer must (an owner or admin can allow self-approval in the organization's settings)`,
    );
  }
  const { rows } = await tx.query<{ email: string }>(
    `WITH RECURSIVE approver (person) AS (
       SELECT $1::text
       UNION
       SELECT u.set_up_by FROM approver a JOIN users u ON u.id = a.person WHERE u.set_up_by IS NOT NULL
     ), creator (person) AS (
       SELECT p FROM unnest(ARRAY[$2::text, $3::text]) AS p WHERE p IS NOT NULL
       UNION
       SELECT u.set_up_by FROM creator c JOIN users u ON u.id = c.person WHERE u.set_up_by IS NOT NULL
     )
     SELECT (SELECT email FROM users WHERE id = $2) AS email WHERE EXISTS (SELECT 1 FROM approver a JOIN creator c USING (person))`,
    [userId, review.keyCreatedBy, review.keyCreatedWhileHeldBy],
  );
  if (rows[0]) {
    throw new AppError(
      'set_up_by_key_creator',
      `${rows[0].email} created the API key that made this write, and a set-password link given to someone else (no email was configured) ties your account to theirs: one of you, or whoever set up both, could have acted as the other. You cannot approve it; another reviewer must. A reset of the password whose link is emailed to the person ends the tie, except to keys made while it held`,
    );
  }
}

/**
 * One person's approval of a locked review: counted once per person; the review is approved once it has as many
 * as it needs (`approvalsRequired`, the review's own unless an edit set anew), else it stays pending. True when
 * this approval ended the review.
 */
async function approveIn(
  tx: Queryable,
  review: LockedReview,
  given: PersonsVerdict,
  ports: VerdictPorts,
  payload: DecidedPayload,
  digest: string,
  auditData: { edit_id?: string } = {},
): Promise<boolean> {
  const comment = given.comment ?? null;
  const userId = given.person.userId;
  const required = review.approvalsRequired;
  // A person's approval counts once; one given without a passkey before the organization needed them is replaced
  // by their signed one.
  const added = await tx.query(
    `INSERT INTO review_approvals (review_id, user_id, org_id, comment, via, payload_digest, passkey) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (review_id, user_id) DO UPDATE SET comment = EXCLUDED.comment, via = EXCLUDED.via, payload_digest = EXCLUDED.payload_digest,
       passkey = EXCLUDED.passkey, approved_at = now()
     WHERE review_approvals.passkey IS NULL AND EXCLUDED.passkey IS NOT NULL`,
    [review.id, userId, review.orgId, comment, given.via, digest, given.passkey ? { assertion: given.passkey, payload, ...batchOf(given) } : null],
  );
  if (!added.rowCount) {
    throw new AppError('conflict', `you have approved review ${review.id} already; it needs ${required} approvals from different people`, { status: 'pending' });
  }
  await noteApprovalAfterReset(tx, { orgId: review.orgId, reviewId: review.id, workflowId: review.workflowId, userId, via: given.via });
  const approvers = await countedApprovers(tx, review, ports.decidingRoles);
  const counted = independentApprovals(approvers);
  const how = howDecided(given, digest);
  if (counted < required) {
    if (given.trust) {
      throw new AppError(
        'conflict',
        `review ${review.id} needs ${required} approvals and has ${counted} with yours: a trust window is opened only by the approval that ends the review; approve without one, and the last approver may open it`,
        { status: 'pending' },
      );
    }
    await recordAudit(tx, review.orgId, {
      type: 'review.approval_added',
      actor: { type: 'user', id: userId },
      workflowId: review.workflowId,
      reviewId: review.id,
      data: { comment, approvals: counted, required, ...auditData, ...how },
    });
    return false;
  }
  await settle(tx, review, given, 'approved', { ...(required > 1 ? { approvals: approvers.map((approver) => approver.userId) } : {}), ...auditData, ...how });
  if (given.trust) await openTrustWindow(tx, { orgId: review.orgId, reviewId: review.id, workflowId: review.workflowId, userId, terms: given.trust });
  return true;
}

/** An approval that counts toward a review's quorum: whose, and who could have approved as them (see independentApprovals). */
interface CountedApprover {
  userId: string;
  /** Who set this person up, who set that one up, and so on (domain/identity/set-up.ts). */
  setUpChain: string[];
}

/**
 * The approvals of a review that count now, in the order given: of people still active and still allowed to decide
 * reviews (an approval of someone deactivated or demoted since does not), and where approvals must be signed, only
 * signed ones (those given before the organization asked do not); each with the chain of those who set them up.
 */
async function countedApprovers(tx: Queryable, review: LockedReview, decidingRoles: readonly string[]): Promise<CountedApprover[]> {
  const { rows } = await tx.query(
    `WITH RECURSIVE approvers AS (
       SELECT a.user_id, a.approved_at FROM review_approvals a JOIN users u ON u.id = a.user_id
       WHERE a.review_id = $1 AND (NOT $2 OR a.passkey IS NOT NULL) AND u.deactivated_at IS NULL AND u.role = ANY($3::text[])
     ), chain (approver, person) AS (
       SELECT user_id, user_id FROM approvers
       UNION
       SELECT c.approver, u.set_up_by FROM chain c JOIN users u ON u.id = c.person WHERE u.set_up_by IS NOT NULL
     )
     SELECT a.user_id, array_remove(array_agg(c.person), a.user_id) AS set_up_chain
     FROM approvers a JOIN chain c ON c.approver = a.user_id
     GROUP BY a.user_id, a.approved_at ORDER BY a.approved_at, a.user_id`,
    [review.id, review.approvalsNeedPasskey, decidingRoles],
  );
  return rows.map((row) => ({ userId: row.user_id as string, setUpChain: row.set_up_chain as string[] }));
}

/**
 * How many independent people approved: a person and whoever set them up (directly, or further up the chain) could
 * each have approved as the other, so approvers whose chains meet count as one.
 */
function independentApprovals(approvers: readonly CountedApprover[]): number {
  const parent = new Map<string, string>();
  const root = (id: string): string => {
    let at = id;
    while (parent.get(at) !== undefined && parent.get(at) !== at) at = parent.get(at)!;
    return at;
  };
  const join = (a: string, b: string) => {
    for (const id of [a, b]) if (!parent.has(id)) parent.set(id, id);
    const [ra, rb] = [root(a), root(b)];
    if (ra !== rb) parent.set(ra, rb);
  };
  for (const { userId, setUpChain } of approvers) {
    join(userId, userId);
    for (const controller of setUpChain) join(userId, controller);
  }
  return new Set(approvers.map(({ userId }) => root(userId))).size;
}

/** What the audit trail keeps of how a verdict was given: where, on which payload, and the passkey's signature (and the batch it signed). */
function howDecided(given: PersonsVerdict, digest: string): VerdictProvenance {
  return { via: given.via, payload_digest: digest, passkey: given.passkey ?? null, ...batchOf(given) };
}

const batchOf = (given: PersonsVerdict): { batch_digest?: string } => (given.signedBatch ? { batch_digest: given.signedBatch.digest } : {});

/** What the person decides beside the write as they give the verdict: an edit, a trust window and items count only with an approval. */
function termsOf(given: PersonsVerdict): ApprovalTerms {
  return { edit: given.edit, trust: given.trust, items: given.items };
}

/**
 * When the organization needs approvals signed, an approval without a passkey is refused (with where to finish
 * it), and one with a passkey must verify against the person's key over this very payload. A passkey sent with
 * any verdict is checked, so that what the trail keeps as signed always verifies.
 */
async function checkPasskey(tx: Queryable, review: LockedReview, given: PersonsVerdict, digest: string, ports: VerdictPorts): Promise<void> {
  if (!given.passkey) {
    if (given.verdict !== 'approved' || !review.approvalsNeedPasskey) return;
    const finishUrl = ports.finishUrl?.(review.id) ?? null;
    throw new AppError(
      'passkey_required',
      `this organization needs every approval signed with the approver's passkey, which ${channelNames[given.via]} cannot carry; approve it on the review's page${finishUrl ? `: ${finishUrl}` : ''}`,
      { finish_url: finishUrl },
    );
  }
  if (given.signedBatch) {
    // The batch's assertion was verified once, over every review's digest; this review is one of them, with this digest.
    if (given.expectedDigest !== digest) throw new AppError('passkey_failed', `the batch's signature does not cover the write review ${review.id} holds now`);
  } else {
    if (!ports.verifyPasskey) throw new AppError('passkey_failed', 'a passkey cannot be checked here');
    const challenge = approvalChallenge(review.id, digest, given.verdict, given.passkey.signed_at);
    await ports.verifyPasskey(tx, { orgId: review.orgId, userId: given.person.userId, challenge, assertion: given.passkey });
  }
  // The payload it signed, kept by its digest for as long as the trail: an audit export carries it beside the
  // signed event (a later edit removes the review's approvals, never this).
  await tx.query('INSERT INTO signed_payloads (digest, org_id, payload) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    digest,
    review.orgId,
    decidedPayload(review, termsOf(given)),
  ]);
}

const channelNames: Record<VerdictChannel, string> = {
  console: 'an approval without a passkey',
  link: 'a decision link confirmed without a passkey',
  slack: 'a Slack button',
  api_token: 'a personal access token',
};

/** Records the verdict that ends a review (by whom, when, their comment) and its audit event. */
async function settle(
  tx: Queryable,
  review: LockedReview,
  given: PersonsVerdict,
  status: 'approved' | 'denied',
  auditData: { approvals?: string[]; edit_id?: string } & VerdictProvenance,
) {
  const comment = given.comment ?? null;
  await tx.query(`UPDATE reviews SET status = $3, decided_by = $4, decided_at = now(), comment = $5, decided_via = $6 WHERE org_id = $1 AND id = $2`, [
    review.orgId,
    review.id,
    status,
    given.person.userId,
    comment,
    given.via,
  ]);
  await recordAudit(tx, review.orgId, {
    type: status === 'approved' ? 'review.approved' : 'review.denied',
    actor: { type: 'user', id: given.person.userId },
    workflowId: review.workflowId,
    reviewId: review.id,
    data: { comment, ...auditData },
  });
}

/** The status a review's workflow finds when it checks (a person's verdict, or the expiry it recorded). */
export async function readReviewStatus(db: Queryable, reviewId: string): Promise<ReviewStatus> {
  const { rows } = await db.query('SELECT status FROM reviews WHERE id = $1', [reviewId]);
  if (!rows[0]) throw new AppError('not_found', `review ${reviewId} was not found`);
  return rows[0].status;
}

/** Expires a review nobody decided; if a person decided meanwhile, their verdict stands. */
export async function expireReview(db: Database, reviewId: string): Promise<ReviewStatus> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE reviews SET status = 'expired', decided_at = now() WHERE id = $1 AND status = 'pending'
       RETURNING org_id, workflow_id`,
      [reviewId],
    );
    if (!rows[0]) return readReviewStatus(tx, reviewId);
    await recordAudit(tx, rows[0].org_id, {
      type: 'review.expired',
      actor: { type: 'system', id: null },
      workflowId: rows[0].workflow_id,
      reviewId,
      data: {},
    });
    return 'expired';
  });
}
