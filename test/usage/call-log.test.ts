import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectDatabase } from '../../db/database';
import { callLogWriter, listCalls, recordCall, type CallRecord, type LoggedCall } from '../../domain/usage/call-log';
import { parseToken } from '../../domain/identity/tokens';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;
let other: TestOrganization;


beforeAll(async () => {
  h = await startHarness();
  await h.listen();
  org = await h.createOrganization();
  other = await h.createOrganization();
});
afterAll(() => h?.close());

const missingTask = `task_${'0'.repeat(26)}`;
const keyIdOf = (token: string) => parseToken(token)!.id;

/** A fresh key per test, so its rows are exactly the calls the test made. */
async function freshKey(abilities: string[], access: 'read' | 'read_write' = 'read_write') {
  const token = await org.keyWith(abilities, access);
  return { token, keyId: keyIdOf(token) };
}

/** The key's rows, oldest first, once `count` of them are written (recording is asynchronous). */
async function rowsOf(orgId: string, keyId: string, count: number): Promise<LoggedCall[]> {
  const read = async () => (await listCalls(h.db, orgId, { api_key_id: keyId, limit: 50 })).items;
  await expect.poll(async () => (await read()).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(count);
  return (await read()).reverse();
}

describe('REST calls', () => {
  it('a read is recorded once: interface, key, operation, outcome ok, status and latency', async () => {
    const { token, keyId } = await freshKey(['tasks.read'], 'read');
    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token })).statusCode).toBe(200);

    const rows = await rowsOf(org.organization.id, keyId, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      api_key_id: keyId,
      user_id: null,
      interface: 'rest',
      operation: 'tasks.list',
      tool: null,
      status: 200,
      outcome: 'ok',
    });
    expect(rows[0]!.latency_ms).toBeGreaterThan(0);
    expect(rows[0]!.id).toMatch(/^call_/);
  });

  it('gated writes are recorded with the gate outcome: applied, policy_denied, pending_review', async () => {
    const { token, keyId } = await freshKey(['tasks.read', 'tasks.write']);
    const create = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
    expect((await create('Allowed from REST')).statusCode).toBe(201);
    expect((await create('deny from REST')).statusCode).toBe(403);
    expect((await create('review from REST')).statusCode).toBe(202);

    const rows = await rowsOf(org.organization.id, keyId, 3);
    expect(rows).toHaveLength(3);
    expect(rows.map(({ interface: via, operation, status, outcome }) => ({ via, operation, status, outcome }))).toEqual([
      { via: 'rest', operation: 'tasks.create', status: 201, outcome: 'applied' },
      { via: 'rest', operation: 'tasks.create', status: 403, outcome: 'policy_denied' },
      { via: 'rest', operation: 'tasks.create', status: 202, outcome: 'pending_review' },
    ]);
    for (const row of rows) expect(row.latency_ms).toBeGreaterThan(0);
  });

  it('an error is recorded with its code; a person is recorded by user; a request without a valid token is not recorded', async () => {
    const { token, keyId } = await freshKey(['tasks.read'], 'read');
    expect((await h.request({ method: 'GET', url: `/api/v1/tasks/${missingTask}`, token })).statusCode).toBe(404);
    const [missing] = await rowsOf(org.organization.id, keyId, 1);
    expect(missing).toMatchObject({ operation: 'tasks.get', status: 404, outcome: 'not_found' });

    const before = (await listCalls(h.db, org.organization.id, { limit: 200 })).items.length;
    expect((await h.request({ method: 'GET', url: '/api/v1/reviews', token: org.reviewerToken })).statusCode).toBe(200);
    await expect
      .poll(async () => (await listCalls(h.db, org.organization.id, { limit: 200 })).items.find((row) => row.user_id !== null))
      .toMatchObject({ api_key_id: null, user_id: expect.stringMatching(/^usr_/), operation: 'reviews.list', outcome: 'ok' });

    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token: 'gate_k_nonsense' })).statusCode).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await listCalls(h.db, org.organization.id, { limit: 200 })).items.length).toBe(before + 1);
  });
});

