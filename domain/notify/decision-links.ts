import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../../db/database';
import { heldItemsReason, heldWriteInWords } from '../gate/changesets/in-words';
import { getReview } from '../gate/reviews/reads';
import type { Review } from '../gate/reviews/schema';
import { heldPayloadDigest, type Verdict } from '../gate/reviews/signing';
import { recordVerdict, type PasskeyAssertion, type VerdictPorts } from '../gate/reviews/verdicts';
import { reviewerRoles, type Role } from '../identity/actors';
import type { ApproveLinkRule } from '../identity/organizations';
import { digestToken } from '../identity/tokens';
import { AppError } from '../kit/errors';

// Decision links: each person told of a held write gets an Approve and a Deny link of their own, bound to the
// review, to them, and to the digest of the payload they were sent (the agent's input and the edit held over it).
// Opening one decides nothing (mail scanners open links): it reads the page; a second, deliberate request confirms.
// The confirm is a verdict like any other (recordVerdict, via 'link'), given as the person the link was sent to.
// A link is spent only by its person's verdict: a refusal that records nothing (a passkey the organization needs)
// leaves it usable, and of two confirms at once the second finds it spent.
//
// The token is a secret: it travels in the link's fragment (which a browser never sends) and in the bodies of the
// page's calls, never in a URL path or query that proxies log and traces record. Whether the link alone is enough
// to approve is the organization's choice (approve_links): where it asks for the person signed in, confirming an
// Approve link needs the console session of the person it was sent to, so that whoever reads a reviewer's mailbox
// (an assistant, say) cannot approve as them. Where approvals need a passkey, the person's passkey is asked
// instead, which proves more. A Deny link always works by the link alone: denying is fail-safe.

/** What confirming a link needs besides the link: nothing, its person's console session, or their passkey. */
export type LinkConfirmNeeds = 'link' | 'signed_in' | 'passkey';

/** Whom the browser holding a link is signed in to the console as: the link's own person, someone else, nobody. */
export type LinkSession = 'this_person' | 'someone_else' | 'none';

/** A person signed in to the console, as a link's calls carry their session. */
export interface SignedInPerson {
  userId: string;
  email: string;
}

/** A person's two links for one review: the secrets, shown once (in their email), never stored. */
export interface DecisionLinkPair {
  approve: string;
  deny: string;
}

/** Where a link stands: usable, spent (by its person), the review decided, expired or withdrawn, or its payload changed. */
export type DecisionLinkState = 'usable' | 'used' | 'decided' | 'expired' | 'withdrawn' | 'payload_changed';

/** What the page of a link shows, read with the token alone. */
export interface DecisionLinkView {
  verdict: Verdict;
  state: DecisionLinkState;
  person: { email: string; name: string | null };
  /** The organization, with the slug its people sign in with. */
  organization: { name: string; slug: string };
  /** What confirming it needs besides the link, so that the page can say so before the person taps. */
  confirm_needs: LinkConfirmNeeds;
  /** Whom the caller is signed in as. */
  session: LinkSession;
  review: {
    id: string;
    status: Review['status'];
    operation: string;
    agent: string;
    /** false: the agent is a connected app, and `agent` the name it gave itself, which nobody verified. */
    agent_label_verified: boolean;
    reason: string;
    expires_at: string;
    /** The write's detail, shown while the review waits: the record before (updates, deletes) and after it. */
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
    deleting: boolean;
    /** A reviewer's edit held over the agent's write: each changed field, the agent's value and the edited one. */
    edit: { by: string; fields: { field: string; agent: unknown; edited: unknown }[] } | null;
    approvals: { required: number; given: number };
    decided_by: string | null;
    /**
     * When the review holds a changeset: its mode, how many writes, and (while it can be decided) each item with its
     * decision and record; the link decides the changeset whole. Null for a single write.
     */
    changeset: {
      mode: 'all_or_nothing' | 'divisible';
      item_count: number;
      /** "changeset of 5 writes: tasks.update ×3, tasks.create, bookings.create" */
      summary: string;
      items: {
        index: number;
        ref: string | null;
        operation: string;
        decision: 'allow' | 'review' | 'deny';
        reason: string;
        policy_ids: string[];
        input: Record<string, unknown>;
        references: { field: string; ref: string; item: number; resource_type: string }[];
        before: Record<string, unknown> | null;
        after: Record<string, unknown>;
        deleting: boolean;
      }[];
    } | null;
  };
}

