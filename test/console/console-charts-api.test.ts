import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseToken } from '../../domain/identity/tokens';
import { recordCall } from '../../domain/usage/call-log';
import { newId } from '../../domain/kit/ids';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The figures behind the console's charts, over the console's API against the real service: agents.activity (the
// agents' calls by the hour or the day, by how they ended) and policy.rule_counts (how often each rule decided).
// Each counts a known sequence of calls and writes exactly, fills quiet hours and days with zeros, refuses a bad
// range with a 422, and never counts another organization's calls or decisions.

let h: Harness;
let acme: TestOrganization;
let other: TestOrganization;
let owner: ConsoleSession;
let otherOwner: ConsoleSession;

beforeAll(async () => {
  h = await startHarness();
  // Far east of UTC, so that its day begins at another instant than UTC's.
  acme = await h.createOrganization({ name: 'Acme Inc.', timezone: 'Pacific/Kiritimati' });
  other = await h.createOrganization({ name: 'Other Ltd.' });
  owner = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'owner'));
  otherOwner = await signIn(h.app, other.organization, await addPerson(h.db, other.organization, 'owner'));
});
afterAll(() => h?.close());

const keyIdOf = (token: string) => parseToken(token)!.id;
const outcomes = ['ok', 'applied', 'held', 'denied', 'refused', 'error'] as const;
type Bucket = { start: string; calls: number } & Record<(typeof outcomes)[number], number>;

async function activity(session: ConsoleSession, query: string): Promise<{ range: string; bucket: string; timezone: string; buckets: Bucket[] }> {
  const answer = await session.request({ method: 'GET', url: `/console/api/v1/agents/activity?${query}` });
  expect(answer.statusCode, answer.body).toBe(200);
  return json(answer).data;
}

/** Every outcome's count over all the buckets. */
const totalsOf = (buckets: Bucket[]) => Object.fromEntries(['calls', ...outcomes].map((name) => [name, buckets.reduce((sum, bucket) => sum + bucket[name as 'calls'], 0)]));

/** Waits for the call log to hold the key's `count` rows (it is written off the request path). */
async function callsLogged(keyId: string, count: number) {
  await expect
    .poll(async () => (await h.db.query('SELECT count(*)::int AS n FROM call_log WHERE api_key_id = $1', [keyId])).rows[0].n, { timeout: 5_000 })
    .toBe(count);
}

