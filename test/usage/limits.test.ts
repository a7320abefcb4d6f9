import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { connectDatabase, type Database } from '../../db/database';
import { updateOrganization } from '../../domain/identity/organizations';
import { parseToken } from '../../domain/identity/tokens';
import { createRequestLimits } from '../../domain/usage/limits';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { connectMcp } from '../support/mcp';

// The clock only moves the request limits (the minute, the organization's day). Every instant here is in the
// future: a counter is swept once its window has passed by the real clock too, so a window in the past could be
// swept by another test file's app while this one still counts in it.
let now = new Date('2031-01-15T10:00:05Z');
const clock = () => now;
const at = (instant: string) => {
  now = new Date(instant);
};

let h: Harness;
let sequence = 0;

beforeAll(async () => {
  h = await startHarness({ clock });
});
afterAll(() => h?.close());

interface PlanNumbers {
  daily?: number;
  rest?: number;
  mcp?: number;
  cap?: number;
  features?: string[];
}

/** A plan for this test only, with small numbers; the real plans stay as they are. */
async function testPlan({ daily = 100_000, rest = 1000, mcp = 1000, cap = 1000, features = [] }: PlanNumbers): Promise<string> {
  const name = `test-${process.pid}-${Date.now().toString(36)}-${sequence++}`;
  await h.db.query(
    `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
     VALUES ($1, $2, $3, $4, $5, $6, 'a plan of the limits tests')`,
    [name, daily, rest, mcp, cap, features],
  );
  return name;
}

async function organizationOn(numbers: PlanNumbers, timezone = 'UTC'): Promise<TestOrganization> {
  return h.createOrganization({ plan: await testPlan(numbers), timezone });
}

