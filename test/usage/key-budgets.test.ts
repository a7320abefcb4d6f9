import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseToken } from '../../domain/identity/tokens';
import { cleanEnv, runCli } from '../support/cli';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { counter as countedIn, limitHeaders, movableClock, statuses } from '../support/limits';

// Budgets per key: a key's own daily request budget and its daily caps of writes by operation, counted in
// PostgreSQL by the organization's local day, exact under concurrency, set by people in the console (or the CLI)
// and shown in the Agent Command Center. The clock moves the limits only, as in limits.test.ts.

const { clock, at } = movableClock('2031-02-10T10:00:05Z');
let h: Harness;
let sequence = 0;

beforeAll(async () => {
  h = await startHarness({ clock });
});
afterAll(() => h?.close());

const counter = (scope: string) => countedIn(h.db, scope);

interface Site {
  org: TestOrganization;
  owner: ConsoleSession;
  /** The id of the organization's read-write key (`test agent`), the one the tests give budgets. */
  keyId: string;
}

/** An organization (Berlin time: its midnight is 23:00 UTC in winter) with an owner signed in to the console. */
async function site(settings: { plan?: string; timezone?: string } = {}): Promise<Site> {
  const org = await h.createOrganization({ timezone: 'Europe/Berlin', ...settings });
  const owner = await addPerson(h.db, org.organization, 'owner');
  return { org, owner: await signIn(h.app, org.organization, owner), keyId: parseToken(org.readWriteToken)!.id };
}

const setBudget = (session: ConsoleSession, keyId: string, payload: Record<string, unknown>) =>
  session.request({ method: 'PATCH', url: `/console/api/v1/api-keys/${keyId}/budget`, payload });

const getTasks = (token: string) => h.request({ method: 'GET', url: '/api/v1/tasks', token });
const createTask = (token: string, title: string, headers: Record<string, string> = {}) =>
  h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title }, headers });