describe('agents.activity', () => {
  it("counts a key's known calls by how they ended, in 24 zero-filled hours and 7 days of the organization's time zone", async () => {
    const token = await acme.keyWith(['tasks.read', 'tasks.write']);
    const keyId = keyIdOf(token);
    const call = (method: 'GET' | 'POST', url: string, payload?: object) => h.request({ method, url, token, payload });
    expect((await call('GET', '/api/v1/tasks')).statusCode).toBe(200);
    expect((await call('GET', '/api/v1/tasks')).statusCode).toBe(200);
    expect((await call('POST', '/api/v1/tasks', { title: 'plain write' })).statusCode).toBe(201);
    expect((await call('POST', '/api/v1/tasks', { title: 'review this write' })).statusCode).toBe(202);
    expect((await call('POST', '/api/v1/tasks', { title: 'deny this write' })).statusCode).toBe(403);
    expect((await call('GET', `/api/v1/tasks/task_${'0'.repeat(26)}`)).statusCode).toBe(404);
    await callsLogged(keyId, 6);
    // Two of the key's calls from earlier, written as the log writes them: 3 hours ago (an error) and 3 days ago.
    const hoursAgo = new Date(Date.now() - 3 * 3600_000);
    const daysAgo = new Date(Date.now() - 3 * 24 * 3600_000);
    const earlier = { orgId: acme.organization.id, apiKeyId: keyId, userId: null, interface: 'rest' as const, tool: null, latencyMs: 5 };
    await recordCall(h.db, { ...earlier, operation: 'tasks.list', status: 500, outcome: 'internal' }, { id: newId('call'), at: hoursAgo });
    await recordCall(h.db, { ...earlier, operation: 'tasks.list', status: 200, outcome: 'ok' }, { id: newId('call'), at: daysAgo });

    const day = await activity(owner, `range=24h&api_key_id=${keyId}`);
    expect(day).toMatchObject({ range: '24h', bucket: 'hour', timezone: 'Pacific/Kiritimati' });
    expect(day.buckets).toHaveLength(24);
    const starts = day.buckets.map((bucket) => Date.parse(bucket.start));
    expect(starts.every((start, index) => index === 0 || start - starts[index - 1]! === 3600_000)).toBe(true);
    expect(starts.at(-1)).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - starts.at(-1)!).toBeLessThan(3600_000);
    expect(totalsOf(day.buckets)).toEqual({ calls: 7, ok: 2, applied: 1, held: 1, denied: 1, refused: 1, error: 1 });
    // The error lies in the hour that holds three hours ago; every other bucket but the current one is zero.
    const errorBucket = day.buckets.find((bucket) => bucket.error === 1)!;
    expect(Date.parse(errorBucket.start)).toBeLessThanOrEqual(hoursAgo.getTime());
    expect(Date.parse(errorBucket.start) + 3600_000).toBeGreaterThan(hoursAgo.getTime());
    expect(day.buckets.filter((bucket) => bucket.calls > 0).length).toBeLessThanOrEqual(3);

    const week = await activity(owner, `range=7d&api_key_id=${keyId}`);
    expect(week).toMatchObject({ range: '7d', bucket: 'day' });
    expect(week.buckets).toHaveLength(7);
    expect(totalsOf(week.buckets)).toEqual({ calls: 8, ok: 3, applied: 1, held: 1, denied: 1, refused: 1, error: 1 });
    // Days begin at midnight in Kiritimati (UTC+14): 10:00 UTC the day before.
    for (const bucket of week.buckets) expect(bucket.start).toMatch(/T10:00:00\.000Z$/);
    const today = week.buckets.at(-1)!;
    expect(Date.parse(today.start)).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - Date.parse(today.start)).toBeLessThan(24 * 3600_000);
    expect(week.buckets.find((bucket) => Date.parse(bucket.start) <= daysAgo.getTime() && daysAgo.getTime() < Date.parse(bucket.start) + 24 * 3600_000)!.ok).toBeGreaterThanOrEqual(1);

    // Every key's: at least this key's calls (the organization's other keys may have called too).
    const everyKey = totalsOf((await activity(owner, 'range=7d')).buckets);
    for (const [name, count] of Object.entries(totalsOf(week.buckets))) expect(everyKey[name]).toBeGreaterThanOrEqual(count);
    // The default range is 24 hours.
    expect((await activity(owner, `api_key_id=${keyId}`)).buckets).toHaveLength(24);
  });

  it('refuses a bad range or key id with a 422 in the envelope', async () => {
    for (const query of ['range=30d', 'range=', 'range=24h&range=7d', `api_key_id=${'k'.repeat(101)}`, 'since=1h']) {
      const answer = await owner.request({ method: 'GET', url: `/console/api/v1/agents/activity?${query}` });
      expect(answer.statusCode, query).toBe(422);
      expect(json(answer).error.code).toBe('validation_failed');
    }
  });

  it("never counts another organization's calls, even asked for its key", async () => {
    const before = totalsOf((await activity(owner, 'range=7d')).buckets);
    const theirs = keyIdOf(other.readWriteToken);
    for (let index = 0; index < 3; index++) expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token: other.readWriteToken })).statusCode).toBe(200);
    await callsLogged(theirs, 3);
    expect(totalsOf((await activity(owner, 'range=7d')).buckets)).toEqual(before);
    // Asked for their key: the same answer as for a key never issued, a 404.
    const asked = await owner.request({ method: 'GET', url: `/console/api/v1/agents/activity?range=7d&api_key_id=${theirs}` });
    const never = await owner.request({ method: 'GET', url: `/console/api/v1/agents/activity?range=7d&api_key_id=key_${'0'.repeat(26)}` });
    expect([asked.statusCode, never.statusCode]).toEqual([404, 404]);
    expect(json(asked).error.code).toBe('not_found');
    expect(json(asked).error.message).not.toContain(other.organization.id);
    // Their owner sees their own three.
    expect(totalsOf((await activity(otherOwner, `range=24h&api_key_id=${theirs}`)).buckets).ok).toBe(3);
  });
});