const getTasks = (token: string, app: FastifyInstance = h.app) =>
  app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${token}` } });

const mcpMessage = (method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** A raw POST to /mcp, as any MCP client sends it. */
const postMcp = (token: string, body = mcpMessage('tools/list')) =>
  h.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: body,
  });

const statuses = (responses: LightMyRequestResponse[]) =>
  responses.reduce<Record<number, number>>((counted, r) => ({ ...counted, [r.statusCode]: (counted[r.statusCode] ?? 0) + 1 }), {});

function limitHeaders(response: LightMyRequestResponse) {
  return {
    limit: Number(response.headers['x-ratelimit-limit']),
    remaining: Number(response.headers['x-ratelimit-remaining']),
    reset: Number(response.headers['x-ratelimit-reset']),
  };
}

async function counter(scope: string): Promise<number | undefined> {
  const { rows } = await h.db.query('SELECT sum(count)::int AS n FROM usage_counters WHERE scope = $1', [scope]);
  return rows[0].n ?? undefined;
}

const keyIdOf = async (org: TestOrganization, label: string) =>
  (await h.db.query('SELECT id FROM api_keys WHERE org_id = $1 AND label = $2', [org.organization.id, label])).rows[0].id as string;

describe('per minute, per token', () => {
  it('200 requests at once against a REST ceiling of 60 admit exactly 60; MCP is counted apart; another token is unaffected', async () => {
    at('2031-01-15T10:00:05Z');
    const org = await organizationOn({ rest: 60, mcp: 90 });
    const burst = await Promise.all(Array.from({ length: 200 }, () => getTasks(org.readWriteToken)));
    expect(statuses(burst)).toEqual({ 200: 60, 429: 140 });
    // Refused requests count too.
    expect(await counter(`rest:${await keyIdOf(org, 'test agent')}`)).toBe(200);

    const refused = burst.find((r) => r.statusCode === 429)!;
    expect(json(refused).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(/its 60 REST requests for this minute.*retry in 55 s, at 2031-01-15T10:01:00.000Z/),
      details: { limit: 'per_minute', ceiling: 60, interface: 'rest', retry_after_seconds: 55, resets_at: '2031-01-15T10:01:00.000Z' },
    });
    expect(refused.headers['retry-after']).toBe('55');
    expect(limitHeaders(refused)).toEqual({ limit: 60, remaining: 0, reset: 55 });

    // The same key over MCP has its own ceiling, untouched by the REST burst.
    const mcpBurst = await Promise.all(Array.from({ length: 150 }, () => postMcp(org.readWriteToken)));
    expect(statuses(mcpBurst)).toEqual({ 200: 90, 429: 60 });
    const mcpRefused = mcpBurst.find((r) => r.statusCode === 429)!;
    expect(json(mcpRefused)).toMatchObject({
      jsonrpc: '2.0',
      error: {
        message: expect.stringMatching(/^rate_limited: .*its 90 MCP requests for this minute.*retry in 55 s/),
        data: { code: 'rate_limited', limit: 'per_minute', ceiling: 90, interface: 'mcp', retry_after_seconds: 55 },
      },
    });
    expect(mcpRefused.headers['retry-after']).toBe('55');

    // Another token of the same organization has a minute of its own.
    const other = await getTasks(org.readOnlyToken);
    expect(other.statusCode).toBe(200);
    expect(limitHeaders(other)).toMatchObject({ limit: 60, remaining: 59 });

    // The next minute starts again.
    at('2031-01-15T10:01:00Z');
    const next = await getTasks(org.readWriteToken);
    expect(next.statusCode).toBe(200);
    expect(limitHeaders(next)).toEqual({ limit: 60, remaining: 59, reset: 60 });
  });

  it('personal tokens are counted per token too, and 401s are not counted at all', async () => {
    at('2031-01-15T11:00:00Z');
    const org = await organizationOn({ rest: 3 });
    for (let i = 0; i < 3; i++) expect((await h.request({ method: 'GET', url: '/api/v1/me', token: org.reviewerToken })).statusCode).toBe(200);
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: org.reviewerToken })).statusCode).toBe(429);
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: org.memberToken })).statusCode).toBe(200);

    const before = await counter(`day:${org.organization.id}`);
    const unauthorized = await h.request({ method: 'GET', url: '/api/v1/tasks', token: `${org.readWriteToken}x` });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers['x-ratelimit-limit']).toBeUndefined();
    expect(await counter(`day:${org.organization.id}`)).toBe(before);
  });

  it('a well-formed token that does not authenticate (wrong secret, revoked, expired, person deactivated) is refused with 401 and counted nowhere', async () => {
    at('2031-01-15T11:30:00Z');
    const org = await organizationOn({ rest: 100 });
    const keyId = await keyIdOf(org, 'test agent');
    const day = `day:${org.organization.id}`;
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    const counted = async () => ({ minute: await counter(`rest:${keyId}`), day: await counter(day) });
    const before = await counted();
    expect(before).toEqual({ minute: 1, day: 1 });

    // The same key id with another secret of the right shape: the digest does not match.
    const last = org.readWriteToken.at(-1) === 'A' ? 'B' : 'A';
    const forged = `${org.readWriteToken.slice(0, -1)}${last}`;
    expect((await getTasks(forged)).statusCode).toBe(401);

    await h.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [keyId]);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(401);
    await h.db.query(`UPDATE api_keys SET expires_at = NULL, revoked_at = now() WHERE id = $1`, [keyId]);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(401);
    const mcp = await postMcp(org.readWriteToken);
    expect(mcp.statusCode).toBe(401);
    expect(mcp.headers['x-ratelimit-limit']).toBeUndefined();

    await h.db.query(`UPDATE users SET deactivated_at = now() WHERE id = (SELECT user_id FROM personal_tokens WHERE id = $1)`, [
      parseToken(org.memberToken)!.id,
    ]);
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: org.memberToken })).statusCode).toBe(401);

    expect(await counted()).toEqual(before);
    expect(await counter(`rest:${parseToken(org.memberToken)!.id}`)).toBeUndefined();
  });

  it('an MCP client is told plainly when it hit the ceiling, and when to retry', async () => {
    at('2031-01-15T12:00:20Z');
    const org = await organizationOn({ mcp: 3 });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as { port: number };
    // initialize and notifications/initialized are two requests, tools/list the third.
    const mcp = await connectMcp(`http://127.0.0.1:${port}`, org.readWriteToken);
    try {
      await mcp.listTools();
      const error = await mcp.callTool({ name: 'whoami', arguments: {} }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error & { code?: number }).code).toBe(429);
      expect((error as Error).message).toMatch(/rate_limited: This token has used its 3 MCP requests for this minute \(the test-.* plan's ceiling\); retry in 40 s/);
      // The refused call is in the call log, as REST's 429s are.
      const keyId = await keyIdOf(org, 'test agent');
      await expect
        .poll(async () => (await h.db.query(`SELECT tool, outcome, status FROM call_log WHERE api_key_id = $1 AND interface = 'mcp'`, [keyId])).rows)
        .toEqual([{ tool: 'whoami', outcome: 'rate_limited', status: 429 }]);
    } finally {
      await mcp.close();
    }
  });
});