describe('MCP tool calls', () => {
  it('a read is recorded once with the tool and its operation', async () => {
    const { token, keyId } = await freshKey(['tasks.read'], 'read');
    const result = await (await h.mcp(token)).callTool({ name: 'list_tasks', arguments: {} });
    expect(result.isError).toBeFalsy();

    const rows = await rowsOf(org.organization.id, keyId, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      api_key_id: keyId,
      user_id: null,
      interface: 'mcp',
      operation: 'tasks.list',
      tool: 'list_tasks',
      status: 200,
      outcome: 'ok',
    });
    expect(rows[0]!.latency_ms).toBeGreaterThan(0);
  });

  it('gated writes are recorded with the gate outcome: applied, policy_denied, pending_review', async () => {
    const { token, keyId } = await freshKey(['tasks.read', 'tasks.write']);
    const mcp = await h.mcp(token);
    expect((await mcp.callTool({ name: 'create_task', arguments: { title: 'Allowed from MCP' } })).isError).toBeFalsy();
    expect((await mcp.callTool({ name: 'create_task', arguments: { title: 'deny from MCP' } })).isError).toBe(true);
    expect((await mcp.callTool({ name: 'create_task', arguments: { title: 'review from MCP' } })).isError).toBeFalsy();

    const rows = await rowsOf(org.organization.id, keyId, 3);
    expect(rows).toHaveLength(3);
    expect(rows.map(({ interface: via, operation, tool, status, outcome }) => ({ via, operation, tool, status, outcome }))).toEqual([
      { via: 'mcp', operation: 'tasks.create', tool: 'create_task', status: 200, outcome: 'applied' },
      { via: 'mcp', operation: 'tasks.create', tool: 'create_task', status: 403, outcome: 'policy_denied' },
      { via: 'mcp', operation: 'tasks.create', tool: 'create_task', status: 200, outcome: 'pending_review' },
    ]);
    for (const row of rows) expect(row.latency_ms).toBeGreaterThan(0);
  });

  it('errors are recorded with their code, including calls refused before the tool runs (a tool the key lacks, arguments its schema refuses)', async () => {
    const { token, keyId } = await freshKey(['tasks.read'], 'read');
    const mcp = await h.mcp(token);
    expect((await mcp.callTool({ name: 'get_task', arguments: { id: missingTask } })).isError).toBe(true);
    await mcp.callTool({ name: 'create_task', arguments: { title: 'not my tool' } }).catch(() => undefined);
    await mcp.callTool({ name: 'list_tasks', arguments: { limit: 'many' } }).catch(() => undefined);
    await mcp.callTool({ name: 'get_review_status', arguments: { review_id: `rev_${'0'.repeat(26)}` } });

    const rows = await rowsOf(org.organization.id, keyId, 4);
    expect(rows).toHaveLength(4);
    expect(rows.map(({ operation, tool, status, outcome }) => ({ operation, tool, status, outcome }))).toEqual([
      { operation: 'tasks.get', tool: 'get_task', status: 404, outcome: 'not_found' },
      { operation: 'tasks.create', tool: 'create_task', status: 404, outcome: 'not_found' },
      { operation: 'tasks.list', tool: 'list_tasks', status: 422, outcome: 'validation_failed' },
      { operation: 'reviews.status', tool: 'get_review_status', status: 404, outcome: 'not_found' },
    ]);
  });
});

