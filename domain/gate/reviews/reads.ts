import type { z } from 'zod';
import type { QueryResultRow } from 'pg';
import type { Queryable } from '../../../db/database';
import { labelVerifiedSql } from '../../kit/agent-names';
import { AppError } from '../../kit/errors';
import { decodeCursor, toPage, type Page } from '../../kit/pagination';
import type { listReviewsInput, Review, reviewProgressSchema } from './schema';
import { reviewStatusSql } from './state';
import { reviewFiltersSql } from './filters';
import { undoableUntilSql } from '../undo';
import { refsIn } from '../changesets/schema';
import { trustWindowStateSql } from '../trust-windows';

// Reading reviews: the queue, one review, the agent's follow view, and the gauge. One query reads a review whole.

/** Reviews by the status they read as, across organizations (the metrics' gauge). */
export async function countReviewsByStatus(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query(`SELECT ${reviewStatusSql('r')} AS status, count(*)::int AS n FROM reviews r GROUP BY 1`);
  return Object.fromEntries(rows.map((row) => [row.status as string, row.n as number]));
}

const selectReview = `
  SELECT r.*, ${reviewStatusSql('r')} AS effective_status, d.id AS decision_id, d.operation, d.input, d.resource, d.context -> 'before' AS before, d.reason,
         d.policy_ids, d.policy_version, d.policy_errors, d.interface, d.api_key_id, k.label AS api_key_label,
         ${labelVerifiedSql('k')} AS api_key_label_verified,
         u.email AS decided_by_email,
         CASE r.withdrawn_by_type WHEN 'user' THEN (SELECT wu.email FROM users wu WHERE wu.id = r.withdrawn_by_id)
                                  WHEN 'api_key' THEN (SELECT wk.label FROM api_keys wk WHERE wk.id = r.withdrawn_by_id) END AS withdrawn_by_name,
         (SELECT coalesce(json_agg(json_build_object('user_id', a.user_id, 'email', au.email, 'at', a.approved_at, 'comment', a.comment, 'via', a.via, 'passkey', a.passkey IS NOT NULL) ORDER BY a.approved_at, a.user_id), '[]')
          FROM review_approvals a JOIN users au ON au.id = a.user_id WHERE a.review_id = r.id) AS approvals_given,
         e.id AS edit_id, e.fields AS edit_fields, e.edited_by AS edit_by, eu.email AS edit_by_email, e.created_at AS edit_at, e.input AS edit_input, e.resource AS edit_resource,
         e.decision AS edit_decision, e.reason AS edit_reason, e.policy_ids AS edit_policy_ids, e.policy_version AS edit_policy_version,
         aw.undone_by, aw.undone_at, ${undoableUntilSql('aw')} AS undoable_until,
         (SELECT json_build_object('id', c.id, 'mode', c.mode, 'items',
                   (SELECT json_agg(json_build_object('index', i.idx, 'ref', i.ref, 'operation', i.operation, 'input', i.input, 'decision', i.decision,
                             'reason', i.reason, 'policy_ids', i.policy_ids, 'approvals_required', i.approvals_required, 'resource_type', i.resource_type,
                             'resource_id', coalesce(i.applied_id, i.proposed_id), 'resource', i.resource, 'before', i.before, 'verdict', i.verdict,
                             'verdict_reason', i.verdict_reason, 'result', i.result,
                             'edit', CASE WHEN v.idx IS NOT NULL THEN json_build_object('fields', v.fields, 'by', json_build_object('user_id', v.edited_by, 'email', vu.email),
                                       'at', v.edited_at, 'input', v.input, 'resource', v.resource, 'decision', v.decision, 'reason', v.reason, 'policy_ids', v.policy_ids) END)
                             ORDER BY i.idx)
                    FROM changeset_items i
                    LEFT JOIN changeset_item_edits v ON v.edit_id = r.edit_id AND v.idx = i.idx AND cardinality(v.fields) > 0
                    LEFT JOIN users vu ON vu.id = v.edited_by
                    WHERE i.changeset_id = c.id))
          FROM changesets c WHERE c.id = r.changeset_id) AS changeset,
         (SELECT json_build_object('id', w.id, 'state', ${trustWindowStateSql('w')}, 'match', w.match, 'uses', w.uses, 'max_uses', w.max_uses,
                   'expires_at', w.expires_at)
          FROM trust_windows w WHERE w.review_id = r.id AND w.org_id = r.org_id) AS trust_window
  FROM reviews r
  LEFT JOIN applied_writes aw ON aw.workflow_id = r.workflow_id AND aw.org_id = r.org_id
  LEFT JOIN review_edits e ON e.id = r.edit_id
  LEFT JOIN users eu ON eu.id = e.edited_by
  JOIN gate_decisions d ON d.id = r.decision_id
  JOIN api_keys k ON k.id = d.api_key_id
  LEFT JOIN users u ON u.id = r.decided_by`;