describe('the daily budget', () => {
  it('is one allowance for REST and MCP together', async () => {
    at('2031-01-16T09:30:00Z');
    const org = await organizationOn({ daily: 10, rest: 100, mcp: 100 });
    for (let i = 0; i < 6; i++) expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await postMcp(org.readWriteToken)).statusCode).toBe(200);
    const tenth = await postMcp(org.readOnlyToken);
    expect(tenth.statusCode).toBe(200);
    // The daily budget is nearer exhaustion than the minute's ceiling: the headers tell it.
    expect(limitHeaders(tenth)).toEqual({ limit: 10, remaining: 0, reset: 14.5 * 3600 });

    const rest = await getTasks(org.readOnlyToken);
    expect(rest.statusCode).toBe(429);
    expect(json(rest).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(/daily budget of 10 requests.*resets at midnight in UTC, 2031-01-17T00:00:00.000Z/),
      details: { limit: 'daily', ceiling: 10, resets_at: '2031-01-17T00:00:00.000Z', retry_after_seconds: 52_200 },
    });
    expect(rest.headers['retry-after']).toBe('52200');
    const mcp = await postMcp(org.readWriteToken);
    expect(mcp.statusCode).toBe(429);
    expect(json(mcp).error.data).toMatchObject({ code: 'rate_limited', limit: 'daily' });
  });

  it("a token refused by its minute ceiling does not spend the organization's day", async () => {
    at('2031-01-16T10:30:00Z');
    const org = await organizationOn({ daily: 20, rest: 5, mcp: 5 });
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push((await getTasks(org.readWriteToken)).statusCode);
    expect(answers.filter((status) => status === 200)).toHaveLength(5);
    const other = await getTasks(org.readOnlyToken);
    expect(other.statusCode).toBe(200);
    expect(limitHeaders(other).limit).toBe(5);
  });

  it('a change of time zone moves the end of the day with it', async () => {
    at('2031-01-16T14:00:00Z');
    const org = await organizationOn({ daily: 100, rest: 100, mcp: 100 }, 'Asia/Tokyo');
    expect((await getTasks(org.readOnlyToken)).statusCode).toBe(200);
    await updateOrganization(h.db, org.organization.slug, { timezone: 'America/Los_Angeles' });
    expect((await getTasks(org.readOnlyToken)).statusCode).toBe(200);
    const { rows } = await h.db.query(`SELECT expires_at FROM usage_counters WHERE scope = $1`, [`day:${org.organization.id}`]);
    expect(rows.map((row) => (row.expires_at as Date).toISOString())).toEqual(['2031-01-17T08:00:00.000Z']);
  });

  it('a zone Node knows but PostgreSQL does not is refused when it is set, not on every request after', async () => {
    const org = await organizationOn({});
    await expect(updateOrganization(h.db, org.organization.slug, { timezone: 'US/Pacific-New' })).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('resets at midnight in each organization’s own time zone', async () => {
    // 14:59 UTC: 23:59 in Tokyo, 06:59 in Los Angeles.
    at('2031-01-15T14:59:00Z');
    const tokyo = await organizationOn({ daily: 3 }, 'Asia/Tokyo');
    const angeles = await organizationOn({ daily: 3 }, 'America/Los_Angeles');
    for (const org of [tokyo, angeles]) {
      for (let i = 0; i < 3; i++) expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    }
    const tokyoRefused = await getTasks(tokyo.readWriteToken);
    expect(tokyoRefused.statusCode).toBe(429);
    expect(json(tokyoRefused).error.details).toMatchObject({ limit: 'daily', resets_at: '2031-01-15T15:00:00.000Z', retry_after_seconds: 60 });
    const angelesRefused = await getTasks(angeles.readWriteToken);
    expect(json(angelesRefused).error.details).toMatchObject({ limit: 'daily', resets_at: '2031-01-16T08:00:00.000Z' });

    at('2031-01-15T15:00:01Z'); // a new day in Tokyo, not yet in Los Angeles
    const me = await h.request({ method: 'GET', url: '/api/v1/me', token: tokyo.readWriteToken });
    expect(me.statusCode).toBe(200);
    expect(json(me).data.usage).toEqual({ date: '2031-01-16', used: 1, left: 2, resets_at: '2031-01-16T15:00:00.000Z' });
    expect((await getTasks(angeles.readWriteToken)).statusCode).toBe(429);

    at('2031-01-16T07:59:59Z');
    expect((await getTasks(angeles.readWriteToken)).statusCode).toBe(429);
    at('2031-01-16T08:00:00Z');
    const morning = await h.request({ method: 'GET', url: '/api/v1/me', token: angeles.readWriteToken });
    expect(morning.statusCode).toBe(200);
    expect(json(morning).data.usage).toEqual({ date: '2031-01-16', used: 1, left: 2, resets_at: '2031-01-17T08:00:00.000Z' });
  });

  it('a day of 23 hours (daylight saving begins in New York) ends at its real midnight', async () => {
    // 2031-03-09: clocks go from 02:00 EST to 03:00 EDT. Midnight was 05:00 UTC; the next is 04:00 UTC.
    at('2031-03-09T05:00:30Z');
    const org = await organizationOn({ daily: 2 }, 'America/New_York');
    const first = await h.request({ method: 'GET', url: '/api/v1/me', token: org.readWriteToken });
    expect(json(first).data.usage).toEqual({ date: '2031-03-09', used: 1, left: 1, resets_at: '2031-03-10T04:00:00.000Z' });
    expect(limitHeaders(first).reset).toBe(23 * 3600 - 30);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(429);

    at('2031-03-10T03:59:30Z'); // 23:59:30 EDT, still the 9th
    const late = await getTasks(org.readWriteToken);
    expect(late.statusCode).toBe(429);
    expect(late.headers['retry-after']).toBe('30');
    at('2031-03-10T04:00:00Z');
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
  });

  it('a day of 25 hours (daylight saving ends in New York) ends at its real midnight', async () => {
    // 2031-11-02: clocks go back from 02:00 EDT to 01:00 EST. Midnight was 04:00 UTC; the next is 05:00 UTC.
    at('2031-11-02T04:00:00Z');
    const org = await organizationOn({ daily: 1 }, 'America/New_York');
    const first = await h.request({ method: 'GET', url: '/api/v1/me', token: org.readWriteToken });
    expect(json(first).data.usage).toEqual({ date: '2031-11-02', used: 1, left: 0, resets_at: '2031-11-03T05:00:00.000Z' });
    expect(limitHeaders(first).reset).toBe(25 * 3600);

    at('2031-11-03T04:30:00Z'); // 23:30 EST, still the 2nd, 24.5 hours after midnight
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(429);
    at('2031-11-03T05:00:00Z');
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
  });
});

