import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { addPerson, signIn } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Trust windows on the real Temporal dev server and PostgreSQL: a person approving a held write lets the same key
// make writes like it (same operation, the attribute values they picked) without review, until the window's last
// use or its expiry; never what the policy denies; closed at once by a person.

const policy = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("new-tasks-wait") @decision("review") @reason("New tasks wait for a person")
permit (principal, action == Action::"tasks.create", resource);

@id("task-changes-wait") @decision("review") @reason("Task changes wait for a person")
permit (principal, action == Action::"tasks.update", resource);

@id("big-needs-two") @decision("review") @approvals("2") @reason("A big task needs two people")
permit (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "big*" };

@id("no-urgent-tasks") @reason("Agents do not file urgent tasks")
forbid (principal, action == Action::"tasks.create", resource) when { resource has priority && resource.priority == "urgent" };
`;

let h: Harness;
let org: TestOrganization;
let projectA: string;
let projectB: string;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization({ policy });
  const project = async (name: string) => json(await h.request({ method: 'POST', url: '/api/v1/projects', token: org.readWriteToken, payload: { name } })).data.id as string;
  projectA = await project('Launch');
  projectB = await project('Other');
});

afterAll(async () => {
  await h?.close();
});

// Each test starts with no open window: one left open would let the next test's writes through.
afterEach(async () => {
  await h.db.query('UPDATE trust_windows SET closed_at = now() WHERE org_id = $1 AND closed_at IS NULL', [org.organization.id]);
});

const createTask = (payload: Record<string, unknown>, token = org.readWriteToken) => h.request({ method: 'POST', url: '/api/v1/tasks', token, payload });

async function hold(payload: Record<string, unknown>, token = org.readWriteToken): Promise<string> {
  const response = await createTask(payload, token);
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id;
}

const approve = (reviewId: string, body: Record<string, unknown>, token = org.reviewerToken) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token, payload: body });

async function windowOf(reviewId: string, token = org.reviewerToken) {
  const listed = json(await h.request({ method: 'GET', url: '/api/v1/trust-windows?state=all', token })).data.windows as Record<string, any>[];
  return listed.find((window) => window.review_id === reviewId)!;
}

async function openWindow(payload: Record<string, unknown>, trust: Record<string, unknown>) {
  const reviewId = await hold(payload);
  const approved = await approve(reviewId, { trust });
  expect(approved.statusCode, approved.body).toBe(200);
  expect(json(approved).data.status).toBe('approved');
  const window = await windowOf(reviewId);
  // The approval's answer names the window it opened, as the review reads from then on.
  expect(json(approved).data.trust_window).toEqual({
    id: window.id,
    state: 'open',
    match: window.match,
    uses: 0,
    max_uses: trust.max_uses,
    expires_at: window.expires_at,
  });
  return window;
}

describe('a trust window', () => {
  it('lets matching writes through until its last use, then they are held again; the decision and audit name it', async () => {
    const window = await openWindow({ title: 'first launch task', project_id: projectA }, { minutes: 60, max_uses: 2, match: ['project_id'] });
    expect(window).toMatchObject({
      state: 'open',
      operation: 'tasks.create',
      match: { project_id: projectA },
      uses: 0,
      max_uses: 2,
      opened_by: { email: `reviewer@${org.organization.slug}.test` },
    });
    expect(window.id).toMatch(/^trw_/);
    const opened = (await h.db.query("SELECT actor_type, actor_id, review_id, data FROM audit_events WHERE type = 'trust_window.opened' AND resource_id = $1", [window.id])).rows;
    expect(opened).toEqual([expect.objectContaining({ actor_type: 'user', review_id: window.review_id, data: expect.objectContaining({ max_uses: 2, match: { project_id: projectA } }) })]);

    for (const title of ['second launch task', 'third launch task']) {
      const through = await createTask({ title, project_id: projectA });
      expect(through.statusCode, through.body).toBe(201);
    }
    const decisions = (
      await h.db.query("SELECT decision, reason, trust_window_id, workflow_id FROM gate_decisions WHERE org_id = $1 AND trust_window_id = $2 ORDER BY id", [org.organization.id, window.id])
    ).rows;
    expect(decisions).toHaveLength(2);
    expect(decisions[0]).toMatchObject({ decision: 'allow' });
    expect(decisions[0].reason).toContain(`Allowed by trust window ${window.id} opened by reviewer@${org.organization.slug}.test`);
    expect(decisions[0].reason).toContain('new-tasks-wait would hold it: New tasks wait for a person');
    const audited = (await h.db.query("SELECT data FROM audit_events WHERE type = 'gate.decided' AND workflow_id = $1", [decisions[0].workflow_id])).rows[0].data;
    expect(audited).toMatchObject({ decision: 'allow', trust_window: window.id });

    expect(await windowOf(window.review_id)).toMatchObject({ state: 'used_up', uses: 2 });
    await hold({ title: 'fourth launch task', project_id: projectA });

    // Its last use closed it, recorded (and told to webhooks) with the write that took it; the review says so too.
    const closed = (await h.db.query("SELECT actor_type, workflow_id, data FROM audit_events WHERE type = 'trust_window.closed' AND resource_id = $1", [window.id])).rows;
    expect(closed).toEqual([
      { actor_type: 'api_key', workflow_id: decisions[1].workflow_id, data: { api_key_id: expect.any(String), operation: 'tasks.create', uses: 2, max_uses: 2, reason: 'used_up' } },
    ]);
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${window.review_id}`, token: org.reviewerToken })).data;
    expect(review.trust_window).toMatchObject({ id: window.id, state: 'used_up', uses: 2, max_uses: 2 });
    // Agents never see windows, not even on their own write's review.
    const asAgent = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${window.review_id}`, token: await org.keyWith(['reviews.read']) })).data;
    expect(asAgent.trust_window).toBeNull();
  });

  it('keeps its use when the data refuses the write it let through: with one use, the next good write still passes', async () => {
    const created = async (title: string) => {
      const reviewId = await hold({ title, project_id: projectB });
      return json(await approve(reviewId, {})).data.result as { id: string };
    };
    const [first, second] = [await created('refusal test one'), await created('refusal test two')];
    const updateOf = (id: string, payload: Record<string, unknown>) => h.request({ method: 'PATCH', url: `/api/v1/tasks/${id}`, token: org.readWriteToken, payload });
    const held = await updateOf(first.id, { status: 'in_progress' });
    expect(held.statusCode).toBe(202);
    const opened = await approve(json(held).review.id, { trust: { minutes: 60, max_uses: 1, match: ['project_id'] } });
    const window = json(opened).data.trust_window as { id: string };
    expect(window.id).toMatch(/^trw_/);

    // Someone changes the second task while the agent's update of it is between its decision and its write (the
    // test holds the row until the update waits on it): the window lets it through, the data refuses it (409).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const someoneElse = h.db.transaction(async (tx) => {
      await tx.query(`UPDATE tasks SET description = 'changed by someone else', version = version + 1 WHERE id = $1`, [second.id]);
      await released;
    });
    const waiters = async () => Number((await h.db.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted")).rows[0].n);
    const refused = updateOf(second.id, { status: 'done' });
    for (let tries = 0; tries < 200 && (await waiters()) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 25));
    release();
    await someoneElse;
    const answer = await refused;
    expect(answer.statusCode, answer.body).toBe(409);
    expect(json(answer).error.code).toBe('conflict');
    const decided = (await h.db.query("SELECT decision, trust_window_id FROM gate_decisions WHERE workflow_id = $1", [answer.headers['x-gatehouse-workflow-id']])).rows;
    expect(decided).toEqual([{ decision: 'allow', trust_window_id: window.id }]);
    expect(await windowOf(json(held).review.id)).toMatchObject({ state: 'open', uses: 0 });

    // The use was not spent: the next good update passes through the window, and takes its last use.
    const good = await updateOf(second.id, { status: 'done' });
    expect(good.statusCode, good.body).toBe(200);
    expect(await windowOf(json(held).review.id)).toMatchObject({ state: 'used_up', uses: 1 });
    expect((await updateOf(second.id, { priority: 'high' })).statusCode).toBe(202);
  });

  it('holds what it does not match: another attribute value, another key, another operation', async () => {
    const window = await openWindow({ title: 'match test', project_id: projectA }, { minutes: 60, max_uses: 50, match: ['project_id'] });
    await hold({ title: 'in another project', project_id: projectB });
    await hold({ title: 'in no project' });
    const otherKey = await org.keyWith(['tasks.read', 'tasks.write']);
    await hold({ title: 'same project, another key', project_id: projectA }, otherKey);
    const created = json(await createTask({ title: 'let through', project_id: projectA })).data;
    const update = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${created.id}`, token: org.readWriteToken, payload: { title: 'renamed' } });
    expect(update.statusCode, update.body).toBe(202);
    expect(await windowOf(window.review_id)).toMatchObject({ uses: 1 });
  });

  it('lets through only writes held by the rules that held its write, needing no more approvals', async () => {
    // Opened from an ordinary hold, matching any task of the key: a big task (held by a two-person rule too) still waits.
    const window = await openWindow({ title: 'ordinary hold' }, { minutes: 60, max_uses: 50, match: [] });
    expect(window.policy_ids ?? ['new-tasks-wait']).toEqual(['new-tasks-wait']);
    const big = await hold({ title: 'big purchase order' });
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${big}`, token: org.reviewerToken })).data.approvals.required).toBe(2);
    expect(await windowOf(window.review_id)).toMatchObject({ uses: 0 });
    expect((await createTask({ title: 'an ordinary one' })).statusCode).toBe(201);
    expect(await windowOf(window.review_id)).toMatchObject({ uses: 1 });
  });

  it('never lets through what the policy denies', async () => {
    const window = await openWindow({ title: 'deny test', project_id: projectA }, { minutes: 60, max_uses: 50, match: ['project_id'] });
    const denied = await createTask({ title: 'urgent one', project_id: projectA, priority: 'urgent' });
    expect(denied.statusCode).toBe(403);
    expect(json(denied).error.code).toBe('policy_denied');
    expect(await windowOf(window.review_id)).toMatchObject({ uses: 0, state: 'open' });
  });

  it('lets writes through until it expires (expires_at moved into the past by SQL: the shortest window is a minute)', async () => {
    const window = await openWindow({ title: 'expiry test', project_id: projectB, status: 'todo' }, { minutes: 1, max_uses: 100, match: ['project_id', 'status'] });
    expect(window.match).toEqual({ project_id: projectB, status: 'todo' });
    expect((await createTask({ title: 'before expiry', project_id: projectB })).statusCode).toBe(201);
    await h.db.query("UPDATE trust_windows SET expires_at = now() - interval '1 second' WHERE id = $1", [window.id]);
    await hold({ title: 'after expiry', project_id: projectB });
    expect(await windowOf(window.review_id)).toMatchObject({ state: 'expired', uses: 1 });
  });

  it('lets writes through over MCP as over REST', async () => {
    const window = await openWindow({ title: 'mcp test', project_id: projectA, tags: ['mcp'] }, { minutes: 30, max_uses: 1, match: ['project_id'] });
    const mcp = await h.mcp(org.readWriteToken);
    const result = CallToolResultSchema.parse(await mcp.callTool({ name: 'create_task', arguments: { title: 'from mcp', project_id: projectA } }));
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ status: 'applied', record: { title: 'from mcp', project_id: projectA } });
    const decided = (await h.db.query("SELECT interface FROM gate_decisions WHERE trust_window_id = $1", [window.id])).rows;
    expect(decided).toEqual([{ interface: 'mcp' }]);
  });

  it('is refused with bad terms, leaving the review pending', async () => {
    const reviewId = await hold({ title: 'bad terms', project_id: projectA, tags: ['x'] });
    for (const trust of [
      { minutes: 0, max_uses: 1, match: [] },
      { minutes: 1441, max_uses: 1, match: [] },
      { minutes: 5, max_uses: 1001, match: [] },
      { minutes: 5, match: [] },
      { minutes: 5, max_uses: 1, match: ['tags'] },
      { minutes: 5, max_uses: 1, match: ['no_such_field'] },
    ]) {
      const refused = await approve(reviewId, { trust });
      expect(refused.statusCode, JSON.stringify(trust)).toBe(422);
      expect(json(refused).error.code).toBe('validation_failed');
    }
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.reviewerToken })).data;
    expect(review.status).toBe('pending');
    expect((await h.db.query('SELECT 1 FROM trust_windows WHERE review_id = $1', [reviewId])).rowCount).toBe(0);
  });

  it('with a quorum, opens only with the approval that ends the review', async () => {
    const second = await createUser(h.db, { orgId: org.organization.id, email: `second@${org.organization.slug}.test`, role: 'admin' });
    const secondToken = (await createPersonalToken(h.db, second)).token;
    const reviewId = await hold({ title: 'big plan', project_id: projectA });
    const early = await approve(reviewId, { trust: { minutes: 10, max_uses: 3, match: [] } });
    expect(early.statusCode).toBe(409);
    expect(json(early).error.message).toContain('only by the approval that ends the review');
    expect(json(await approve(reviewId, {})).data.status).toBe('pending');
    const last = await approve(reviewId, { trust: { minutes: 10, max_uses: 3, match: ['project_id'] } }, secondToken);
    expect(json(last).data.status).toBe('approved');
    expect(await windowOf(reviewId)).toMatchObject({ opened_by: { user_id: second.id }, state: 'open' });
  });

  it('is not opened when the approval is refused (self-approval)', async () => {
    const owner = await createUser(h.db, { orgId: org.organization.id, email: `keyowner@${org.organization.slug}.test`, role: 'admin' });
    const ownerToken = (await createPersonalToken(h.db, owner)).token;
    const ownKey = (await createApiKey(h.db, { orgId: org.organization.id, label: 'Made by the approver', access: 'read_write' }, { type: 'user', id: owner.id })).token;
    const reviewId = await hold({ title: 'self', project_id: projectA }, ownKey);
    const refused = await approve(reviewId, { trust: { minutes: 10, max_uses: 3, match: [] } }, ownerToken);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('self_approval');
    expect((await h.db.query('SELECT 1 FROM trust_windows WHERE review_id = $1', [reviewId])).rowCount).toBe(0);
  });
});

describe('closing a trust window', () => {
  it('from the console ends it at once, audited; a reviewer closes only their own, owners and admins any', async () => {
    const opener = await addPerson(h.db, org.organization, 'reviewer');
    const openerSession = await signIn(h.app, org.organization, opener);
    const reviewId = await hold({ title: 'console window', project_id: projectB });
    const approved = await openerSession.request({
      method: 'POST',
      url: `/console/api/v1/reviews/${reviewId}/approve`,
      payload: { trust: { minutes: 120, max_uses: 20, match: ['project_id'] } },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const listed = json(await openerSession.request({ method: 'GET', url: '/console/api/v1/trust-windows' })).data.windows as { id: string; review_id: string }[];
    const window = listed.find((candidate) => candidate.review_id === reviewId)!;
    expect((await createTask({ title: 'through the console window', project_id: projectB })).statusCode).toBe(201);

    // Another reviewer did not open it: refused; then its opener closes it.
    const otherReviewer = await h.request({ method: 'POST', url: `/api/v1/trust-windows/${window.id}/close`, token: org.reviewerToken, payload: {} });
    expect(otherReviewer.statusCode).toBe(403);
    expect(json(otherReviewer).error.code).toBe('insufficient_role');
    const closed = await openerSession.request({ method: 'POST', url: `/console/api/v1/trust-windows/${window.id}/close`, payload: {} });
    expect(closed.statusCode, closed.body).toBe(200);
    expect(json(closed).data).toMatchObject({ state: 'closed', closed_by: { user_id: opener.user.id }, uses: 1 });
    await hold({ title: 'after closing', project_id: projectB });
    const again = await openerSession.request({ method: 'POST', url: `/console/api/v1/trust-windows/${window.id}/close`, payload: {} });
    expect(again.statusCode).toBe(409);
    const audit = (await h.db.query("SELECT actor_id, data FROM audit_events WHERE type = 'trust_window.closed' AND resource_id = $1", [window.id])).rows;
    expect(audit).toEqual([{ actor_id: opener.user.id, data: { api_key_id: expect.any(String), operation: 'tasks.create', uses: 1, max_uses: 20, reason: 'closed' } }]);
  });

  it('is refused across organizations, and agents cannot list or close', async () => {
    const window = await openWindow({ title: 'tenancy', project_id: projectA }, { minutes: 60, max_uses: 5, match: ['project_id'] });
    const other = await h.createOrganization({ policy });
    const admin = await createUser(h.db, { orgId: other.organization.id, email: `admin@${other.organization.slug}.test`, role: 'owner' });
    const adminToken = (await createPersonalToken(h.db, admin)).token;
    const listed = json(await h.request({ method: 'GET', url: '/api/v1/trust-windows?state=all', token: adminToken })).data.windows;
    expect(listed).toEqual([]);
    const close = await h.request({ method: 'POST', url: `/api/v1/trust-windows/${window.id}/close`, token: adminToken, payload: {} });
    expect(close.statusCode).toBe(404);
    const byKey = await h.request({ method: 'GET', url: '/api/v1/trust-windows', token: org.readWriteToken });
    expect(byKey.statusCode).toBe(403);
    expect(await windowOf(window.review_id)).toMatchObject({ state: 'open' });
  });
});
