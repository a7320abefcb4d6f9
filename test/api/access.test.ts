import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../domain/identity/api-keys';
import { updateOrganization } from '../../domain/identity/organizations';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  [acme, globex] = await Promise.all([h.createOrganization(), h.createOrganization()]);
});
afterAll(() => h?.close());

const countTasks = async (orgId: string) =>
  (await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1', [orgId])).rows[0].n;

describe('keys and abilities', () => {
  it('a read-only key reads but cannot write: 403 read_only_key before any policy runs', async () => {
    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token: acme.readOnlyToken })).statusCode).toBe(200);
    const before = await countTasks(acme.organization.id);
    const write = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readOnlyToken, payload: { title: 'nope' } });
    expect(write.statusCode).toBe(403);
    expect(json(write).error.code).toBe('read_only_key');
    expect(await countTasks(acme.organization.id)).toBe(before);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM gate_decisions WHERE org_id = $1 AND input->>$2 = $3', [acme.organization.id, 'title', 'nope']);
    expect(rows[0].n).toBe(0);
  });

  it('a key without the ability is refused with 403 insufficient_ability, for reads and writes', async () => {
    const customersOnly = await acme.keyWith(['customers.read']);
    const read = await h.request({ method: 'GET', url: '/api/v1/tasks', token: customersOnly });
    expect(read.statusCode).toBe(403);
    expect(json(read).error).toMatchObject({ code: 'insufficient_ability', details: { required: 'tasks.read' } });
    const readOnlyTasks = await acme.keyWith(['tasks.read']);
    const write = await h.request({ method: 'POST', url: '/api/v1/tasks', token: readOnlyTasks, payload: { title: 'nope' } });
    expect(write.statusCode).toBe(403);
    expect(json(write).error).toMatchObject({ code: 'insufficient_ability', details: { required: 'tasks.write' } });
  });

  it('a revoked key stops working at once', async () => {
    const token = await acme.keyWith(['tasks.read']);
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token })).statusCode).toBe(200);
    const keyId = /^gate_k_(key_[0-9a-z]+)_/.exec(token)![1]!;
    await revokeApiKey(h.db, withdrawReviewsOfKey, acme.organization.id, keyId);
    const after = await h.request({ method: 'GET', url: '/api/v1/me', token });
    expect(after.statusCode).toBe(401);
    expect(json(after).error.code).toBe('unauthorized');
  });

  it('a token with a changed secret is refused', async () => {
    const forged = acme.readWriteToken.slice(0, -4) + (acme.readWriteToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: forged })).statusCode).toBe(401);
  });

  it('an organization with API access off refuses its keys with 403 api_access_disabled', async () => {
    const closed = await h.createOrganization();
    await updateOrganization(h.db, closed.organization.slug, { apiAccess: false });
    const response = await h.request({ method: 'GET', url: '/api/v1/tasks', token: closed.readWriteToken });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('api_access_disabled');
  });

  it('/v1/me tells the organization, plan, token abilities and endpoint families', async () => {
    const me = json(await h.request({ method: 'GET', url: '/api/v1/me', token: acme.readOnlyToken })).data;
    expect(me.organization).toEqual({
      id: acme.organization.id,
      slug: acme.organization.slug,
      name: acme.organization.name,
      timezone: 'UTC',
    });
    expect(me.plan).toEqual({
      name: 'business',
      description: expect.any(String),
      features: ['expenses', 'work_logs'],
      daily_budget: 250_000,
      rest_per_minute: 1200,
      mcp_per_minute: 2400,
      pending_review_cap: 1000,
    });
    expect(me.usage).toMatchObject({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), resets_at: expect.any(String) });
    expect(me.usage.used).toBeGreaterThanOrEqual(1);
    expect(me.usage.used + me.usage.left).toBe(250_000);
    expect(me.token).toMatchObject({ type: 'api_key', label: 'test reader', access: 'read' });
    expect(me.token.abilities).toContain('tasks.read');
    expect(me.token.abilities).not.toContain('tasks.write');
    const tasks = me.endpoints.find((family: { family: string }) => family.family === 'tasks');
    expect(tasks.operations).toEqual([
      { name: 'tasks.list', method: 'GET', path: '/v1/tasks', allowed: true },
      { name: 'tasks.get', method: 'GET', path: '/v1/tasks/{id}', allowed: true },
      { name: 'tasks.create', method: 'POST', path: '/v1/tasks', allowed: false },
      { name: 'tasks.update', method: 'PATCH', path: '/v1/tasks/{id}', allowed: false },
      { name: 'tasks.delete', method: 'DELETE', path: '/v1/tasks/{id}', allowed: false },
    ]);
    const person = json(await h.request({ method: 'GET', url: '/api/v1/me', token: acme.reviewerToken })).data;
    expect(person.token).toMatchObject({ type: 'personal', user: { role: 'reviewer' } });
  });
});

