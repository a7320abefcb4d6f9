import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { searchAttributes } from '../../workflows/messages';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// A review's fifth state on the real Temporal dev server and PostgreSQL: revoking a key in the console withdraws
// its writes still held for review, in the revocation's transaction. A withdrawn review says who withdrew it and
// why, nobody can approve or deny it by any path, and its workflow ends at once without applying anything (the
// harness keeps the worker's 15-minute re-read: only the api's nudge ends it within seconds).

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let owner: TestPerson;
let ownerSession: ConsoleSession;
let reviewerSession: ConsoleSession;
let globexOwnerSession: ConsoleSession;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  owner = await addPerson(h.db, acme.organization, 'owner');
  ownerSession = await signIn(h.app, acme.organization, owner);
  reviewerSession = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'reviewer'));
  globexOwnerSession = await signIn(h.app, globex.organization, await addPerson(h.db, globex.organization, 'owner'));
});
afterAll(() => h?.close());

/** A read-write key of its own for one test, to be revoked. */
const doomedKey = (label: string) => createApiKey(h.db, { orgId: acme.organization.id, label, access: 'read_write' });

async function hold(token: string, title: string): Promise<{ reviewId: string; workflowId: string }> {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return { reviewId: json(response).review.id, workflowId: response.headers['x-gatehouse-workflow-id'] as string };
}

async function holdChangeset(token: string, title: string): Promise<{ reviewId: string; workflowId: string }> {
  const items = [
    { operation: 'tasks.create', input: { title } },
    { operation: 'tasks.create', input: { title: `${title}: the allowed item` } },
  ];
  const response = await h.request({ method: 'POST', url: '/api/v1/changesets', token, payload: { items } });
  expect(response.statusCode, response.body).toBe(202);
  return { reviewId: json(response).review.id, workflowId: response.headers['x-gatehouse-workflow-id'] as string };
}

const readReview = async (reviewId: string) => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: acme.reviewerToken })).data;

const tasksTitled = async (prefix: string) =>
  (await h.db.query(`SELECT title FROM tasks WHERE org_id = $1 AND title LIKE $2 || '%'`, [acme.organization.id, prefix])).rows.map((row) => row.title);

/** The run as Temporal describes it, once it is no longer running (within `ms`). */
async function runEnded(workflowId: string, ms: number) {
  const handle = h.temporal.workflow.getHandle(workflowId);
  await expect.poll(async () => (await handle.describe()).status.name, { timeout: ms, interval: 200 }).not.toBe('RUNNING');
  return handle.describe();
}