const postMcp = (token: string) =>
  h.request({
    method: 'POST',
    url: '/mcp',
    token,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

async function decisions(org: TestOrganization, operation = 'tasks.create'): Promise<number> {
  const { rows } = await h.db.query('SELECT count(*)::int AS n FROM gate_decisions WHERE org_id = $1 AND operation = $2', [org.organization.id, operation]);
  return rows[0].n;
}

async function budgetRow(keyId: string) {
  const { rows } = await h.db.query('SELECT daily_request_budget, write_caps FROM api_keys WHERE id = $1', [keyId]);
  return rows[0];
}

/** A plan for this file only, with a small per-minute ceiling; the real plans stay as they are. */
async function smallPlan(restPerMinute: number): Promise<string> {
  const name = `test-budgets-${process.pid}-${Date.now().toString(36)}-${sequence++}`;
  await h.db.query(
    `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
     VALUES ($1, 100000, $2, 1000, 1000, '{}', 'a plan of the key budgets tests')`,
    [name, restPerMinute],
  );
  return name;
}

describe("a key's daily request budget", () => {
  it('200 requests at once against a budget of 20 admit exactly 20; the others are 429 key_daily and do not spend the organization’s day', async () => {
    at('2031-02-10T10:00:05Z');
    const { org, owner, keyId } = await site();
    const set = await setBudget(owner, keyId, { daily_request_budget: 20 });
    expect(set.statusCode, set.body).toBe(200);
    expect(json(set).data).toMatchObject({ id: keyId, daily_request_budget: 20, write_caps: {} });

    const burst = await Promise.all(Array.from({ length: 200 }, () => getTasks(org.readWriteToken)));
    expect(statuses(burst)).toEqual({ 200: 20, 429: 180 });
    // Every request is counted against the key, refused ones too; the organization's day only the 20 it admitted.
    expect(await counter(`keyday:${keyId}`)).toBe(200);
    expect(await counter(`day:${org.organization.id}`)).toBe(20);

    // 11:00 in Berlin now; the key's day ends at midnight there, 23:00 UTC.
    const refused = burst.find((r) => r.statusCode === 429)!;
    const untilMidnight = 13 * 3600 - 5;
    expect(json(refused).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(/This key has used its own daily budget of 20 requests.*midnight in Europe\/Berlin, 2031-02-10T23:00:00.000Z/),
      details: { limit: 'key_daily', ceiling: 20, interface: 'rest', retry_after_seconds: untilMidnight, resets_at: '2031-02-10T23:00:00.000Z' },
    });
    expect(refused.headers['retry-after']).toBe(String(untilMidnight));
    expect(limitHeaders(refused)).toEqual({ limit: 20, remaining: 0, reset: untilMidnight });

    // Over MCP the same key is refused by the same budget.
    const mcp = await postMcp(org.readWriteToken);
    expect(mcp.statusCode).toBe(429);
    expect(json(mcp).error.data).toMatchObject({ code: 'rate_limited', limit: 'key_daily', ceiling: 20 });

    // The organization's other key has no budget of its own: unaffected, and nothing is counted for it but its minute.
    const reader = await getTasks(org.readOnlyToken);
    expect(reader.statusCode).toBe(200);
    expect(limitHeaders(reader).limit).toBe(1200);
    expect(await counter(`keyday:${parseToken(org.readOnlyToken)!.id}`)).toBeUndefined();
    // Nor are people's tokens.
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: org.reviewerToken })).statusCode).toBe(200);
    expect(await counter(`keyday:${parseToken(org.reviewerToken)!.id}`)).toBeUndefined();
    expect(await counter(`day:${org.organization.id}`)).toBe(22);
  });

  it('another key of the same organization has a budget of its own; the headers tell the budget when it is nearest exhaustion', async () => {
    at('2031-02-10T11:00:00Z');
    const { org, owner, keyId } = await site();
    const otherToken = await org.keyWith(['tasks.read', 'tasks.write']);
    const otherId = parseToken(otherToken)!.id;
    expect((await setBudget(owner, keyId, { daily_request_budget: 3 })).statusCode).toBe(200);
    expect((await setBudget(owner, otherId, { daily_request_budget: 5 })).statusCode).toBe(200);

    const first = await getTasks(org.readWriteToken);
    expect(limitHeaders(first)).toEqual({ limit: 3, remaining: 2, reset: 12 * 3600 });
    for (let i = 0; i < 2; i++) expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    expect(json(await getTasks(org.readWriteToken)).error.details.limit).toBe('key_daily');

    const others = [];
    for (let i = 0; i < 6; i++) others.push((await getTasks(otherToken)).statusCode);
    expect(others).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it("a request its token's minute ceiling refuses does not spend the key's budget", async () => {
    at('2031-02-10T12:00:00Z');
    const { org, owner, keyId } = await site({ plan: await smallPlan(5) });
    expect((await setBudget(owner, keyId, { daily_request_budget: 8 })).statusCode).toBe(200);
    const minute = [];
    for (let i = 0; i < 8; i++) minute.push(json(await getTasks(org.readWriteToken)).error?.details.limit ?? 'ok');
    expect(minute).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'per_minute', 'per_minute', 'per_minute']);
    expect(await counter(`keyday:${keyId}`)).toBe(5);

    at('2031-02-10T12:01:00Z');
    const next = [];
    for (let i = 0; i < 4; i++) next.push(json(await getTasks(org.readWriteToken)).error?.details.limit ?? 'ok');
    expect(next).toEqual(['ok', 'ok', 'ok', 'key_daily']);
  });

  it("starts again at the organization's next local midnight, and a key created with a budget has it from its first request", async () => {
    at('2031-02-10T22:59:30Z'); // 23:59:30 in Berlin
    const { owner } = await site();
    const created = await owner.request({
      method: 'POST',
      url: '/console/api/v1/api-keys',
      payload: { label: 'Budgeted from the start', access: 'read_write', daily_request_budget: 2, write_caps: { 'tasks.create': 1 } },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { key, token } = json(created).data;
    expect(key).toMatchObject({ daily_request_budget: 2, write_caps: { 'tasks.create': 1 } });

    expect((await getTasks(token)).statusCode).toBe(200);
    expect((await createTask(token, 'an ordinary task')).statusCode).toBe(201);
    const late = await getTasks(token);
    expect(late.statusCode).toBe(429);
    expect(late.headers['retry-after']).toBe('30');

    at('2031-02-10T23:00:00Z'); // midnight in Berlin: a new day for the key's budget and its caps
    expect((await getTasks(token)).statusCode).toBe(200);
    expect((await createTask(token, 'an ordinary task, the next day')).statusCode).toBe(201);
    expect(await counter(`keyday:${key.id}`)).toBe(5);
    const { rows } = await h.db.query(`SELECT period, count FROM usage_counters WHERE scope = $1 ORDER BY period`, [`keyday:${key.id}`]);
    expect(rows).toEqual([
      { period: '2031-02-10', count: 3 },
      { period: '2031-02-11', count: 2 },
    ]);
  });
});