describe('several api processes', () => {
  let second: FastifyInstance;
  let secondDb: Database;
  beforeAll(async () => {
    // Another app with its own pool of connections, as another api process would be.
    secondDb = connectDatabase(inject('databaseUrl'), { maxConnections: 10 });
    second = await buildApp({ db: secondDb, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', clock, secrets: h.secrets });
  });
  afterAll(async () => {
    await second?.close();
    await secondDb?.close();
  });

  it('share one count: 100 requests at once, half on each, against a ceiling of 50 admit exactly 50', async () => {
    at('2031-01-17T10:00:00Z');
    const org = await organizationOn({ rest: 50 });
    const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => getTasks(org.readWriteToken, i % 2 ? second : h.app)));
    expect(statuses(burst)).toEqual({ 200: 50, 429: 50 });

    const reader = await getTasks(org.readOnlyToken, h.app);
    const readerAgain = await getTasks(org.readOnlyToken, second);
    expect([limitHeaders(reader).remaining, limitHeaders(readerAgain).remaining]).toEqual([49, 48]);
  });
});

describe('housekeeping', () => {
  it('counters whose window has passed are swept; counters still counting are kept', async () => {
    at('2031-01-17T12:00:00Z');
    const [gone, kept] = [`rest:key_swept_${process.pid}`, `day:org_kept_${process.pid}`];
    await h.db.query(
      `INSERT INTO usage_counters (scope, period, count, expires_at)
       VALUES ($1, '2020-01-01T00:00', 5, '2020-01-01T00:01:00Z'), ($2, '2031-01-17', 3, '2031-01-18T00:00:00Z')`,
      [gone, kept],
    );
    // A fresh app sweeps on its first counted request (then at most once a minute).
    const fresh = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', clock, secrets: h.secrets });
    try {
      const org = await h.createOrganization();
      expect((await getTasks(org.readWriteToken, fresh)).statusCode).toBe(200);
      await expect.poll(() => counter(gone)).toBeUndefined();
      expect(await counter(kept)).toBe(3);
    } finally {
      await fresh.close();
    }
  });
});

