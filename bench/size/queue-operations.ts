import type { Queryable } from '../../db/database';
import type { Operation } from '../measure';
import type { SizeOrganization } from './fixtures';
import { cursorAt, dataRequest, expectedPage, pageRequest, query, sizePageSize } from './probes';
import { rareOperation } from './queue-fixtures';

/**
 * The review queue's timed requests. `pendingFirst` is the queue as the console opens it (pending, newest first)
 * and the main figure; `count*` and `filterChoices` are the console's own calls beside it, over a session.
 */
export const queueOperationNames = [
  'pendingFirst', 'pendingDeep', 'anyFirst', 'anyDeep', 'approved', 'expired', 'pendingByKey', 'byKey', 'pendingByOperation', 'byRareOperation',
  'pendingHeldBefore', 'pendingExpiresBefore', 'countPending', 'countAny', 'filterChoices',
] as const;
export type QueueOperationName = (typeof queueOperationNames)[number];

/** A review's status as it reads (a pending review past its deadline reads expired): the bench's own rule. */
const status = `CASE WHEN r.status = 'pending' AND r.expires_at > now() THEN 'pending' WHEN r.status = 'pending' THEN 'expired' ELSE r.status END`;
const reviewsOf = (condition: string) => `SELECT r.id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.org_id = $1 AND ${condition}`;

export interface QueueUrls {
  apiUrl: string;
  /** The console session's cookie (`name=token`) of the organization's reviewer. */
  sessionCookie: string;
}

/** Every request of the queue for one organization, each with the answer it must give (worked out here). */
export async function queueOperations(db: Queryable, organization: SizeOrganization, urls: QueueUrls, counts: { decided: number; pending: number }): Promise<Record<QueueOperationName, Operation>> {
  const headers = { authorization: `Bearer ${organization.reviewerToken}` };
  const consoleHeaders = { cookie: urls.sessionCookie };
  const reviews = `${urls.apiUrl}/api/v1/reviews`;
  const key = organization.keyIds[1]!;
  const heldBefore = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
  const expiresBefore = new Date(Date.now() + 2 * 24 * 60 * 60 * 1000).toISOString();
  const inOrganization = (item: any) => (organization.keyIds.includes(item.submitted_by?.api_key_id) ? undefined : `submitted by ${item.submitted_by?.api_key_id}, no key of the organization`);
  const withStatus = (wanted: string) => (item: any) => (item.status === wanted ? inOrganization(item) : `status ${item.status}, not ${wanted}`);

  const page = async (name: string, filter: Record<string, string | undefined>, condition: string, params: unknown[], check: (item: any) => string | undefined, depth?: number) => {
    const sql = reviewsOf(condition);
    const deep = depth === undefined ? undefined : await cursorAt(db, sql, [organization.orgId, ...params], depth);
    const expected = await expectedPage(db, sql, [organization.orgId, ...params], deep?.after);
    return pageRequest(`${reviews}?${query({ ...filter, limit: sizePageSize, cursor: deep?.cursor })}`, headers, `reviews ${name}`, expected, check);
  };
  const count = async (name: string, filter: Record<string, string | undefined>, wanted: number) => {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${reviewsOf(filter.status ? `${status} = $2` : 'true')}) ids`, [organization.orgId, ...(filter.status ? [filter.status] : [])]);
    if (rows[0]!.n !== wanted) throw new Error(`the seeded queue holds ${rows[0]!.n} reviews for ${name}, not ${wanted}`);
    return dataRequest(`${urls.apiUrl}/console/api/v1/reviews/count?${query(filter)}`, consoleHeaders, `reviews ${name}`, (data) =>
      data?.count === wanted ? undefined : `count ${String(data?.count)}, expected ${wanted}`,
    );
  };
  const pendingByKey = await db.query<{ key: string; n: number }>(
    `SELECT d.api_key_id AS key, count(*)::int AS n FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.org_id = $1 AND ${status} = 'pending' GROUP BY 1`,
    [organization.orgId],
  );

  return {
    pendingFirst: await page('pending, first page', { status: 'pending' }, `${status} = 'pending'`, [], withStatus('pending')),
    pendingDeep: await page('pending, page 11', { status: 'pending' }, `${status} = 'pending'`, [], withStatus('pending'), 10 * sizePageSize),
    anyFirst: await page('any status, first page', {}, 'true', [], inOrganization),
    anyDeep: await page('any status, half way down', {}, 'true', [], inOrganization, Math.floor((counts.decided + counts.pending) / 2)),
    approved: await page('approved', { status: 'approved' }, `${status} = 'approved'`, [], withStatus('approved')),
    expired: await page('expired', { status: 'expired' }, `${status} = 'expired'`, [], withStatus('expired')),
    pendingByKey: await page('pending of one key', { status: 'pending', api_key_id: key }, `${status} = 'pending' AND d.api_key_id = $2`, [key], (item) =>
      item.submitted_by?.api_key_id === key ? withStatus('pending')(item) : `submitted by ${item.submitted_by?.api_key_id}`,
    ),
    byKey: await page('any status of one key', { api_key_id: key }, 'd.api_key_id = $2', [key], (item) => (item.submitted_by?.api_key_id === key ? undefined : `submitted by ${item.submitted_by?.api_key_id}`)),
    pendingByOperation: await page('pending of one operation', { status: 'pending', operation: 'tasks.update' }, `${status} = 'pending' AND d.operation = 'tasks.update'`, [], (item) =>
      item.operation === 'tasks.update' ? withStatus('pending')(item) : `operation ${item.operation}`,
    ),
    byRareOperation: await page(`any status of ${rareOperation}`, { operation: rareOperation }, 'd.operation = $2', [rareOperation], (item) =>
      item.operation === rareOperation ? inOrganization(item) : `operation ${item.operation}`,
    ),
    pendingHeldBefore: await page('pending held over a day', { status: 'pending', held_before: heldBefore }, `${status} = 'pending' AND r.created_at < $2`, [heldBefore], (item) =>
      Date.parse(item.created_at) < Date.parse(heldBefore) ? withStatus('pending')(item) : `held at ${item.created_at}`,
    ),
    pendingExpiresBefore: await page('pending expiring within two days', { status: 'pending', expires_before: expiresBefore }, `${status} = 'pending' AND r.expires_at < $2`, [expiresBefore], (item) =>
      Date.parse(item.expires_at) < Date.parse(expiresBefore) ? withStatus('pending')(item) : `expires at ${item.expires_at}`,
    ),
    countPending: await count('count pending', { status: 'pending' }, counts.pending),
    countAny: await count('count any status', {}, counts.decided + counts.pending),
    filterChoices: dataRequest(`${urls.apiUrl}/console/api/v1/reviews/filter-choices`, consoleHeaders, 'reviews filter choices', (data) => {
      const keys = data?.keys as Array<{ api_key_id: string; pending: number }> | undefined;
      if (!Array.isArray(keys) || keys.length !== organization.keyIds.length) return `${keys?.length} keys, expected ${organization.keyIds.length}`;
      for (const row of pendingByKey.rows) {
        const shown = keys.find((choice) => choice.api_key_id === row.key);
        if (shown?.pending !== row.n) return `key ${row.key}: ${shown?.pending} pending, expected ${row.n}`;
      }
      const operations = data.operations as Array<{ pending: number }>;
      const pending = operations.reduce((sum, choice) => sum + choice.pending, 0);
      return pending === counts.pending ? undefined : `the operations hold ${pending} pending, expected ${counts.pending}`;
    }),
  };
}