describe('policy.rule_counts', () => {
  const ruleCounts = async (session: ConsoleSession, query = '') => {
    const answer = await session.request({ method: 'GET', url: `/console/api/v1/policy/rule-counts${query}` });
    expect(answer.statusCode, answer.body).toBe(200);
    return json(answer).data as { since: string; decisions: number; rules: { policy_id: string | null; allow: number; review: number; deny: number; total: number }[] };
  };

  it('counts each rule’s decisions of a known sequence of writes, over the period asked, most first', async () => {
    const fresh = await h.createOrganization({ name: 'Rules Inc.' });
    const session = await signIn(h.app, fresh.organization, await addPerson(h.db, fresh.organization, 'reviewer'));
    expect(await ruleCounts(session)).toMatchObject({ decisions: 0, rules: [] });
    const write = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: fresh.readWriteToken, payload: { title } });
    const statuses = [];
    for (const title of ['plain one', 'plain two', 'plain three', 'review one', 'review two', 'deny one']) statuses.push((await write(title)).statusCode);
    expect(statuses).toEqual([201, 201, 201, 202, 202, 403]);

    const week = await ruleCounts(session, '?range=7d');
    expect(week.decisions).toBe(6);
    expect(week.rules).toEqual([
      { policy_id: 'allow-writes', allow: 3, review: 0, deny: 0, total: 3 },
      { policy_id: 'review-when-asked', allow: 0, review: 2, deny: 0, total: 2 },
      { policy_id: 'deny-when-asked', allow: 0, review: 0, deny: 1, total: 1 },
    ]);
    expect(Date.now() - Date.parse(week.since)).toBeGreaterThanOrEqual(7 * 24 * 3600_000);
    expect(await ruleCounts(session)).toMatchObject({ decisions: 6 });

    // A decision of ten days ago counts over 30 days, not over 7.
    await h.db.query(
      `UPDATE gate_decisions SET created_at = now() - interval '10 days'
       WHERE id = (SELECT id FROM gate_decisions WHERE org_id = $1 AND decision = 'deny')`,
      [fresh.organization.id],
    );
    expect((await ruleCounts(session, '?range=7d')).rules.map((rule) => rule.policy_id)).toEqual(['allow-writes', 'review-when-asked']);
    expect((await ruleCounts(session, '?range=30d')).decisions).toBe(6);
    expect((await ruleCounts(session, '?range=24h')).decisions).toBe(5);

    // Another organization's decisions are never counted, nor these in theirs.
    const theirs = await ruleCounts(otherOwner, '?range=30d');
    for (const title of ['plain elsewhere', 'review elsewhere']) await h.request({ method: 'POST', url: '/api/v1/tasks', token: other.readWriteToken, payload: { title } });
    expect((await ruleCounts(session, '?range=30d')).decisions).toBe(6);
    expect((await ruleCounts(otherOwner, '?range=30d')).decisions).toBe(theirs.decisions + 2);
  });

  it('refuses a bad range with a 422, and a member with a 403', async () => {
    for (const query of ['?range=1y', '?range=', '?days=7']) {
      const answer = await owner.request({ method: 'GET', url: `/console/api/v1/policy/rule-counts${query}` });
      expect(answer.statusCode, query).toBe(422);
      expect(json(answer).error.code).toBe('validation_failed');
    }
    const member = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'member'));
    expect((await member.request({ method: 'GET', url: '/console/api/v1/policy/rule-counts' })).statusCode).toBe(403);
  });
});