describe('what a row costs', () => {
  it('a row commits without waiting for the disk, in its own transaction only: the connection keeps synchronous_commit on', async () => {
    const { keyId } = await freshKey(['tasks.read'], 'read');
    // One connection, so the statement after the row runs where the row was written.
    const single = connectDatabase(inject('databaseUrl'), { maxConnections: 1 });
    try {
      await recordCall(single, { orgId: org.organization.id, apiKeyId: keyId, userId: null, interface: 'rest', operation: 'tasks.list', tool: null, status: 200, outcome: 'ok', latencyMs: 3 });
      expect((await single.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit).toBe('on');
      const inTransaction = await single.transaction((tx) => tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit'));
      expect(inTransaction.rows[0]!.synchronous_commit).toBe('on');
      expect(await rowsOf(org.organization.id, keyId, 1)).toMatchObject([{ interface: 'rest', operation: 'tasks.list', status: 200, outcome: 'ok', latency_ms: 3 }]);
    } finally {
      await single.close();
    }
  });
});

describe('the call log writer', () => {
  it('writes the calls that end together in one go; a row the database refuses costs that row alone, and a NUL in a name is stored', async () => {
    const { keyId } = await freshKey(['tasks.read'], 'read');
    const errors: unknown[] = [];
    const writer = callLogWriter(h.db, (error) => errors.push(error));
    const call = (operation: string, orgId = org.organization.id): CallRecord => ({
      orgId,
      apiKeyId: keyId,
      userId: null,
      interface: 'mcp',
      operation,
      tool: operation,
      status: 200,
      outcome: 'ok',
      latencyMs: 1,
    });
    writer.record(call('tasks.list'));
    writer.record(call('x\u0000y'));
    // An organization that does not exist: the database refuses the row (its foreign key).
    writer.record(call('tasks.get', `org_${'0'.repeat(26)}`));
    writer.record(call('tasks.search'));
    await writer.drain();
    expect(errors).toHaveLength(1);
    const rows = await rowsOf(org.organization.id, keyId, 3);
    expect(rows.map((row) => [row.operation, row.tool])).toEqual([
      ['tasks.list', 'tasks.list'],
      ['x\uFFFDy', 'x\uFFFDy'],
      ['tasks.search', 'tasks.search'],
    ]);
  });
});

describe('the call log', () => {
  it("holds only the organization's own calls, and filters and pages", async () => {
    await h.request({ method: 'GET', url: '/api/v1/tasks', token: other.readWriteToken });
    await (await h.mcp(other.readWriteToken)).callTool({ name: 'list_tasks', arguments: {} });
    const otherKey = keyIdOf(other.readWriteToken);
    await rowsOf(other.organization.id, otherKey, 2);

    const { token, keyId } = await freshKey(['tasks.read'], 'read');
    for (let i = 0; i < 3; i++) await h.request({ method: 'GET', url: '/api/v1/tasks', token });
    await (await h.mcp(token)).callTool({ name: 'list_tasks', arguments: {} });
    await rowsOf(org.organization.id, keyId, 4);

    const ours = (await listCalls(h.db, org.organization.id, { limit: 200 })).items;
    expect(ours.some((row) => row.api_key_id === otherKey)).toBe(false);
    const theirs = (await listCalls(h.db, other.organization.id, { limit: 200 })).items;
    expect(theirs.map((row) => row.api_key_id)).toEqual([otherKey, otherKey]);
    expect(theirs.map((row) => row.interface).sort()).toEqual(['mcp', 'rest']);

    const mcpOnly = await listCalls(h.db, org.organization.id, { api_key_id: keyId, interface: 'mcp', limit: 10 });
    expect(mcpOnly.items.map((row) => row.tool)).toEqual(['list_tasks']);

    const first = await listCalls(h.db, org.organization.id, { api_key_id: keyId, limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.nextCursor).not.toBeNull();
    const second = await listCalls(h.db, org.organization.id, { api_key_id: keyId, limit: 3, cursor: first.nextCursor! });
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.items, ...second.items].map((row) => row.id)).size).toBe(4);
    // A cursor from another organization's list leads nowhere here.
    const foreign = await listCalls(h.db, other.organization.id, { limit: 1 });
    expect((await listCalls(h.db, org.organization.id, { limit: 10, cursor: foreign.nextCursor! })).items).toEqual([]);
  });
});