describe('revoking a key in the console', () => {
  it('withdraws its held writes (a single write and a changeset) at once, saying who and why; others stay as they were', async () => {
    const key = await doomedKey('Doomed agent');
    const single = await hold(key.token, 'review the doomed write');
    const changeset = await holdChangeset(key.token, 'review the doomed changeset');
    const approvedBefore = await hold(key.token, 'review the write approved before');
    const approval = await h.request({ method: 'POST', url: `/api/v1/reviews/${approvedBefore.reviewId}/approve`, token: acme.reviewerToken });
    expect(approval.statusCode, approval.body).toBe(200);
    const othersWrite = await hold(acme.readWriteToken, 'review the other agent’s write');

    // Another organization's owner reaches nothing of it.
    const stranger = await globexOwnerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
    expect(stranger.statusCode).toBe(404);
    expect((await readReview(single.reviewId)).status).toBe('pending');

    const revoked = await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(json(revoked).data.state).toBe('revoked');

    for (const { reviewId } of [single, changeset]) {
      const review = await readReview(reviewId);
      expect(review).toMatchObject({
        status: 'withdrawn',
        decided_by: null,
        decided_via: null,
        withdrawn: { reason: 'key_revoked', by: { type: 'user', id: owner.user.id, name: owner.email }, at: review.decided_at },
      });
      expect(review.decided_at).not.toBeNull();
    }
    expect(await readReview(approvedBefore.reviewId)).toMatchObject({ status: 'approved', withdrawn: null });
    expect(await readReview(othersWrite.reviewId)).toMatchObject({ status: 'pending', withdrawn: null });

    // The trail: one review.withdrawn per review, by the owner, with why, beside the key's revocation.
    const { rows: trail } = await h.db.query(
      `SELECT type, actor_type, actor_id, review_id, data FROM audit_events WHERE org_id = $1 AND (type = 'review.withdrawn' OR resource_id = $2) ORDER BY created_at, id`,
      [acme.organization.id, key.key.id],
    );
    expect(trail.map((event) => [event.type, event.review_id])).toEqual([
      ['api_key.created', null],
      ['api_key.revoked', null],
      ['review.withdrawn', single.reviewId],
      ['review.withdrawn', changeset.reviewId],
    ]);
    for (const event of trail.filter((row) => row.type === 'review.withdrawn')) {
      expect(event).toMatchObject({ actor_type: 'user', actor_id: owner.user.id, data: { reason: 'key_revoked', api_key_id: key.key.id } });
    }

    // The queue: withdrawn a filter away, out of the pending ones.
    const withdrawn = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=withdrawn', token: acme.reviewerToken })).data.map((review: { id: string }) => review.id);
    expect(withdrawn.sort()).toEqual([single.reviewId, changeset.reviewId].sort());
    const pending = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: acme.reviewerToken })).data.map((review: { id: string }) => review.id);
    expect(pending).toContain(othersWrite.reviewId);
    expect(pending).not.toContain(single.reviewId);
    const counted = await ownerSession.request({ method: 'GET', url: '/console/api/v1/reviews/count?status=withdrawn' });
    expect(json(counted).data.count).toBe(2);

    // Both workflows end at once (told by the api; their own re-read is 15 minutes away), applying nothing.
    for (const { workflowId } of [single, changeset]) {
      const ended = await runEnded(workflowId, 15_000);
      expect(ended.status.name).toBe('COMPLETED');
      expect(ended.typedSearchAttributes.get(searchAttributes.reviewStatus)).toBe('withdrawn');
      expect((await h.temporal.workflow.getHandle(workflowId).result()).resolution).toEqual({ status: 'withdrawn' });
      const { rows } = await h.db.query('SELECT 1 FROM applied_writes WHERE workflow_id = $1', [workflowId]);
      expect(rows).toEqual([]);
    }
    expect(await tasksTitled('review the doomed')).toEqual([]);
    expect(await tasksTitled('review the write approved before')).toEqual(['review the write approved before']);
    expect((await h.temporal.workflow.getHandle(othersWrite.workflowId).describe()).status.name).toBe('RUNNING');
  });

  it('nobody can approve or deny a withdrawn write: the console, a personal token, a batch, each told it was withdrawn', async () => {
    const key = await doomedKey('Refused agent');
    const first = await hold(key.token, 'review the refused write');
    const second = await hold(key.token, 'review the refused second write');
    expect((await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` })).statusCode).toBe(200);

    const refusals = [
      await reviewerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${first.reviewId}/approve`, payload: {} }),
      await reviewerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${first.reviewId}/deny`, payload: {} }),
      await h.request({ method: 'POST', url: `/api/v1/reviews/${first.reviewId}/approve`, token: acme.reviewerToken }),
      await h.request({ method: 'POST', url: `/api/v1/reviews/${first.reviewId}/approve`, token: acme.reviewerToken, payload: { edit: { title: 'review it anyway' } } }),
    ];
    for (const refused of refusals) {
      expect(refused.statusCode, refused.body).toBe(409);
      expect(json(refused).error).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('was withdrawn (the API key that made the write was revoked)'),
        details: { status: 'withdrawn', withdrawn_reason: 'key_revoked' },
      });
    }
    const batch = await h.request({
      method: 'POST',
      url: '/api/v1/reviews/batch',
      token: acme.reviewerToken,
      payload: { review_ids: [first.reviewId, second.reviewId], verdict: 'approved' },
    });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(json(batch).data.decided).toEqual([]);
    expect(json(batch).data.refused).toEqual([
      { id: first.reviewId, code: 'conflict', message: expect.stringContaining('withdrawn') },
      { id: second.reviewId, code: 'conflict', message: expect.stringContaining('withdrawn') },
    ]);
    for (const { reviewId } of [first, second]) expect(await readReview(reviewId)).toMatchObject({ status: 'withdrawn', decided_by: null, approvals: { given: [] } });
    expect(await tasksTitled('review the refused')).toEqual([]);
  });

  it('revoking a key revoked before withdrawals existed withdraws what of it still waits, and records no second revocation', async () => {
    const key = await doomedKey('Revoked long ago');
    const held = await hold(key.token, 'review the write of a key revoked long ago');
    // As a key revoked before this version left it: revoked, its held write still pending.
    await h.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.key.id]);
    expect((await readReview(held.reviewId)).status).toBe('pending');

    const again = await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
    expect(again.statusCode, again.body).toBe(200);
    expect(await readReview(held.reviewId)).toMatchObject({ status: 'withdrawn', withdrawn: { reason: 'key_revoked', by: { type: 'user', id: owner.user.id } } });
    const { rows } = await h.db.query(`SELECT type FROM audit_events WHERE org_id = $1 AND (resource_id = $2 OR review_id = $3) ORDER BY created_at, id`, [
      acme.organization.id,
      key.key.id,
      held.reviewId,
    ]);
    expect(rows.map((row) => row.type)).toEqual(['api_key.created', 'gate.decided', 'review.withdrawn']);
    expect((await runEnded(held.workflowId, 15_000)).status.name).toBe('COMPLETED');
  });

  it('a key with nothing held is revoked as before: no withdrawal recorded', async () => {
    const key = await doomedKey('Idle agent');
    const revoked = await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
    expect(revoked.statusCode).toBe(200);
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND type = 'review.withdrawn' AND data->>'api_key_id' = $2`, [
      acme.organization.id,
      key.key.id,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
