import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
});
afterAll(() => h?.close());

const post = (body: object, key: string, token = org.readWriteToken) =>
  h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: body, headers: { 'idempotency-key': key } });

const countTitled = async (title: string) =>
  (await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND title = $2', [org.organization.id, title])).rows[0].n;

describe('Idempotency-Key', () => {
  it.each([
    ['201', 'idem allowed', 201],
    ['202', 'review idem', 202],
    ['403', 'deny idem', 403],
  ])('replays the first answer (%s) for the same key and body, and writes once', async (_label, title, status) => {
    const key = `key-${status}-${Date.now()}`;
    const first = await post({ title, status: 'todo' }, key);
    const second = await post({ status: 'todo', title }, key);
    expect(first.statusCode).toBe(status);
    expect(second.statusCode).toBe(status);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-gatehouse-workflow-id']).toBe(first.headers['x-gatehouse-workflow-id']);
    if (status === 202) expect(second.headers.location).toBe(first.headers.location);
    expect(await countTitled(title)).toBe(status === 201 ? 1 : 0);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM gate_decisions WHERE workflow_id = $1', [first.headers['x-gatehouse-workflow-id']]);
    expect(rows[0].n).toBe(1);
  });

  it('the same key sent concurrently still writes once', async () => {
    const key = `concurrent-${Date.now()}`;
    const answers = await Promise.all([1, 2, 3].map(() => post({ title: 'idem concurrent' }, key)));
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.json().data.id)).size).toBe(1);
    expect(await countTitled('idem concurrent')).toBe(1);
  });

  it('refuses the same key with another body: 422 idempotency_key_reused, nothing written', async () => {
    const key = `reused-${Date.now()}`;
    expect((await post({ title: 'idem first body' }, key)).statusCode).toBe(201);
    const reused = await post({ title: 'idem second body' }, key);
    expect(reused.statusCode).toBe(422);
    expect(json(reused)).toMatchObject({ success: false, error: { code: 'idempotency_key_reused' } });
    expect(await countTitled('idem second body')).toBe(0);
  });

  it('scopes keys to the API key: another key with the same Idempotency-Key gets its own write', async () => {
    const key = `scoped-${Date.now()}`;
    const otherKey = await org.keyWith(['tasks.write', 'tasks.read']);
    const a = await post({ title: 'idem scoped' }, key);
    const b = await post({ title: 'idem scoped' }, key, otherKey);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(a.json().data.id).not.toBe(b.json().data.id);
    expect(await countTitled('idem scoped')).toBe(2);
  });

  it('scopes keys to the organization', async () => {
    const other = await h.createOrganization();
    const key = `org-scoped-${Date.now()}`;
    const a = await post({ title: 'idem org' }, key);
    const b = await post({ title: 'idem org' }, key, other.readWriteToken);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.json().data.id).not.toBe(a.json().data.id);
  });

  it('refuses an Idempotency-Key that is not 1–255 visible characters', async () => {
    const response = await post({ title: 'idem bad key' }, 'x'.repeat(256));
    expect(response.statusCode).toBe(422);
    expect(json(response).error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'Idempotency-Key' }] } });
    expect(await countTitled('idem bad key')).toBe(0);
  });
});
