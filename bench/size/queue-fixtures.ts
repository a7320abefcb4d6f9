import type { Database } from '../../db/database';
import type { FixtureIds, SizeOrganization } from './fixtures';

// An organization's review queue after a long time of use, seeded by SQL: `decided` reviews held over the past
// year and decided (7 in 10 approved and applied, 2 denied, 1 expired), then `pending` reviews held over the last
// two days, still waiting. Each review has its gate decision, as a held write has; an approved one its approval
// and its applied write. The rows are those the service writes (domain/gate), in bulk.

/** The operations of the seeded reviews, in turn; `rareOperation` is one review in a thousand. */
export const queueOperations = ['tasks.create', 'tasks.update', 'expenses.create', 'invoices.update', 'customers.update', 'bookings.create', 'work_logs.create'];
export const rareOperation = 'products.delete';

/** A decided review lives a day; a pending one three (held within two days, so each expires within one to three). */
const decidedLifetime = "interval '1 day'";
const pendingLifetime = "interval '3 days'";

/**
 * The seeded reviews as rows `s(i, sfx, held_at, status, key, op)`: $1 the organization, $2 decided, $3 pending,
 * $4 the keys, $5 the operations, $6 the rare operation. The same for every statement below, so that a review, its
 * decision, approval and applied write agree.
 */
function seriesSql(ids: FixtureIds): string {
  return `WITH s AS (
    SELECT i, sfx, held_at, key, op,
           CASE WHEN i > $2::int THEN 'pending' WHEN h % 10 < 7 THEN 'approved' WHEN h % 10 < 9 THEN 'denied' ELSE 'expired' END AS status
    FROM (
      SELECT i, ${ids.suffixSql('i')} AS sfx,
             CASE WHEN i <= $2::int THEN now() - interval '2 days' - (($2::int - i)::float8 / $2::int) * interval '363 days'
                  ELSE now() - (($2::int + $3::int - i + 0.5) / $3::float8) * interval '2 days' END AS held_at,
             (i::bigint * 2654435761) % 4294967296 AS h,
             ($4::text[])[1 + i % cardinality($4::text[])] AS key,
             CASE WHEN i % 1000 = 7 THEN $6::text ELSE ($5::text[])[1 + (i / 4) % cardinality($5::text[])] END AS op
      FROM generate_series(1, $2::int + $3::int) i
    ) numbered
  )`;
}

export interface QueueSeed {
  decided: number;
  pending: number;
  /** Wall time of the inserts, and of the VACUUM ANALYZE after them. */
  seconds: number;
  vacuumAnalyzeSeconds: number;
}

export async function seedReviewQueue(db: Database, organization: SizeOrganization, ids: FixtureIds, counts: { decided: number; pending: number }): Promise<QueueSeed> {
  if (counts.decided < 1 || counts.pending < 1) throw new Error('the queue is seeded with at least one decided and one pending review');
  const started = performance.now();
  const series = seriesSql(ids);
  const params = [organization.orgId, counts.decided, counts.pending, organization.keyIds, queueOperations, rareOperation];
  const task = `jsonb_build_object('id', 'task_' || sfx, 'title', 'review size task ' || i, 'status', 'todo', 'priority', 'normal', 'tags', '[]'::jsonb)`;
  await db.query(
    `${series}
     INSERT INTO gate_decisions (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_version, input, resource, context, created_at)
     SELECT 'dec_' || sfx, $1, 'size-' || sfx, op, 'rest', key, 'review', 'The title asks for a person''s review', '{review-by-title}', 1,
            jsonb_build_object('title', 'review size task ' || i, 'status', 'todo'), ${task}, '{}'::jsonb, held_at
     FROM s`,
    params,
  );
  await db.query(
    `${series}
     INSERT INTO reviews (id, org_id, decision_id, workflow_id, status, created_at, expires_at, decided_at, decided_by, decided_via, comment, applied_at, result)
     SELECT 'rev_' || sfx, $1, 'dec_' || sfx, 'size-' || sfx, status, held_at,
            held_at + CASE status WHEN 'pending' THEN ${pendingLifetime} ELSE ${decidedLifetime} END,
            CASE status WHEN 'pending' THEN NULL WHEN 'expired' THEN held_at + ${decidedLifetime} ELSE held_at + interval '1 hour' END,
            CASE WHEN status IN ('approved', 'denied') THEN $7 END,
            CASE WHEN status IN ('approved', 'denied') THEN 'console' END,
            CASE status WHEN 'denied' THEN 'Not this one' END,
            CASE status WHEN 'approved' THEN held_at + interval '1 hour 1 second' END,
            CASE status WHEN 'approved' THEN ${task} END
     FROM s`,
    [...params, organization.reviewerId],
  );
  await db.query(
    `${series}
     INSERT INTO review_approvals (review_id, user_id, org_id, approved_at, via)
     SELECT 'rev_' || sfx, $7, $1, held_at + interval '1 hour', 'console' FROM s WHERE status = 'approved'`,
    [...params, organization.reviewerId],
  );
  await db.query(
    `${series}
     INSERT INTO applied_writes (workflow_id, org_id, operation, resource_type, resource_id, result, applied_at, record_table, write_kind)
     SELECT 'size-' || sfx, $1, op, 'Task', 'task_' || sfx, ${task}, held_at + interval '1 hour 1 second', 'tasks', 'create'
     FROM s WHERE status = 'approved'`,
    params,
  );
  const seeded = performance.now();
  await db.query('VACUUM ANALYZE gate_decisions, reviews, review_approvals, applied_writes');
  return { ...counts, seconds: (seeded - started) / 1000, vacuumAnalyzeSeconds: (performance.now() - seeded) / 1000 };
}
