import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toActivityFailure } from '../../activities';
import { writeRefusedFailure } from '../../domain/gate/contract';
import { applyGatedWrite } from '../../domain/gate/apply';
import { recordDecision } from '../../domain/gate/decide';
import { createTask } from '../../domain/resources/tasks';
import { recordVerdict } from '../../domain/gate/reviews/verdicts';
import { findGatedWrite } from '../../domain/resources';
import { reviewerRoles } from '../../domain/identity/actors';
import { createApiKey } from '../../domain/identity/api-keys';
import { addPerson, signIn } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;

beforeAll(async () => {
  h = await startHarness({ answerTimeoutMs: 2000, reviewRecheckMs: 300 });
  org = await h.createOrganization();
  // Stands in for data that changed under a held write: the database refuses these titles.
  await h.db.query(`
    CREATE OR REPLACE FUNCTION test_refuse_titles() RETURNS trigger AS $$
    BEGIN
      IF NEW.title LIKE '%refused by the database%' THEN
        RAISE EXCEPTION 'refused for the test' USING ERRCODE = '23514';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await h.db.query(`CREATE OR REPLACE TRIGGER test_refuse_titles BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION test_refuse_titles()`);
});
afterAll(async () => {
  await h?.db.query('DROP TRIGGER IF EXISTS test_refuse_titles ON tasks');
  await h?.close();
});

const post = (title: string, headers: Record<string, string> = {}) =>
  h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title }, headers });
const countTitled = async (title: string) =>
  (await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND title = $2', [org.organization.id, title])).rows[0].n;

describe('when the worker is down', () => {
  it('answers 503 in time; the write still happens once, and a retry with the same Idempotency-Key learns it', async () => {
    await h.stopWorker();
    try {
      const first = await post('written while the worker was down', { 'idempotency-key': 'worker-down-1' });
      expect(first.statusCode).toBe(503);
      expect(json(first).error).toMatchObject({
        code: 'unavailable',
        details: { workflow_id: expect.any(String), may_still_complete: true, idempotency_key: 'worker-down-1' },
      });
      expect(json(first).error.message).toContain('it may still complete');
      expect(json(first).error.message).toContain('Retry with the same Idempotency-Key');

      const unkeyed = await post('unkeyed while the worker was down');
      expect(unkeyed.statusCode).toBe(503);
      expect(json(unkeyed).error.message).toContain('send an Idempotency-Key');
    } finally {
      await h.startWorker();
    }
    const retry = await post('written while the worker was down', { 'idempotency-key': 'worker-down-1' });
    expect(retry.statusCode).toBe(201);
    expect(await countTitled('written while the worker was down')).toBe(1);
    await expect.poll(() => countTitled('unkeyed while the worker was down'), { timeout: 10_000 }).toBe(1);
  });
});

describe('a write sent just before its key is revoked, decided after', () => {
  it('is refused when its run decides it (the worker was down): nothing held for a person, nothing written', async () => {
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'Agent revoked mid-flight', access: 'read_write' });
    const owner = await signIn(h.app, org.organization, await addPerson(h.db, org.organization, 'owner'));
    const sent: { title: string; workflowId: string }[] = [];
    await h.stopWorker();
    try {
      for (const title of ['review the write sent before revocation', 'the allowed write sent before revocation']) {
        const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title }, headers: { 'idempotency-key': title.replaceAll(' ', '-') } });
        expect(response.statusCode, response.body).toBe(503);
        sent.push({ title, workflowId: json(response).error.details.workflow_id });
      }
      const items = [{ operation: 'tasks.create', input: { title: 'review the changeset sent before revocation' } }];
      const changeset = await h.request({ method: 'POST', url: '/api/v1/changesets', token: key.token, payload: { items }, headers: { 'idempotency-key': 'changeset-before-revocation' } });
      expect(changeset.statusCode, changeset.body).toBe(503);
      sent.push({ title: 'review the changeset sent before revocation', workflowId: json(changeset).error.details.workflow_id });

      // Nothing of it is held yet, so the revocation withdraws nothing.
      const revoked = await owner.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
      expect(revoked.statusCode, revoked.body).toBe(200);
    } finally {
      await h.startWorker();
    }

    for (const { title, workflowId } of sent) {
      const result = await h.temporal.workflow.getHandle(workflowId).result();
      expect(result.answer, title).toMatchObject({ outcome: 'failed', code: 'unauthorized' });
      expect(result.answer.message).toContain('was revoked before this write was decided');
      const { rows } = await h.db.query(
        `SELECT d.decision, d.refusal, (SELECT count(*)::int FROM reviews r WHERE r.workflow_id = d.workflow_id) AS reviews FROM gate_decisions d WHERE d.workflow_id = $1`,
        [workflowId],
      );
      expect(rows, title).toEqual([{ decision: 'refused', refusal: 'unauthorized', reviews: 0 }]);
    }
    for (const { title } of sent) expect(await countTitled(title), title).toBe(0);
    const queue = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: org.reviewerToken })).data;
    expect(queue.filter((review: { workflow_id?: string }) => sent.some((one) => one.workflowId === review.workflow_id))).toEqual([]);
  }, 90_000);
});

describe('a lost signal', () => {
  it('a decision recorded without its signal is still acted on, by the periodic re-read', async () => {
    const held = json(await post('review without a signal'));
    const { rows } = await h.db.query(`SELECT id FROM users WHERE org_id = $1 AND role = 'reviewer'`, [org.organization.id]);
    // The decision is committed; the workflow is not told (as when the api stopped right after the commit).
    await recordVerdict(
      h.db,
      { orgId: org.organization.id, reviewId: held.review.id, person: { userId: rows[0].id, role: 'reviewer' }, verdict: 'approved', via: 'console' },
      { writeOf: findGatedWrite, reviewEnded: async () => {}, decidingRoles: reviewerRoles },
    );
    await expect.poll(() => countTitled('review without a signal'), { timeout: 10_000 }).toBe(1);
  });
});

describe('writes the database refuses', () => {
  it.each([
    ['a date before year 1', { title: 'x', due_on: '0000-01-01' }, 'due_on'],
    ['a NUL character', { title: 'a\u0000b' }, 'title'],
    ['a NUL in a tag', { title: 'x', tags: ['a\u0000'] }, 'tags.0'],
    ['half a surrogate pair', { title: 'broken \ud800 text' }, 'title'],
  ])('are refused up front (422) when the value is one PostgreSQL cannot store: %s', async (_label, payload, field) => {
    const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload });
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('Allow: a write the database refuses answers 409 at once (no retries), nothing written', async () => {
    const started = Date.now();
    const response = await post('allow refused by the database');
    expect(response.statusCode).toBe(409);
    expect(json(response).error.code).toBe('conflict');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(await countTitled('allow refused by the database')).toBe(0);
  });

  it('after approval: the failure is recorded on the review and in the audit trail, and the workflow ends', async () => {
    const held = json(await post('review refused by the database'));
    const approved = json(
      await h.request({ method: 'POST', url: `/api/v1/reviews/${held.review.id}/approve`, token: org.reviewerToken }),
    ).data;
    expect(approved).toMatchObject({ status: 'approved', applied_at: null, result: null, failure: { code: 'conflict' } });
    const outcome = await h.temporal.workflow.getHandle(approved.workflow_id).result();
    expect(outcome.resolution).toMatchObject({ status: 'approved', failure: { code: 'conflict' } });
    const { rows } = await h.db.query('SELECT type FROM audit_events WHERE review_id = $1 ORDER BY id', [held.review.id]);
    expect(rows.map((row) => row.type)).toEqual(['gate.decided', 'review.approved', 'write.failed']);
  });
});

describe('one workflow decides one write', () => {
  it('refuses to record or apply a different write under a workflow id that has decided one', async () => {
    const first = org.taskRequest('one write');
    const other = org.taskRequest('another write');
    const workflowId = `${org.organization.slug}:tasks.create:one-write`;
    const decision = {
      workflowId,
      decision: 'allow' as const,
      reason: 'ok',
      policyIds: ['allow-writes'],
      policyErrors: [],
      policyVersion: 1,
      resource: {},
      context: {},
      reviewExpiresAt: new Date(Date.now() + 60_000),
    };
    await recordDecision(h.db, { ...decision, request: first });
    await expect(recordDecision(h.db, { ...decision, request: other })).rejects.toMatchObject({ code: 'conflict' });
    await applyGatedWrite(h.db, createTask, workflowId, first);
    await expect(applyGatedWrite(h.db, createTask, workflowId, other)).rejects.toMatchObject({ code: 'conflict' });
    expect(await countTitled('another write')).toBe(0);
  });

  it('never applies a write that was denied, or held and not approved', async () => {
    for (const decision of ['deny', 'review'] as const) {
      const held = org.taskRequest(`${decision} never applied`);
      const workflowId = `${org.organization.slug}:tasks.create:${decision}-never`;
      const recorded = await recordDecision(h.db, {
        workflowId,
        request: held,
        decision,
        reason: 'no',
        policyIds: [],
        policyErrors: [],
        policyVersion: 1,
        resource: {},
        context: {},
        reviewExpiresAt: new Date(Date.now() + 60_000),
      });
      await expect(applyGatedWrite(h.db, createTask, workflowId, held, recorded.review?.id)).rejects.toThrow(/denied|not approved/);
      expect(await countTitled(`${decision} never applied`)).toBe(0);
    }
  });
});

describe('activity errors', () => {
  it.each([
    ['22007', 'validation_failed'],
    ['23505', 'conflict'],
    ['23514', 'conflict'],
  ])('PostgreSQL %s is final: a refusal with the code %s', (code, refusal) => {
    const failure = toActivityFailure(Object.assign(new Error('db said no'), { code }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: writeRefusedFailure, nonRetryable: true, details: [{ code: refusal }] });
    expect((failure as Error).message).not.toContain('db said no');
  });

  it.each(['08006', '57P01', '53300'])('PostgreSQL %s (connection or server trouble) is retried', (code) => {
    const error = Object.assign(new Error('connection lost'), { code });
    expect(toActivityFailure(error)).toBe(error);
  });
});