/**
 * A page of the queue. The page's ids are found first, by a query that reads the organization's indexes alone
 * (and the decisions when a filter asks); the reviews are then read whole. Asked in one query, PostgreSQL would
 * walk the primary key back from the newest review of every organization for the wide rows, passing over all
 * of another organization's newer reviews (0.2 s at 100,000 behind one of 1,000,000).
 */
export async function listReviews(db: Queryable, orgId: string, input: z.infer<typeof listReviewsInput>): Promise<Page<Review>> {
  const after = decodeCursor(input.cursor);
  const { where, params } = reviewFiltersSql(orgId, input, 3);
  const decisionFiltered = input.api_key_id !== undefined || input.operation !== undefined;
  const { rows } = await db.query(
    `WITH page AS (
       SELECT r.id FROM reviews r ${decisionFiltered ? 'JOIN gate_decisions d ON d.id = r.decision_id' : ''}
       WHERE ${where} AND ($1::text IS NULL OR r.id < $1)
       ORDER BY r.id DESC LIMIT $2
     )
     ${selectReview}
     WHERE r.id IN (SELECT id FROM page)
     ORDER BY r.id DESC`,
    [after ?? null, input.limit + 1, ...params],
  );
  return toPage(rows.map(reviewFromRow), input.limit);
}

export async function getReview(db: Queryable, orgId: string, reviewId: string): Promise<Review> {
  const { rows } = await db.query(`${selectReview} WHERE r.org_id = $1 AND r.id = $2`, [orgId, reviewId]);
  if (!rows[0]) throw new AppError('not_found', `review ${reviewId} was not found`);
  return reviewFromRow(rows[0]);
}

function iso(value: unknown): string | null {
  return value ? (value as Date).toISOString() : null;
}

function reviewFromRow(row: QueryResultRow): Review {
  return {
    id: row.id,
    status: row.effective_status,
    operation: row.operation,
    proposed: row.input,
    resource: row.resource,
    before: row.before ?? null,
    policy: {
      decision_id: row.decision_id,
      reason: row.reason,
      policy_ids: row.policy_ids,
      policy_version: row.policy_version,
      errors: row.policy_errors,
    },
    submitted_by: { api_key_id: row.api_key_id, api_key_label: row.api_key_label, api_key_label_verified: row.api_key_label_verified, interface: row.interface },
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at)!,
    escalation: row.escalated_to ? { to: row.escalated_to, at: iso(row.escalated_at)! } : null,
    edit: row.edit_id
      ? {
          id: row.edit_id,
          fields: row.edit_fields,
          by: { user_id: row.edit_by, email: row.edit_by_email },
          at: iso(row.edit_at)!,
          input: row.edit_input,
          resource: row.edit_resource,
          decision: { decision: row.edit_decision, reason: row.edit_reason, policy_ids: row.edit_policy_ids, policy_version: row.edit_policy_version },
        }
      : null,
    approvals: {
      required: row.approvals_required,
      given: (row.approvals_given as Review['approvals']['given']).map((given) => ({
        ...given,
        at: new Date(given.at).toISOString(),
      })),
    },
    decided_at: iso(row.decided_at),
    decided_by: row.decided_by ? { user_id: row.decided_by, email: row.decided_by_email } : null,
    decided_via: row.decided_via ?? null,
    withdrawn: row.withdrawn_reason
      ? { reason: row.withdrawn_reason, by: { type: row.withdrawn_by_type, id: row.withdrawn_by_id, name: row.withdrawn_by_name ?? null }, at: iso(row.decided_at)! }
      : null,
    comment: row.comment,
    applied_at: iso(row.applied_at),
    result: row.result ?? null,
    failure: row.failure ?? null,
    workflow_id: row.workflow_id,
    undone_by: row.undone_by ?? null,
    undone_at: iso(row.undone_at),
    undoable_until: iso(row.undoable_until),
    changeset: row.changeset ? changesetOf(row.changeset) : null,
    trust_window: row.trust_window ? { ...row.trust_window, expires_at: new Date(row.trust_window.expires_at).toISOString() } : null,
  };
}

