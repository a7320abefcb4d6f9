import { WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyGatedWrite } from '../../domain/gate/apply';
import { recordDecision } from '../../domain/gate/decide';
import { decideAndApply } from '../../domain/gate/decide-and-apply';
import { AppError } from '../../domain/kit/errors';
import { createTask as createTaskWrite } from '../../domain/resources/tasks';
import { gateAnswerUpdate } from '../../workflows/messages';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
});
afterAll(() => h?.close());

const createTask = (body: unknown, token = org.readWriteToken, headers: Record<string, string> = {}) =>
  h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: body as object, headers });

async function taskTitles(orgId: string): Promise<string[]> {
  const { rows } = await h.db.query('SELECT title FROM tasks WHERE org_id = $1 ORDER BY id', [orgId]);
  return rows.map((row) => row.title);
}

async function decisionsOf(workflowId: string) {
  const { rows } = await h.db.query('SELECT decision, reason, policy_ids FROM gate_decisions WHERE workflow_id = $1', [workflowId]);
  return rows;
}

async function historyOf(workflowId: string) {
  const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
  return history.events ?? [];
}

describe('a gated write', () => {
  it('Allow: answers 201 with the created task, and records the decision in PostgreSQL and Temporal', async () => {
    const response = await createTask({ title: 'Call the supplier', status: 'todo' });
    expect(response.statusCode).toBe(201);
    const body = json(response);
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({ title: 'Call the supplier', status: 'todo', priority: 'normal', tags: [] });
    expect(body.data.id).toMatch(/^task_/);

    const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
    expect(workflowId).toMatch(new RegExp(`^${org.organization.slug}:tasks\\.create:`));
    expect(await decisionsOf(workflowId)).toEqual([
      { decision: 'allow', reason: 'Ordinary writes are allowed', policy_ids: ['allow-writes'] },
    ]);
    const { rows: audit } = await h.db.query('SELECT type FROM audit_events WHERE workflow_id = $1 ORDER BY id', [workflowId]);
    expect(audit.map((row) => row.type)).toEqual(['gate.decided', 'write.applied']);

    // Decided and applied in one local activity: one workflow task, no activity task through Temporal.
    const events = await historyOf(workflowId);
    expect(events.filter((event) => event.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(events.filter((event) => event.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    expect(events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toHaveLength(1);
    // Of the workflow type without patches: no patch marker, no TemporalChangeVersion update. Temporal's floor
    // (update-with-start, no activity) is 7 events; the local activity's marker and the decision kept in a search
    // attribute are the two more.
    expect(events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe('gatedWriteV3');
    const upserts = events.filter((event) => event.upsertWorkflowSearchAttributesEventAttributes);
    expect(upserts).toHaveLength(1);
    expect(Object.keys(upserts[0]!.upsertWorkflowSearchAttributesEventAttributes!.searchAttributes!.indexedFields!)).toEqual(['GatehouseDecision']);
    expect(events).toHaveLength(9);
  });

  it('Deny: answers 403 policy_denied with the reason and policy ids, and writes nothing', async () => {
    const before = await taskTitles(org.organization.id);
    const response = await createTask({ title: 'deny this one' });
    expect(response.statusCode).toBe(403);
    const body = json(response);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'policy_denied', details: { reason: 'The title asks to be denied', policy_ids: ['deny-when-asked'] } },
    });
    expect(body.error.message).toContain('The title asks to be denied');
    expect(await taskTitles(org.organization.id)).toEqual(before);
    expect(await decisionsOf(response.headers['x-gatehouse-workflow-id'] as string)).toHaveLength(1);
  });

  it('a refused write (an unknown id, a stale If-Match) completes its workflow with the refusal; the same key replays it', async () => {
    const update = (id: string, headers: Record<string, string>) =>
      h.request({ method: 'PATCH', url: `/api/v1/tasks/${id}`, token: org.readWriteToken, payload: { title: 'Renamed' }, headers });
    const created = json(await createTask({ title: 'To be renamed' }));
    const refusals = [
      [await update(`task_${'0'.repeat(26)}`, { 'idempotency-key': 'refused-unknown' }), 404, 'not_found'],
      [await update(created.data.id, { 'idempotency-key': 'refused-stale', 'if-match': '"999"' }), 409, 'conflict'],
    ] as const;
    for (const [response, status, code] of refusals) {
      expect(response.statusCode).toBe(status);
      expect(json(response).error.code).toBe(code);
      const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
      const described = await h.temporal.workflow.getHandle(workflowId).describe();
      expect(described.status.name).toBe('COMPLETED');
      expect(await h.temporal.workflow.getHandle(workflowId).result()).toMatchObject({ answer: { outcome: 'failed', code } });
    }
    const again = await update(`task_${'0'.repeat(26)}`, { 'idempotency-key': 'refused-unknown' });
    expect(again.statusCode).toBe(404);
    expect(again.headers['x-gatehouse-workflow-id']).toBe(refusals[0][0].headers['x-gatehouse-workflow-id']);
    expect(json(await h.request({ method: 'GET', url: `/api/v1/tasks/${created.data.id}`, token: org.readWriteToken })).data.title).toBe('To be renamed');
  });

  it('Review then approve: 202 pending_review with the review, then the approval runs the write and answers its result', async () => {
    const response = await createTask({ title: 'review the budget', priority: 'high' });
    expect(response.statusCode).toBe(202);
    const body = json(response);
    expect(body).toMatchObject({
      success: false,
      error: { code: 'pending_review', details: { policy_ids: ['review-when-asked'] } },
      review: { status: 'pending' },
    });
    const reviewId = body.review.id as string;
    expect(response.headers.location).toBe(`http://gatehouse.test/api/v1/reviews/${reviewId}`);
    expect(body.review.url).toBe(response.headers.location);
    expect(await taskTitles(org.organization.id)).not.toContain('review the budget');

    const queue = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: org.reviewerToken }));
    expect(queue.data.map((review: { id: string }) => review.id)).toContain(reviewId);

    const read = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.reviewerToken }));
    expect(read.data).toMatchObject({
      status: 'pending',
      operation: 'tasks.create',
      proposed: { title: 'review the budget', priority: 'high' },
      policy: { reason: 'The title asks for a review', policy_ids: ['review-when-asked'] },
      submitted_by: { api_key_label: 'test agent', interface: 'rest' },
      decided_by: null,
      result: null,
    });
    expect(Date.parse(read.data.expires_at)).toBeGreaterThan(Date.now());

    const approved = await h.request({
      method: 'POST',
      url: `/api/v1/reviews/${reviewId}/approve`,
      token: org.reviewerToken,
      payload: { comment: 'Budget is fine' },
    });
    expect(approved.statusCode).toBe(200);
    const review = json(approved).data;
    expect(review).toMatchObject({ status: 'approved', comment: 'Budget is fine', decided_by: { email: expect.stringContaining('reviewer@') } });
    expect(review.result).toMatchObject({ title: 'review the budget', priority: 'high' });
    expect(review.applied_at).not.toBeNull();
    expect(await taskTitles(org.organization.id)).toContain('review the budget');

    const events = await historyOf(review.workflow_id);
    const signals = events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'reviewDecided');
    const activities = events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(signals).toHaveLength(1);
    // The signal says "approved": straight to the write, which checks the review record itself.
    expect(activities).toEqual(['applyGatedWrite']);
    const { rows: audit } = await h.db.query('SELECT type, actor_type FROM audit_events WHERE workflow_id = $1 ORDER BY id', [review.workflow_id]);
    expect(audit).toEqual([
      { type: 'gate.decided', actor_type: 'api_key' },
      { type: 'review.approved', actor_type: 'user' },
      { type: 'write.applied', actor_type: 'api_key' },
    ]);
  });

  it('Review then deny: nothing is written and the workflow ends', async () => {
    const body = json(await createTask({ title: 'review and refuse' }));
    const denied = await h.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/deny`, token: org.reviewerToken });
    expect(denied.statusCode).toBe(200);
    expect(json(denied).data).toMatchObject({ status: 'denied', result: null, applied_at: null });
    expect(await taskTitles(org.organization.id)).not.toContain('review and refuse');
    const outcome = await h.temporal.workflow.getHandle(json(denied).data.workflow_id).result();
    expect(outcome.resolution).toEqual({ status: 'denied' });
  });

  it('approves after the worker was stopped and started again while the review waited', async () => {
    const body = json(await createTask({ title: 'review across a restart' }));
    await h.restartWorker();
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/approve`, token: org.reviewerToken });
    expect(approved.statusCode).toBe(200);
    expect(json(approved).data).toMatchObject({ status: 'approved', result: { title: 'review across a restart' } });
    expect(await taskTitles(org.organization.id)).toContain('review across a restart');
  });

  it('approve racing deny ends in exactly one outcome; the loser gets 409', async () => {
    for (let round = 0; round < 3; round++) {
      const title = `review race ${round}`;
      const body = json(await createTask({ title }));
      const [approve, deny] = await Promise.all([
        h.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/approve`, token: org.reviewerToken }),
        h.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/deny`, token: org.reviewerToken }),
      ]);
      expect([approve.statusCode, deny.statusCode].sort()).toEqual([200, 409]);
      const loser = approve.statusCode === 409 ? approve : deny;
      expect(json(loser).error.code).toBe('conflict');
      const winner = approve.statusCode === 200 ? 'approved' : 'denied';
      const outcome = await h.temporal.workflow.getHandle(json(approve.statusCode === 200 ? approve : deny).data.workflow_id).result();
      expect(outcome.resolution?.status).toBe(winner);
      const count = (await taskTitles(org.organization.id)).filter((t) => t === title).length;
      expect(count).toBe(winner === 'approved' ? 1 : 0);
    }
  });

  it('deciding twice: the second decision gets 409 and changes nothing', async () => {
    const body = json(await createTask({ title: 'review twice' }));
    const url = `/api/v1/reviews/${body.review.id}`;
    expect((await h.request({ method: 'POST', url: `${url}/approve`, token: org.reviewerToken })).statusCode).toBe(200);
    const again = await h.request({ method: 'POST', url: `${url}/deny`, token: org.reviewerToken });
    expect(again.statusCode).toBe(409);
    expect(json(again)).toMatchObject({ success: false, error: { code: 'conflict', details: { status: 'approved' } } });
    expect(json(await h.request({ method: 'GET', url, token: org.reviewerToken })).data.status).toBe('approved');
  });

  it.each([['without a verdict', undefined], ['saying "approved"', 'approved'], ['saying "denied"', 'denied']])(
    'a signal sent around the application (not backed by a decision), %s, never approves or ends a write',
    async (_, verdict) => {
      const title = `review forged signal ${verdict ?? 'nudge'}`;
      const body = json(await createTask({ title }));
      const { rows } = await h.db.query('SELECT workflow_id FROM reviews WHERE id = $1', [body.review.id]);
      const workflowId = rows[0].workflow_id;
      await h.temporal.workflow.getHandle(workflowId).signal('reviewDecided', ...(verdict ? [verdict] : []));
      // The review is read from the database (after a refused apply, when the signal said "approved").
      await expect.poll(async () => {
        const events = await historyOf(workflowId);
        return events.filter((e) => e.activityTaskCompletedEventAttributes).length;
      }).toBe(1);
      const events = await historyOf(workflowId);
      const activities = events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
      expect(activities).toEqual(verdict === 'approved' ? ['applyGatedWrite', 'readReviewStatus'] : ['readReviewStatus']);
      expect(await taskTitles(org.organization.id)).not.toContain(title);
      const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${body.review.id}`, token: org.reviewerToken }));
      expect(review.data).toMatchObject({ status: 'pending', failure: null });
      const { rows: audit } = await h.db.query('SELECT type FROM audit_events WHERE workflow_id = $1 ORDER BY id', [workflowId]);
      expect(audit.map((row) => row.type)).toEqual(['gate.decided']);

      // The write still waits, and a person's real approval runs it.
      const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/approve`, token: org.reviewerToken });
      expect(json(approved).data).toMatchObject({ status: 'approved', result: { title } });
      expect((await taskTitles(org.organization.id)).filter((t) => t === title)).toHaveLength(1);
    },
  );

  it('the same write delivered twice applies once', async () => {
    const request = org.taskRequest('delivered twice');
    const workflowId = `${org.organization.slug}:tasks.create:twice`;
    await recordDecision(h.db, {
      workflowId,
      request,
      decision: 'allow',
      reason: 'ok',
      policyIds: ['allow-writes'],
      policyErrors: [],
      policyVersion: 1,
      resource: {},
      context: {},
      reviewExpiresAt: new Date(),
    });
    const [first, second] = await Promise.all([
      applyGatedWrite(h.db, createTaskWrite, workflowId, request).catch((error) => error),
      applyGatedWrite(h.db, createTaskWrite, workflowId, request).catch((error) => error),
    ]);
    const third = await applyGatedWrite(h.db, createTaskWrite, workflowId, request);
    const results = [first, second].filter((result) => !(result instanceof Error));
    expect(results.length).toBeGreaterThanOrEqual(1);
    for (const result of results) expect(result).toEqual(third);
    expect((await taskTitles(org.organization.id)).filter((t) => t === 'delivered twice')).toHaveLength(1);
  });

  it('the one step run again (a local activity is at least once) finds its decision and write: both or neither, once', async () => {
    const request = org.taskRequest('decided and applied twice');
    const workflowId = `${org.organization.slug}:tasks.create:one-step-twice`;
    const expiresAt = new Date(Date.now() + 60_000);
    const runs = await Promise.all([1, 2, 3].map(() => decideAndApply(h.db, createTaskWrite, workflowId, request, expiresAt)));
    const again = await decideAndApply(h.db, createTaskWrite, workflowId, request, expiresAt);
    for (const run of [...runs, again]) expect(run).toEqual(runs[0]);
    expect(runs[0]).toMatchObject({ decision: 'allow', applied: { result: { title: 'decided and applied twice' } } });
    expect(await decisionsOf(workflowId)).toHaveLength(1);
    expect((await taskTitles(org.organization.id)).filter((t) => t === 'decided and applied twice')).toHaveLength(1);
    const { rows: audited } = await h.db.query('SELECT type, resource_id FROM audit_events WHERE workflow_id = $1 ORDER BY created_at', [workflowId]);
    expect(audited).toEqual([
      { type: 'gate.decided', resource_id: null },
      { type: 'write.applied', resource_id: (runs[0] as { applied: { result: { id: string } } }).applied.result.id },
    ]);
  });

  it('a write refused by the data after an Allow, run again: the decision once, the same refusal, nothing written', async () => {
    // What a record deleted or a unique value taken between the decision and the write does, made certain here.
    const refusing: typeof createTaskWrite = {
      ...createTaskWrite,
      async apply(tx, orgId, input, decided, by) {
        await createTaskWrite.apply(tx, orgId, input, decided, by);
        throw new AppError('conflict', 'the data changed under the write');
      },
    };
    const request = org.taskRequest('refused after its allow');
    const workflowId = `${org.organization.slug}:tasks.create:refused-after-allow`;
    const expiresAt = new Date(Date.now() + 60_000);
    const runs = await Promise.all([1, 2].map(() => decideAndApply(h.db, refusing, workflowId, request, expiresAt)));
    const again = await decideAndApply(h.db, refusing, workflowId, request, expiresAt);
    for (const run of [...runs, again]) expect(run).toEqual(runs[0]);
    expect(runs[0]).toMatchObject({ decision: 'allow', applied: { refusal: { code: 'conflict', message: 'the data changed under the write' } } });
    expect(await decisionsOf(workflowId)).toHaveLength(1);
    const { rows: audited } = await h.db.query('SELECT type FROM audit_events WHERE workflow_id = $1', [workflowId]);
    expect(audited.map((row) => row.type)).toEqual(['gate.decided']);
    expect(await taskTitles(org.organization.id)).not.toContain('refused after its allow');
    expect((await h.db.query('SELECT 1 FROM applied_writes WHERE workflow_id = $1', [workflowId])).rowCount).toBe(0);
  });

  it('a held write of the older workflow type (started before the cutover) is approved and applied by today\'s worker and api', async () => {
    const request = org.taskRequest('review on the older workflow type');
    const workflowId = `${org.organization.slug}:tasks.create:older-type`;
    // As an api of the previous release started it: the older type, by name, with update-with-start.
    const start = new WithStartWorkflowOperation('gatedWrite', { workflowId, taskQueue: h.taskQueue, args: [request], workflowIdConflictPolicy: 'USE_EXISTING' });
    const answer = await h.temporal.workflow.executeUpdateWithStart(gateAnswerUpdate, { startWorkflowOperation: start });
    expect(answer).toMatchObject({ outcome: 'pending_review' });
    const reviewId = (answer as { review: { id: string } }).review.id;
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken });
    expect(json(approved).data).toMatchObject({ status: 'approved', result: { title: 'review on the older workflow type' } });
    // The older type ignores the signal's verdict and reads the review, as it always did.
    const events = await historyOf(workflowId);
    expect(events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe('gatedWrite');
    const activities = events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(activities).toEqual(['readReviewStatus', 'applyGatedWrite']);
    expect((await taskTitles(org.organization.id)).filter((t) => t === 'review on the older workflow type')).toHaveLength(1);
  });

  it('the same workflow started twice (a retried request) decides and writes once', async () => {
    const { createGateClient } = await import('../../api/catalog/gate-client');
    const gate = createGateClient(h.temporal, { taskQueue: h.taskQueue });
    const request = org.taskRequest('started twice');
    const workflowId = `${org.organization.slug}:tasks.create:started-twice`;
    const [a, b] = await Promise.all([gate.submit(workflowId, request), gate.submit(workflowId, request)]);
    const c = await gate.submit(workflowId, request);
    expect(a).toEqual(b);
    expect(c).toEqual(a);
    expect(a.outcome).toBe('applied');
    expect((await taskTitles(org.organization.id)).filter((t) => t === 'started twice')).toHaveLength(1);
    expect(await decisionsOf(workflowId)).toHaveLength(1);
  });
});