describe("a key's daily caps of writes", () => {
  it('200 writes at once against a cap of 20: exactly 20 reach the gate, 180 are 429 key_operation_daily', async () => {
    at('2031-02-11T09:00:00Z');
    const { org, owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { write_caps: { 'tasks.create': 20 } })).statusCode).toBe(200);
    const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => createTask(org.readWriteToken, `burst task ${i}`)));
    expect(statuses(burst)).toEqual({ 201: 20, 429: 180 });
    expect(await decisions(org)).toBe(20);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1', [org.organization.id]);
    expect(rows[0].n).toBe(20);
    expect(await counter(`keyop:${keyId}:tasks.create`)).toBe(200);

    const refused = burst.find((r) => r.statusCode === 429)!;
    expect(json(refused).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(/daily cap of 20 tasks\.create writes.*midnight in Europe\/Berlin/),
      details: { limit: 'key_operation_daily', operation: 'tasks.create', cap: 20, retry_after_seconds: 14 * 3600, resets_at: '2031-02-11T23:00:00.000Z' },
    });
    expect(refused.headers['retry-after']).toBe(String(14 * 3600));

    // Other operations of the same key, and the same operation by another key, are not capped.
    const task = json(burst.find((r) => r.statusCode === 201)!).data;
    const updated = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken, payload: { status: 'done' } });
    expect(updated.statusCode, updated.body).toBe(200);
    const other = await org.keyWith(['tasks.read', 'tasks.write']);
    expect((await createTask(other, 'by another key')).statusCode).toBe(201);
    expect(await decisions(org)).toBe(21);
  });

  it('counts every write submitted, whatever the decision: denied and held writes too', async () => {
    at('2031-02-11T10:00:00Z');
    const { org, owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { write_caps: { 'tasks.create': 2 } })).statusCode).toBe(200);
    expect((await createTask(org.readWriteToken, 'deny this task')).statusCode).toBe(403);
    expect((await createTask(org.readWriteToken, 'review this task')).statusCode).toBe(202);
    const third = await createTask(org.readWriteToken, 'an ordinary task');
    expect(third.statusCode).toBe(429);
    expect(json(third).error.details).toMatchObject({ limit: 'key_operation_daily', operation: 'tasks.create', cap: 2 });
    expect(await decisions(org)).toBe(2);
  });

  it('a replay of an Idempotency-Key is not counted again; a refused write lets its key go, to be sent again once the cap resets', async () => {
    at('2031-02-11T11:00:00Z');
    const { org, owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { write_caps: { 'tasks.create': 1 } })).statusCode).toBe(200);
    const first = await createTask(org.readWriteToken, 'once only', { 'idempotency-key': 'budget-once' });
    expect(first.statusCode).toBe(201);
    const replay = await createTask(org.readWriteToken, 'once only', { 'idempotency-key': 'budget-once' });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await counter(`keyop:${keyId}:tasks.create`)).toBe(1);

    const refused = await createTask(org.readWriteToken, 'tomorrow', { 'idempotency-key': 'budget-tomorrow' });
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error.details.limit).toBe('key_operation_daily');
    at('2031-02-11T23:00:00Z');
    const again = await createTask(org.readWriteToken, 'tomorrow', { 'idempotency-key': 'budget-tomorrow' });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await decisions(org)).toBe(2);
  });
});