describe('what counting costs', () => {
  it('a count turns off the wait for the disk in its own transaction only: the connection and later transactions keep synchronous_commit on', async () => {
    at('2031-01-17T12:00:00Z');
    // One connection, so the statement after the count runs where the count ran.
    const single = connectDatabase(inject('databaseUrl'), { maxConnections: 1 });
    const limits = createRequestLimits({ db: single, clock });
    try {
      const org = await h.createOrganization();
      const { verdict } = await limits.admit(`Bearer ${org.readWriteToken}`, 'rest');
      expect(verdict).toMatchObject({ admitted: true, perMinute: { used: 1 } });
      const { rows } = await single.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      expect(rows[0]!.synchronous_commit).toBe('on');
      // The business data's own transactions still wait for the disk.
      const inTransaction = await single.transaction((tx) => tx.query<{ synchronous_commit: string }>('SHOW synchronous_commit'));
      expect(inTransaction.rows[0]!.synchronous_commit).toBe('on');
      expect((await limits.admit(`Bearer ${org.readWriteToken}`, 'rest')).verdict?.perMinute.used).toBe(2);
    } finally {
      await limits.close();
      await single.close();
    }
  });
});

describe('headers on every kind of answer', () => {
  it('200, 201, 202, 403, 404, 422 and 429 all carry the limit, what is left and the reset', async () => {
    at('2031-01-18T10:00:10Z');
    const org = await organizationOn({ rest: 8, daily: 1000 });
    const answers = [
      await getTasks(org.readWriteToken),
      await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'an ordinary task' } }),
      await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'review this task' } }),
      await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'deny this task' } }),
      await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'ordinary', status: 'someday' } }),
      await h.request({ method: 'GET', url: '/api/v1/tasks/task_missing', token: org.readWriteToken }),
      await h.request({ method: 'GET', url: '/api/v1/organizations/another-org/tasks', token: org.readWriteToken }),
      await h.request({ method: 'GET', url: '/api/v1/work-logs', token: org.readWriteToken }),
      await getTasks(org.readWriteToken),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 201, 202, 403, 422, 404, 404, 403, 429]);
    expect(json(answers[3]!).error.code).toBe('policy_denied');
    expect(json(answers[7]!).error.code).toBe('feature_not_in_plan');
    expect(answers.map((r) => limitHeaders(r))).toEqual(
      [7, 6, 5, 4, 3, 2, 1, 0, 0].map((remaining) => ({ limit: 8, remaining, reset: 50 })),
    );
    expect(answers.slice(0, 8).map((r) => r.headers['retry-after'])).toEqual(Array(8).fill(undefined));
    expect(answers[8]!.headers['retry-after']).toBe('50');
  });

  it('MCP answers carry them too, and the MCP ceiling is what they count against', async () => {
    at('2031-01-18T11:00:00Z');
    const org = await organizationOn({ rest: 5, mcp: 7 });
    const listed = await postMcp(org.readWriteToken);
    expect(listed.statusCode).toBe(200);
    expect(limitHeaders(listed)).toEqual({ limit: 7, remaining: 6, reset: 60 });
    const called = await postMcp(org.readWriteToken, mcpMessage('tools/call', { name: 'get_task', arguments: { id: 'task_missing' } }));
    expect(json(called).result.isError).toBe(true);
    expect(limitHeaders(called)).toEqual({ limit: 7, remaining: 5, reset: 60 });
  });
});