describe('review expiry', () => {
  let short: Harness;
  let shortOrg: TestOrganization;
  beforeAll(async () => {
    short = await startHarness({ reviewExpiryMs: 1500 });
    shortOrg = await short.createOrganization();
  });
  afterAll(() => short?.close());

  it('expires a review nobody decided: recorded, never applied, and no longer decidable', async () => {
    const body = json(await short.request({ method: 'POST', url: '/api/v1/tasks', token: shortOrg.readWriteToken, payload: { title: 'review too late' } }));
    const { rows } = await short.db.query('SELECT workflow_id FROM reviews WHERE id = $1', [body.review.id]);
    const outcome = await short.temporal.workflow.getHandle(rows[0].workflow_id).result();
    expect(outcome.resolution).toEqual({ status: 'expired' });
    const late = await short.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/approve`, token: shortOrg.reviewerToken });
    expect(late.statusCode).toBe(409);
    expect(json(late).error.details.status).toBe('expired');
    const { rows: tasks } = await short.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review too late'`, [shortOrg.organization.id]);
    expect(tasks).toHaveLength(0);
    const { rows: audit } = await short.db.query('SELECT type FROM audit_events WHERE review_id = $1 ORDER BY id', [body.review.id]);
    expect(audit.map((row) => row.type)).toEqual(['gate.decided', 'review.expired']);
  });

  it('a review past its deadline reads as expired even while no worker has recorded it', async () => {
    const body = json(await short.request({ method: 'POST', url: '/api/v1/tasks', token: shortOrg.readWriteToken, payload: { title: 'review while down' } }));
    await short.stopWorker();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1600));
      const read = json(await short.request({ method: 'GET', url: `/api/v1/reviews/${body.review.id}`, token: shortOrg.reviewerToken }));
      expect(read.data.status).toBe('expired');
      const pending = json(await short.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: shortOrg.reviewerToken }));
      expect(pending.data.map((r: { id: string }) => r.id)).not.toContain(body.review.id);
      const late = await short.request({ method: 'POST', url: `/api/v1/reviews/${body.review.id}/approve`, token: shortOrg.reviewerToken });
      expect(late.statusCode).toBe(409);
    } finally {
      await short.startWorker();
    }
  });
});
