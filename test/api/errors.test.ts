import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app';
import { connectDatabase, type Database } from '../../db/database';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
});
afterAll(() => h?.close());

function expectEnvelope(response: { statusCode: number; json(): any }, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  const body = response.json();
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

const countTasks = async () => (await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1', [org.organization.id])).rows[0].n;

describe('every error is in the envelope', () => {
  it('unknown routes, inside and outside /api', async () => {
    expectEnvelope(await h.request({ method: 'GET', url: '/api/v1/nothing-here', token: org.readWriteToken }), 404, 'not_found');
    expectEnvelope(await h.request({ method: 'GET', url: '/elsewhere' }), 404, 'not_found');
    expectEnvelope(await h.request({ method: 'DELETE', url: '/api/v1/me', token: org.readWriteToken }), 404, 'not_found');
  });

  it.each([
    ['no header', undefined],
    ['a bare word', 'nonsense'],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['an unknown key', 'Bearer gate_k_key_01m7y27mgm4xp29xqywcr3481w_jJIXBTp8tQUeWevxXyxeLNAF1tSWWcb7K1m3RxsfY_Y'],
    ['a malformed token', 'Bearer gate_k_'],
  ])('401 unauthorized for %s', async (_label, authorization) => {
    const response = await h.request({ method: 'GET', url: '/api/v1/tasks', headers: authorization ? { authorization } : {} });
    expectEnvelope(response, 401, 'unauthorized');
  });

  it('bad JSON: 400 invalid_json, nothing written', async () => {
    const before = await countTasks();
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/tasks',
      token: org.readWriteToken,
      headers: { 'content-type': 'application/json' },
      payload: '{"title": "broken",',
    });
    expectEnvelope(response, 400, 'invalid_json');
    expect(await countTasks()).toBe(before);
  });

  it('an oversized body: 413 payload_too_large', async () => {
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/tasks',
      token: org.readWriteToken,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'big', description: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expectEnvelope(response, 413, 'payload_too_large');
  });

  it('a body that is not JSON: 415 unsupported_media_type', async () => {
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/tasks',
      token: org.readWriteToken,
      headers: { 'content-type': 'text/plain' },
      payload: 'title=hello',
    });
    expectEnvelope(response, 415, 'unsupported_media_type');
  });

  it('unknown fields and wrong values: 422 validation_failed naming each field, nothing written', async () => {
    const before = await countTasks();
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/tasks',
      token: org.readWriteToken,
      payload: { title: '', status: 'someday', colour: 'red', due_on: 'tomorrow' },
    });
    const body = expectEnvelope(response, 422, 'validation_failed');
    const fields = body.error.details.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['colour', 'due_on', 'status', 'title']);
    expect(await countTasks()).toBe(before);
  });

  it.each([
    ['a JSON array', [{ title: 'a' }]],
    ['a JSON string', 'just a title'],
  ])('a body that is %s: 422', async (_label, payload) => {
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/tasks',
      token: org.readWriteToken,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
    expectEnvelope(response, 422, 'validation_failed');
  });

  it('a missing required field: 422 naming it', async () => {
    const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { status: 'todo' } });
    const body = expectEnvelope(response, 422, 'validation_failed');
    expect(body.error.details.fields).toEqual([{ field: 'title', message: expect.any(String) }]);
  });

  it.each([
    ['limit=abc', 'limit'],
    ['limit=1000', 'limit'],
    ['status=someday', 'status'],
    ['colour=red', 'colour'],
    ['cursor=not-a-cursor', 'cursor'],
  ])('bad query ?%s: 422 naming the parameter', async (query, field) => {
    const response = await h.request({ method: 'GET', url: `/api/v1/tasks?${query}`, token: org.readWriteToken });
    const body = expectEnvelope(response, 422, 'validation_failed');
    expect(body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('an unknown review: 404 not_found', async () => {
    expectEnvelope(await h.request({ method: 'GET', url: '/api/v1/reviews/rev_nope', token: org.reviewerToken }), 404, 'not_found');
    expectEnvelope(await h.request({ method: 'POST', url: '/api/v1/reviews/rev_nope/approve', token: org.reviewerToken }), 404, 'not_found');
  });

  it('a path or field the client may not set: 422, whether it names the record in the body or the query', async () => {
    const created = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'Keeps its id' } }));
    const moved = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${created.data.id}`, token: org.readWriteToken, payload: { id: 'task_other', title: 'Moved?' } });
    expect(expectEnvelope(moved, 422, 'validation_failed').error.details.fields).toEqual([{ field: 'id', message: 'is taken from the path; leave it out of the body' }]);
    const read = await h.request({ method: 'GET', url: `/api/v1/tasks/${created.data.id}?id=task_other`, token: org.readWriteToken });
    expectEnvelope(read, 422, 'validation_failed');
    const ifMatch = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${created.data.id}`, token: org.readWriteToken, payload: { if_match: '1', title: 'Moved?' } });
    expect(expectEnvelope(ifMatch, 422, 'validation_failed').error.details.fields[0]).toMatchObject({ field: 'if_match', message: expect.stringContaining('If-Match header') });
    const { rows } = await h.db.query('SELECT title FROM tasks WHERE id = $1', [created.data.id]);
    expect(rows[0].title).toBe('Keeps its id');
    // Refused where the pipeline refuses input: after who may call it, so a read-only key still hears 403.
    const readOnly = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${created.data.id}`, token: org.readOnlyToken, payload: { id: 'task_other' } });
    expectEnvelope(readOnly, 403, 'read_only_key');
  });

  it('what Fastify and Node refuse before routing is in the envelope too (over a real socket)', async () => {
    const base = await h.listen();
    const answers = [
      [`${base}/api/v1/tasks/%zz`, 400, 'bad_request'],
      [`${base}/api/v1/tasks/${'a'.repeat(150)}`, 414, 'uri_too_long'],
      [`${base}/api/v1/tasks?q=${'a'.repeat(30_000)}`, 431, 'headers_too_large'],
    ] as const;
    for (const [url, status, code] of answers) {
      const response = await fetch(url, { headers: { authorization: `Bearer ${org.readWriteToken}` } });
      expect(response.status, url.slice(0, 60)).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({ success: false, error: { code, message: expect.any(String) } });
    }
  });

  it('an upload over the limit is answered 413 every time, the connection not reset under the client', async () => {
    const base = await h.listen();
    const body = JSON.stringify({ title: 'big', description: 'x'.repeat(8 * 1024 * 1024) });
    const before = await countTasks();
    for (let attempt = 0; attempt < 12; attempt++) {
      const response = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.readWriteToken}`, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(413);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    }
    expect(await countTasks()).toBe(before);
  });

  it('a database out of reach: 503 unavailable, not a 500', async () => {
    const unreachable = connectDatabase('postgres://gatehouse@127.0.0.1:1/none', { retryForMs: 200 });
    const app = await buildApp({ db: unreachable, gate: {} as never, publicUrl: 'http://x', logLevel: 'silent', secrets: h.secrets });
    try {
      const response = await app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${org.readWriteToken}` } });
      expectEnvelope(response, 503, 'unavailable');
    } finally {
      await app.close();
      await unreachable.close();
    }
  });

  it('a 5xx never leaks a stack trace or SQL', async () => {
    const broken: Database = {
      ...h.db,
      query: (async () => {
        throw new Error('syntax error at or near "SELECT token_digest FROM api_keys" at Object.query (/srv/db.ts:12:3)');
      }) as Database['query'],
    };
    const app = await buildApp({ db: broken, gate: {} as never, publicUrl: 'http://x', logLevel: 'silent', secrets: h.secrets });
    const response = await app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${org.readWriteToken}` } });
    const body = expectEnvelope(response, 500, 'internal_error');
    expect(JSON.stringify(body)).not.toMatch(/SELECT|api_keys|db\.ts|at Object/);
    await app.close();
  });
});

describe('pagination', () => {
  it('walks the whole list without gaps or duplicates', async () => {
    const paged = await h.createOrganization();
    const titles = Array.from({ length: 7 }, (_, i) => `page item ${i}`);
    for (const title of titles) {
      expect((await h.request({ method: 'POST', url: '/api/v1/tasks', token: paged.readWriteToken, payload: { title } })).statusCode).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/tasks?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const body = json(await h.request({ method: 'GET', url, token: paged.readOnlyToken }));
      expect(body.data.length).toBeLessThanOrEqual(3);
      seen.push(...body.data.map((t: { title: string }) => t.title));
      cursor = body.page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...titles].reverse());
  });

  it('filters by status', async () => {
    await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'blocked one', status: 'blocked' } });
    const body = json(await h.request({ method: 'GET', url: '/api/v1/tasks?status=blocked', token: org.readWriteToken }));
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((t: { status: string }) => t.status === 'blocked')).toBe(true);
  });
});
