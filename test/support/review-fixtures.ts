import type { Queryable } from '../../db/database';
import { newId } from '../../domain/kit/ids';

export interface HeldReviewRows {
  /** The key that submitted them (key_…). */
  apiKeyId: string;
  count: number;
  operation?: string;
  /** How long ago they were held, in milliseconds (default: now). */
  heldAgoMs?: number;
  /** How long from now they expire, in milliseconds (default: a week); negative for past deadlines. */
  expiresInMs?: number;
  /** Default pending; a decided status for the queue's history. */
  status?: 'pending' | 'approved' | 'denied' | 'expired';
}

/**
 * Reviews written straight to the database, as the gate records them (a decision and the review it opened), without
 * their workflows: rows to list and count (a queue at its cap in a second), never to decide.
 */
export async function insertHeldReviews(db: Queryable, orgId: string, rows: HeldReviewRows): Promise<string[]> {
  const decisionIds = Array.from({ length: rows.count }, () => newId('dec'));
  const reviewIds = Array.from({ length: rows.count }, () => newId('rev'));
  const operation = rows.operation ?? 'tasks.create';
  const status = rows.status ?? 'pending';
  await db.query(
    `WITH given AS (
       SELECT d AS decision_id, r AS review_id, 'fixture-' || r AS workflow_id, now() - make_interval(secs => $4::double precision / 1000) AS held_at
       FROM unnest($1::text[], $2::text[]) AS t(d, r)
     ), decided AS (
       INSERT INTO gate_decisions (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_version, input, resource, context, created_at)
       SELECT decision_id, $3, workflow_id, $5, 'rest', $6, 'review', 'Held by a fixture', '{fixture}', 1,
              jsonb_build_object('title', 'fixture ' || review_id), jsonb_build_object('title', 'fixture ' || review_id), '{}', held_at
       FROM given
       RETURNING id
     )
     INSERT INTO reviews (id, org_id, decision_id, workflow_id, status, created_at, expires_at, decided_at)
     SELECT g.review_id, $3, g.decision_id, g.workflow_id, $7, g.held_at, now() + make_interval(secs => $8::double precision / 1000),
            CASE WHEN $7 IN ('approved', 'denied') THEN now() END
     FROM given g JOIN decided ON decided.id = g.decision_id`,
    [decisionIds, reviewIds, orgId, rows.heldAgoMs ?? 0, operation, rows.apiKeyId, status, rows.expiresInMs ?? 7 * 86_400_000],
  );
  return reviewIds;
}