describe('setting budgets', () => {
  it('records each change with what it was; setting what is set records nothing; caps are replaced whole', async () => {
    at('2031-02-12T09:00:00Z');
    const { owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { daily_request_budget: 500, write_caps: { 'customers.update': 20, 'tasks.create': 5 } })).statusCode).toBe(200);
    expect((await setBudget(owner, keyId, { daily_request_budget: 500 })).statusCode).toBe(200);
    const cleared = await setBudget(owner, keyId, { daily_request_budget: null, write_caps: { 'tasks.create': 7 } });
    expect(json(cleared).data).toMatchObject({ daily_request_budget: null, write_caps: { 'tasks.create': 7 } });
    const { rows } = await h.db.query(`SELECT type, actor_type, data FROM audit_events WHERE resource_id = $1 AND type = 'api_key.budget_changed' ORDER BY id`, [keyId]);
    expect(rows).toEqual([
      {
        type: 'api_key.budget_changed',
        actor_type: 'user',
        data: expect.objectContaining({ daily_request_budget: 500, write_caps: { 'customers.update': 20, 'tasks.create': 5 }, before: { daily_request_budget: null, write_caps: {} } }),
      },
      {
        type: 'api_key.budget_changed',
        actor_type: 'user',
        data: expect.objectContaining({ daily_request_budget: null, write_caps: { 'tasks.create': 7 }, before: { daily_request_budget: 500, write_caps: { 'customers.update': 20, 'tasks.create': 5 } } }),
      },
    ]);
  });

  it('refuses bad budgets with 422 and changes nothing', async () => {
    const { owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { daily_request_budget: 50, write_caps: { 'tasks.create': 5 } })).statusCode).toBe(200);
    const bad = [
      { write_caps: { 'rockets.launch': 5 } },
      { write_caps: { 'tasks.list': 5 } },
      { write_caps: { 'tasks.create': 0 } },
      { write_caps: { 'tasks.create': -3 } },
      { write_caps: { 'tasks.create': 2.5 } },
      { write_caps: { 'tasks.create': 1e12 } },
      { write_caps: { 'tasks.create': '5' } },
      { write_caps: ['tasks.create'] },
      { daily_request_budget: 0 },
      { daily_request_budget: -1 },
      { daily_request_budget: 1e12 },
      { daily_request_budget: 3.5 },
      { daily_request_budget: 'lots' },
      { daily_request_budget: 10, colour: 'blue' },
    ];
    for (const payload of bad) {
      const response = await setBudget(owner, keyId, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(json(response).error.code).toBe('validation_failed');
    }
    const unknown = json(await setBudget(owner, keyId, { write_caps: { 'rockets.launch': 5 } })).error;
    expect(unknown.details.fields).toEqual([{ field: 'write_caps.rockets.launch', message: expect.stringContaining('customers.update') }]);
    expect(await budgetRow(keyId)).toEqual({ daily_request_budget: 50, write_caps: { 'tasks.create': 5 } });

    // A key is not created with a bad budget either.
    const created = await owner.request({ method: 'POST', url: '/console/api/v1/api-keys', payload: { label: 'Bad', access: 'read', write_caps: { 'rockets.launch': 1 } } });
    expect(created.statusCode).toBe(422);
  });

  it("a person of another organization cannot see or set this organization's keys' budgets (404), nor can a member", async () => {
    const acme = await site();
    const globex = await site();
    expect((await setBudget(acme.owner, acme.keyId, { daily_request_budget: 50 })).statusCode).toBe(200);
    const foreign = await setBudget(globex.owner, acme.keyId, { daily_request_budget: 1, write_caps: { 'tasks.create': 1 } });
    expect(foreign.statusCode).toBe(404);
    expect(json(foreign).error.code).toBe('not_found');
    expect((await setBudget(globex.owner, acme.keyId, {})).statusCode).toBe(404);
    const member = await signIn(h.app, acme.org.organization, await addPerson(h.db, acme.org.organization, 'member'));
    const byMember = await setBudget(member, acme.keyId, { daily_request_budget: 1 });
    expect(byMember.statusCode).toBe(403);
    expect(json(byMember).error.code).toBe('insufficient_role');
    expect(await budgetRow(acme.keyId)).toEqual({ daily_request_budget: 50, write_caps: {} });
    // Not offered to agents at all.
    expect((await h.request({ method: 'PATCH', url: `/api/v1/api-keys/${acme.keyId}/budget`, token: acme.org.readWriteToken, payload: {} })).statusCode).toBe(404);
  });

  it('the abilities list names the gated writes each write ability allows, for the console’s caps', async () => {
    const { owner } = await site();
    const abilities = json(await owner.request({ method: 'GET', url: '/console/api/v1/api-keys/abilities' })).data;
    expect(abilities.find((a: { ability: string }) => a.ability === 'customers.write').operations).toEqual(['customers.create', 'customers.update']);
    expect(abilities.find((a: { ability: string }) => a.ability === 'tasks.read').operations).toEqual([]);
  });

  it('gatehouse key budget sets and clears them; key list shows them', async () => {
    const { org, keyId } = await site();
    const env = cleanEnv({ DATABASE_URL: inject('databaseUrl') });
    const slug = org.organization.slug;
    const set = await runCli(['key', 'budget', '--org', slug, '--id', keyId, '--daily-requests', '500', '--cap', 'customers.update=20', '--cap', 'tasks.create=5', '--json'], env);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    expect(set.json).toMatchObject({ id: keyId, dailyRequestBudget: 500, writeCaps: { 'customers.update': 20, 'tasks.create': 5 } });

    const listed = await runCli(['key', 'list', '--org', slug], env);
    expect(listed.stdout).toContain('500 requests a day; customers.update 20 a day; tasks.create 5 a day');

    const removed = await runCli(['key', 'budget', '--org', slug, '--id', keyId, '--daily-requests', 'none', '--cap', 'tasks.create=none', '--json'], env);
    expect(removed.json).toMatchObject({ dailyRequestBudget: null, writeCaps: { 'customers.update': 20 } });
    const cleared = await runCli(['key', 'budget', '--org', slug, '--id', keyId, '--clear-caps'], env);
    expect(cleared.stdout).toContain(`(${keyId}): none`);

    const unknown = await runCli(['key', 'budget', '--org', slug, '--id', keyId, '--cap', 'rockets.launch=3', '--json'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.json.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('rockets.launch') });
    expect(await budgetRow(keyId)).toEqual({ daily_request_budget: null, write_caps: {} });
    // Each command is a process of its own, loading the whole CLI: a few seconds each.
  }, 150_000);
});

describe('the Agent Command Center', () => {
  it("shows each key's use of its own budgets today", async () => {
    at('2031-02-13T09:00:00Z');
    const { org, owner, keyId } = await site();
    expect((await setBudget(owner, keyId, { daily_request_budget: 10, write_caps: { 'tasks.create': 1, 'customers.update': 4 } })).statusCode).toBe(200);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    expect((await createTask(org.readWriteToken, 'an ordinary task')).statusCode).toBe(201);
    expect((await createTask(org.readWriteToken, 'one too many')).statusCode).toBe(429);

    const agents = json(await owner.request({ method: 'GET', url: '/console/api/v1/agents' })).data;
    expect(agents.find((agent: { api_key_id: string }) => agent.api_key_id === keyId)).toMatchObject({
      request_budget: { used: 3, budget: 10 },
      write_caps: [
        { operation: 'customers.update', used: 0, cap: 4 },
        { operation: 'tasks.create', used: 2, cap: 1 },
      ],
    });
    expect(agents.find((agent: { api_key_id: string }) => agent.api_key_id === parseToken(org.readOnlyToken)!.id)).toMatchObject({ request_budget: null, write_caps: [] });
  });
});