describe('plans are data', () => {
  it('a plan change takes effect on the next request: limits, features and /v1/me', async () => {
    at('2031-01-19T10:00:00Z');
    const small = await testPlan({ rest: 2 });
    const large = await testPlan({ rest: 100, features: ['work_logs'] });
    const org = await h.createOrganization({ plan: small });
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(200);
    expect((await h.request({ method: 'GET', url: '/api/v1/work-logs', token: org.readWriteToken })).statusCode).toBe(403);
    expect((await getTasks(org.readWriteToken)).statusCode).toBe(429);

    await updateOrganization(h.db, org.organization.slug, { plan: large });
    const after = await getTasks(org.readWriteToken);
    expect(after.statusCode).toBe(200);
    expect(limitHeaders(after)).toMatchObject({ limit: 100, remaining: 96 });
    expect((await h.request({ method: 'GET', url: '/api/v1/work-logs', token: org.readWriteToken })).statusCode).toBe(200);
    const me = json(await h.request({ method: 'GET', url: '/api/v1/me', token: org.readWriteToken })).data;
    expect(me.plan).toMatchObject({ name: large, rest_per_minute: 100, features: ['work_logs'] });
  });

  it('an organization cannot be put on a plan that does not exist', async () => {
    const org = await h.createOrganization();
    await expect(updateOrganization(h.db, org.organization.slug, { plan: 'platinum' })).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/free, .*pro.*business/),
    });
  });
});

describe('the pending-review cap', () => {
  const write = (org: TestOrganization, title: string) =>
    h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });

  it('past the cap, a write that would be held is refused with 429 review_queue_full and recorded; others still run', async () => {
    at('2031-01-20T10:00:00Z');
    const org = await organizationOn({ cap: 2 });
    expect((await write(org, 'review one')).statusCode).toBe(202);
    expect((await write(org, 'review two')).statusCode).toBe(202);
    const refused = await write(org, 'review three');
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error).toMatchObject({
      code: 'review_queue_full',
      message: expect.stringMatching(/review queue is full: 2 writes already wait.*cap is 2/),
      details: { decision_id: expect.any(String), policy_ids: expect.any(Array) },
    });
    expect(limitHeaders(refused).limit).toBe(1000);
    const { rows } = await h.db.query(
      `SELECT d.decision, r.id AS review_id FROM gate_decisions d LEFT JOIN reviews r ON r.decision_id = d.id WHERE d.id = $1`,
      [json(refused).error.details.decision_id],
    );
    expect(rows).toEqual([{ decision: 'refused', review_id: null }]);
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review three'`, [org.organization.id])).rowCount).toBe(0);

    // Writes the policy allows are not held, so the cap does not touch them.
    expect((await write(org, 'an ordinary task')).statusCode).toBe(201);
    // Over MCP, the agent reads the same refusal.
    const mcp = json(await postMcp(org.readWriteToken, mcpMessage('tools/call', { name: 'create_task', arguments: { title: 'review four' } })));
    expect(mcp.result.isError).toBe(true);
    expect(mcp.result.content[0].text).toMatch(/^Error review_queue_full: The review queue is full/);

    // Once a reviewer decides one, there is room again.
    const pending = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: org.reviewerToken })).data;
    const denied = await h.request({ method: 'POST', url: `/api/v1/reviews/${pending[0].id}/deny`, token: org.reviewerToken, payload: {} });
    expect(denied.statusCode).toBe(200);
    expect((await write(org, 'review five')).statusCode).toBe(202);
  });

  it('writes held at once cannot overfill the queue', async () => {
    at('2031-01-20T11:00:00Z');
    const org = await organizationOn({ cap: 3 });
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => write(org, `review burst ${i}`)));
    expect(statuses(burst)).toEqual({ 202: 3, 429: 5 });
    expect(burst.filter((r) => r.statusCode === 429).map((r) => json(r).error.code)).toEqual(Array(5).fill('review_queue_full'));
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM reviews WHERE org_id = $1 AND status = 'pending'`, [org.organization.id]);
    expect(rows[0].n).toBe(3);
  });
});