const isDeleting = (operation: string) => /\.(delete|forget)$/.test(operation);

/** The page a link opens, in the console: the token in the fragment, which the browser keeps to itself. */
export function decisionLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/decide#${token}`;
}

/** 32 random bytes, base64url: 43 characters of the URL-safe alphabet, nothing else. */
const tokenShape = /^[A-Za-z0-9_-]{43}$/;

/**
 * New Approve and Deny links for each person, bound to the write the review holds now and expiring with it; none
 * when it no longer waits. Links sent before stay valid (an email sent again on a retry does not void the first).
 */
export async function issueDecisionLinks(db: Database, orgId: string, reviewId: string, userIds: string[]): Promise<Map<string, DecisionLinkPair>> {
  const issued = new Map<string, DecisionLinkPair>();
  if (!userIds.length) return issued;
  const review = await getReview(db, orgId, reviewId);
  if (review.status !== 'pending') return issued;
  const digest = heldPayloadDigest(review);
  const rows: unknown[][] = [];
  for (const userId of userIds) {
    const pair = { approve: randomBytes(32).toString('base64url'), deny: randomBytes(32).toString('base64url') };
    issued.set(userId, pair);
    rows.push([userId, 'approved', digestToken(pair.approve)], [userId, 'denied', digestToken(pair.deny)]);
  }
  await db.query(
    `INSERT INTO decision_links (org_id, review_id, user_id, verdict, payload_digest, edit_id, token_digest, expires_at)
     SELECT $1, $2, l.user_id, l.verdict, $3, $4, l.token_digest, $5
     FROM unnest($6::text[], $7::text[], $8::bytea[]) AS l(user_id, verdict, token_digest)`,
    [orgId, reviewId, digest, review.edit?.id ?? null, review.expires_at, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
  );
  return issued;
}

interface LinkRow {
  id: string;
  org_id: string;
  review_id: string;
  user_id: string;
  verdict: Verdict;
  payload_digest: string;
  edit_id: string | null;
  expires_at: Date;
  used_at: Date | null;
  email: string;
  name: string | null;
  role: Role;
  deactivated_at: Date | null;
  org_name: string;
  org_slug: string;
  approve_links: ApproveLinkRule;
  approvals_need_passkey: boolean;
}

const invalid = () => new AppError('link_invalid', 'This decision link is not valid: it may be mistyped or cut short. Open the review in the console instead');

/** The link a token is, with its person and organization; the token alone says which (nothing else is trusted). */
async function findLink(db: Queryable, token: string): Promise<LinkRow> {
  if (!tokenShape.test(token)) throw invalid();
  const { rows } = await db.query<LinkRow>(
    `SELECT l.id::text AS id, l.org_id, l.review_id, l.user_id, l.verdict, l.payload_digest, l.edit_id, l.expires_at, l.used_at,
            u.email, u.name, u.role, u.deactivated_at, o.name AS org_name, o.slug AS org_slug, o.approve_links, o.approvals_need_passkey
     FROM decision_links l
     JOIN users u ON u.id = l.user_id AND u.org_id = l.org_id
     JOIN organizations o ON o.id = l.org_id
     JOIN reviews r ON r.id = l.review_id AND r.org_id = l.org_id
     WHERE l.token_digest = $1`,
    [digestToken(token)],
  );
  if (!rows[0]) throw invalid();
  return rows[0];
}

/** Whether the person may still decide: active, and still of a role that decides reviews. */
function assertMayDecide(link: LinkRow): void {
  if (link.deactivated_at) throw new AppError('link_invalid', 'This decision link was sent to a person who is no longer active in the organization');
  if (!reviewerRoles.includes(link.role)) {
    throw new AppError('insufficient_role', `This link was sent to ${link.email}, who is ${link.role} now and no longer decides reviews`);
  }
}

/**
 * What confirming the link needs besides it. A Deny link: nothing (denying is fail-safe). An Approve link: the
 * stricter of the organization's two rules, a passkey where approvals need one, else its person's session where
 * the organization asks for them signed in, else nothing.
 */
function confirmNeeds(link: LinkRow): LinkConfirmNeeds {
  if (link.verdict === 'denied') return 'link';
  if (link.approvals_need_passkey) return 'passkey';
  return link.approve_links === 'signed_in' ? 'signed_in' : 'link';
}

/** Refuses a confirm that needs the link's person signed in, made by nobody signed in or by someone else. */
function assertHolderMayConfirm(link: LinkRow, signedIn: SignedInPerson | undefined): void {
  if (confirmNeeds(link) !== 'signed_in') return;
  if (!signedIn) {
    throw new AppError(
      'sign_in_required',
      `${link.org_name} approves from a decision link only for the person it was sent to, signed in: sign in to Gatehouse as ${link.email}, then approve again. Nothing was decided; the Deny link works without signing in`,
    );
  }
  if (signedIn.userId !== link.user_id) {
    throw new AppError(
      'wrong_person',
      `This link is for ${link.email}. You are signed in as ${signedIn.email}: sign in as ${link.email} to approve with it. Nothing was decided`,
    );
  }
}

function stateOf(link: LinkRow, review: Review, now: Date): DecisionLinkState {
  if (link.used_at) return 'used';
  if (review.status === 'withdrawn') return 'withdrawn';
  if (review.status === 'expired' || link.expires_at <= now) return 'expired';
  if (review.status !== 'pending') return 'decided';
  if (heldPayloadDigest(review) !== link.payload_digest) return 'payload_changed';
  return 'usable';
}

/**
 * A link's page: the held write, whom the link is for and its verdict, whether it can still be used, and what
 * confirming it needs (with whom `viewer`, the caller's console session, is signed in as). Decides nothing.
 */
export async function readDecisionLink(db: Queryable, token: string, viewer?: SignedInPerson, now = new Date()): Promise<DecisionLinkView> {
  const link = await findLink(db, token);
  assertMayDecide(link);
  const review = await getReview(db, link.org_id, link.review_id);
  const state = stateOf(link, review, now);
  // The write itself only while it can still be decided: a spent or stale link (forwarded, found later) says how it ended.
  const shown = state === 'usable' || state === 'payload_changed';
  const deleting = isDeleting(review.operation);
  const { changeset } = review;
  return {
    verdict: link.verdict,
    state,
    person: { email: link.email, name: link.name },
    organization: { name: link.org_name, slug: link.org_slug },
    confirm_needs: confirmNeeds(link),
    session: !viewer ? 'none' : viewer.userId === link.user_id ? 'this_person' : 'someone_else',
    review: {
      id: review.id,
      status: review.status,
      operation: review.operation,
      agent: review.submitted_by.api_key_label,
      agent_label_verified: review.submitted_by.api_key_label_verified,
      reason: changeset ? heldItemsReason(changeset) : review.policy.reason,
      expires_at: review.expires_at,
      // A changeset's record is its items, shown one by one below.
      before: shown && !changeset ? review.before : null,
      after: shown && !changeset ? (review.edit?.resource ?? review.resource) : null,
      deleting,
      edit:
        shown && review.edit
          ? { by: review.edit.by.email, fields: review.edit.fields.map((field) => ({ field, agent: review.proposed[field] ?? null, edited: review.edit!.input[field] ?? null })) }
          : null,
      approvals: { required: review.approvals.required, given: review.approvals.given.length },
      decided_by: review.decided_by?.email ?? null,
      changeset: changeset && {
        mode: changeset.mode,
        item_count: changeset.items.length,
        summary: heldWriteInWords(review),
        items: shown
          ? changeset.items.map((item) => ({
              index: item.index,
              ref: item.ref,
              operation: item.operation,
              decision: item.decision,
              reason: item.reason,
              policy_ids: item.policy_ids,
              input: item.input,
              references: item.references,
              before: item.before,
              after: item.resource,
              deleting: isDeleting(item.operation),
            }))
          : [],
      },
    },
  };
}

/**
 * What a usable link's verdict binds, for the passkey of its person to sign before they confirm (the review, the
 * digest of the payload it was sent for, its verdict); refused as its confirm would be when it cannot be used.
 */
export async function decisionLinkToSign(
  db: Queryable,
  token: string,
  now = new Date(),
): Promise<{ orgId: string; userId: string; reviewId: string; verdict: Verdict; payloadDigest: string }> {
  const link = await findLink(db, token);
  assertMayDecide(link);
  const state = stateOf(link, await getReview(db, link.org_id, link.review_id), now);
  if (state === 'payload_changed') throw new AppError('payload_changed', 'The write this link was sent for has changed since; open the review in the console to decide the write it holds now');
  if (state !== 'usable') throw new AppError('link_invalid', `This decision link cannot be used: it is ${state}`);
  return { orgId: link.org_id, userId: link.user_id, reviewId: link.review_id, verdict: link.verdict, payloadDigest: link.payload_digest };
}

/** What a person sends as they confirm a link: a comment, and their passkey's assertion when one signs it. */
export interface DecisionLinkConfirmation {
  comment?: string;
  passkey?: PasskeyAssertion;
  /**
   * Whom the confirm's console session is of (undefined: nobody signed in), asked only of a link that needs its
   * person signed in; it refuses a session whose request does not carry the session's CSRF token.
   */
  signedIn?: () => Promise<SignedInPerson | undefined>;
}

/**
 * Confirms a link: its person's verdict, recorded as any verdict is (self-approval, quorum, roles, the edit held
 * and expiry hold as in the console), bound to the payload the link was sent for (`payload_changed` once it
 * differs). The person's links to the review are spent first, so a second confirm (this link or their other)
 * is refused; a verdict refused without anything recorded gives them back.
 */
export async function confirmDecisionLink(
  db: Database,
  token: string,
  confirmation: DecisionLinkConfirmation,
  ports: Omit<VerdictPorts, 'decidingRoles'>,
): Promise<Review> {
  // The session is looked up before the link is claimed (never on another connection while the claim's transaction
  // is open), and only for a link that needs it; the claim checks it against the link as it locks it.
  const signedIn = confirmNeeds(await findLink(db, token)) === 'signed_in' ? await confirmation.signedIn?.() : undefined;
  const link = await claimLink(db, token, (claimed) => assertHolderMayConfirm(claimed, signedIn));
  try {
    return await recordVerdict(
      db,
      {
        orgId: link.org_id,
        reviewId: link.review_id,
        person: { userId: link.user_id, role: link.role },
        verdict: link.verdict,
        via: 'link',
        expectedDigest: link.payload_digest,
        seenEditId: link.edit_id ?? undefined,
        comment: confirmation.comment,
        passkey: confirmation.passkey,
      },
      { ...ports, decidingRoles: reviewerRoles },
    );
  } catch (error) {
    // The refusal is the answer; should giving the links back fail too, they stay spent (the console still decides).
    await releaseUnlessDecided(db, link).catch(() => undefined);
    throw error;
  }
}

/**
 * Checks a link (it exists, unspent, unexpired; its person may decide; `mayConfirm`, what the holder brings) and
 * spends their links to the review.
 */
async function claimLink(db: Database, token: string, mayConfirm: (link: LinkRow) => void): Promise<LinkRow & { claimedAt: string }> {
  return db.transaction(async (tx) => {
    const link = await findLink(tx, token);
    // The person's links to the review, locked in one order: a confirm racing this one waits, then finds them spent.
    const { rows } = await tx.query<{ id: string; used_at: Date | null }>(
      'SELECT id::text AS id, used_at FROM decision_links WHERE review_id = $1 AND user_id = $2 ORDER BY id FOR UPDATE',
      [link.review_id, link.user_id],
    );
    const locked = rows.find((row) => row.id === link.id);
    if (!locked || locked.used_at) throw new AppError('link_invalid', 'This decision link was used already: each link decides once. Open the review in the console to see how it ended');
    if (link.expires_at <= new Date()) throw new AppError('link_invalid', 'This decision link has expired with its review; nothing was decided');
    assertMayDecide(link);
    mayConfirm(link);
    // One instant, to the microsecond, marks this claim's links, should they be given back.
    const claimedAt = (await tx.query<{ at: string }>('SELECT clock_timestamp()::text AS at')).rows[0]!.at;
    await tx.query('UPDATE decision_links SET used_at = $3::timestamptz WHERE review_id = $1 AND user_id = $2 AND used_at IS NULL', [
      link.review_id,
      link.user_id,
      claimedAt,
    ]);
    return { ...link, claimedAt };
  });
}

/**
 * After a refused or failed verdict, gives the person's links back unless their verdict is on record (a verdict
 * that committed before its workflow could be told, say): a link is spent only by a verdict.
 */
async function releaseUnlessDecided(db: Database, link: LinkRow & { claimedAt: string }): Promise<void> {
  await db.query(
    `UPDATE decision_links l SET used_at = NULL
     WHERE l.review_id = $1 AND l.user_id = $2 AND l.used_at = $3::timestamptz
       AND NOT EXISTS (SELECT 1 FROM review_approvals a WHERE a.review_id = l.review_id AND a.user_id = l.user_id)
       AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.id = l.review_id AND r.decided_by = l.user_id)`,
    [link.review_id, link.user_id, link.claimedAt],
  );
}