type StoredChangeset = Omit<NonNullable<Review['changeset']>, 'items'> & { items: Omit<NonNullable<Review['changeset']>['items'][number], 'references'>[] };

/** A changeset as stored, each item with the records of earlier items its input names by ref. */
function changesetOf(stored: StoredChangeset): NonNullable<Review['changeset']> {
  const makers = new Map(stored.items.filter((item) => item.ref !== null).map((item) => [item.ref!, item]));
  return {
    ...stored,
    items: stored.items.map((item) => ({
      ...item,
      ...(item.edit ? { edit: { ...item.edit, at: new Date(item.edit.at).toISOString() } } : {}),
      references: refsIn(item.input).flatMap(({ path, name }) => {
        const maker = makers.get(name);
        return maker ? [{ field: path.join('.'), ref: name, item: maker.index, resource_type: maker.resource_type }] : [];
      }),
    })),
  };
}

/**
 * Memories belong to the key that wrote them: another key reading the queue learns that one is held, not
 * what it says. People who review see everything.
 */
export function asSeenByKey(seen: Review, apiKeyId: string): Review {
  // Trust windows are for people: agents neither see nor change them.
  const review = { ...seen, trust_window: null };
  if (review.submitted_by.api_key_id === apiKeyId) return review;
  const holdsMemories = review.changeset?.items.some((item) => item.operation.startsWith('memories.'));
  if (holdsMemories) {
    // A changeset with memories: those items are redacted, and the changeset's own copies of them with them.
    const redacted = { redacted: true };
    const items = review.changeset!.items.map((item) =>
      item.operation.startsWith('memories.')
        ? { ...item, input: redacted, references: [], resource: redacted, before: item.before && redacted, result: null, edit: item.edit && { ...item.edit, input: redacted, resource: redacted } }
        : item,
    );
    // A reviewer's edit of the changeset holds every item's input too.
    const edit = review.edit && { ...review.edit, input: redacted, resource: redacted };
    return { ...review, proposed: redacted, resource: redacted, result: null, edit, changeset: { ...review.changeset!, items } };
  }
  if (!review.operation.startsWith('memories.')) return review;
  return {
    ...review,
    proposed: { redacted: true },
    resource: { redacted: true },
    before: review.before && { redacted: true },
    edit: review.edit && { ...review.edit, input: { redacted: true }, resource: { redacted: true } },
    result: null,
  };
}

/**
 * A key follows its own held writes; another key's it reads only with `mayReadQueue` (the reviews.read
 * ability), and then as asSeenByKey shows them. Any other review is not found.
 */
export async function followReview(
  db: Queryable,
  orgId: string,
  follower: { apiKeyId: string; mayReadQueue: boolean },
  reviewId: string,
): Promise<z.infer<typeof reviewProgressSchema>> {
  const review = asSeenByKey(await getReview(db, orgId, reviewId), follower.apiKeyId);
  if (review.submitted_by.api_key_id !== follower.apiKeyId && !follower.mayReadQueue) {
    throw new AppError('not_found', `review ${reviewId} was not found`);
  }
  return {
    id: review.id,
    status: review.status,
    operation: review.operation,
    reason: review.policy.reason,
    expires_at: review.expires_at,
    edited: review.edit && { fields: review.edit.fields, input: review.edit.input },
    approvals_required: review.approvals.required,
    approvals_given: review.approvals.given.length,
    decided_at: review.decided_at,
    withdrawn_reason: review.withdrawn?.reason ?? null,
    comment: review.comment,
    applied: review.applied_at !== null,
    result: review.result,
    failure: review.failure,
    write: review.workflow_id,
    undone_by: review.undone_by,
  };
}


/**
 * The payload a passkey-signed verdict signed, by its digest (the event's `payload_digest`), for an audit export to
 * carry beside the signed event; null when none is kept.
 */
export async function signedPayload(db: Queryable, orgId: string, digest: string): Promise<Record<string, unknown> | null> {
  const { rows } = await db.query('SELECT payload FROM signed_payloads WHERE org_id = $1 AND digest = $2', [orgId, digest]);
  return rows[0]?.payload ?? null;
}