describe('tenancy', () => {
  it("both route shapes reach the key's own organization", async () => {
    await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'shape one' } });
    const explicit = await h.request({
      method: 'POST',
      url: `/api/v1/organizations/${acme.organization.slug}/tasks`,
      token: acme.readWriteToken,
      payload: { title: 'shape two' },
    });
    expect(explicit.statusCode).toBe(201);
    const implicit = json(await h.request({ method: 'GET', url: '/api/v1/tasks?limit=200', token: acme.readWriteToken })).data;
    const viaSlug = json(await h.request({ method: 'GET', url: `/api/v1/organizations/${acme.organization.slug}/tasks?limit=200`, token: acme.readWriteToken })).data;
    expect(viaSlug).toEqual(implicit);
    expect(implicit.map((t: { title: string }) => t.title)).toEqual(expect.arrayContaining(['shape one', 'shape two']));
  });

  it("a key never reaches another organization's slug: 404 organization_mismatch, nothing written", async () => {
    const before = await countTasks(globex.organization.id);
    for (const [method, payload] of [['GET', undefined], ['POST', { title: 'cross-org' }]] as const) {
      const response = await h.request({
        method,
        url: `/api/v1/organizations/${globex.organization.slug}/tasks`,
        token: acme.readWriteToken,
        payload,
      });
      expect(response.statusCode).toBe(404);
      expect(json(response).error.code).toBe('organization_mismatch');
    }
    expect(await countTasks(globex.organization.id)).toBe(before);
  });

  it("lists only the key's own tasks", async () => {
    await h.request({ method: 'POST', url: '/api/v1/tasks', token: globex.readWriteToken, payload: { title: 'globex only' } });
    const acmeTasks = json(await h.request({ method: 'GET', url: '/api/v1/tasks?limit=200', token: acme.readWriteToken })).data;
    expect(acmeTasks.map((t: { title: string }) => t.title)).not.toContain('globex only');
  });

  it("one organization's reviewer can neither read nor decide another's reviews", async () => {
    const held = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: globex.readWriteToken, payload: { title: 'review globex' } }));
    const reviewId = held.review.id;
    const read = await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: acme.reviewerToken });
    expect(read.statusCode).toBe(404);
    const approve = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.reviewerToken });
    expect(approve.statusCode).toBe(404);
    const queue = json(await h.request({ method: 'GET', url: '/api/v1/reviews', token: acme.reviewerToken })).data;
    expect(queue.map((r: { id: string }) => r.id)).not.toContain(reviewId);
    const status = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: globex.reviewerToken })).data.status;
    expect(status).toBe('pending');
  });
});

describe('who decides reviews', () => {
  let reviewId: string;
  beforeAll(async () => {
    reviewId = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'review who decides' } })).review.id;
  });

  it('an API key with reviews.read may read the queue', async () => {
    const reader = await acme.keyWith(['reviews.read'], 'read');
    const queue = await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: reader });
    expect(queue.statusCode).toBe(200);
    expect(json(queue).data.map((r: { id: string }) => r.id)).toContain(reviewId);
    const noAbility = await acme.keyWith(['tasks.read'], 'read');
    expect((await h.request({ method: 'GET', url: '/api/v1/reviews', token: noAbility })).statusCode).toBe(403);
  });

  it('no API key can approve or deny, whatever it holds', async () => {
    for (const verdict of ['approve', 'deny']) {
      const response = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/${verdict}`, token: acme.readWriteToken });
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe('person_required');
    }
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: acme.reviewerToken })).data;
    expect(review.status).toBe('pending');
  });

  it('a person without the reviewer role cannot decide', async () => {
    const response = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.memberToken });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('insufficient_role');
  });

  it('a personal token cannot make gated writes', async () => {
    const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.reviewerToken, payload: { title: 'by a person' } });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.code).toBe('insufficient_ability');
  });
});
