import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { cleanEnv, runCli } from '../support/cli';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The audit trail for people: GET /api/v1/audit-events with its filters and pages, and `gatehouse audit export`.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let ownerToken: string;
let globexOwnerToken: string;
let reviewerId: string;
let keyId: string;

interface Event {
  id: string;
  type: string;
  actor: { type: string; id: string | null };
  operation: string | null;
  decision: string | null;
  review_id: string | null;
  created_at: string;
}

async function owner(org: TestOrganization): Promise<string> {
  const person = await createUser(h.db, { orgId: org.organization.id, email: `owner@${org.organization.slug}.test`, role: 'owner' });
  return (await createPersonalToken(h.db, person)).token;
}

async function events(query: string, token = ownerToken): Promise<Event[]> {
  const response = await h.request({ method: 'GET', url: `/api/v1/audit-events${query}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return json(response).data;
}

beforeAll(async () => {
  h = await startHarness();
  [acme, globex] = [await h.createOrganization(), await h.createOrganization()];
  [ownerToken, globexOwnerToken] = [await owner(acme), await owner(globex)];
  const { rows } = await h.db.query<{ id: string }>('SELECT id FROM users WHERE org_id = $1 AND role = $2', [acme.organization.id, 'reviewer']);
  reviewerId = rows[0]!.id;
  keyId = json(await h.request({ method: 'GET', url: '/api/v1/me', token: acme.readWriteToken })).data.token.id;

  const write = (title: string, org = acme) => h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect((await write('an ordinary task')).statusCode).toBe(201);
  expect((await write('deny this one')).statusCode).toBe(403);
  const held = await write('review this one');
  expect(held.statusCode).toBe(202);
  const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${json(held).review.id}/approve`, token: acme.reviewerToken, payload: {} });
  expect(approved.statusCode).toBe(200);
  expect((await write('globex writes too', globex)).statusCode).toBe(201);
});

afterAll(() => h?.close());

describe('GET /api/v1/audit-events', () => {
  it("lists the organization's events, newest first, with the decision and operation of each gated write", async () => {
    const all = await events('?limit=200');
    expect(all.map((event) => event.id)).toEqual([...all.map((event) => event.id)].sort().reverse());
    const decisions = all.filter((event) => event.type === 'gate.decided');
    expect(decisions.map((event) => event.decision).sort()).toEqual(['allow', 'deny', 'review']);
    for (const decision of decisions) {
      expect(decision).toMatchObject({ operation: 'tasks.create', actor: { type: 'api_key', id: keyId } });
    }
    expect(all.map((event) => event.type)).toEqual(expect.arrayContaining(['write.applied', 'review.approved', 'api_key.created', 'policy.updated']));
  });

  it('filters by decision, operation, key, person, type and time', async () => {
    expect((await events('?decision=deny')).map((event) => event.decision)).toEqual(['deny']);
    const ofTasks = await events('?operation=tasks.create&limit=200');
    expect(ofTasks.length).toBeGreaterThanOrEqual(5);
    expect(ofTasks.every((event) => event.operation === 'tasks.create')).toBe(true);

    const ofKey = await events(`?api_key_id=${keyId}&limit=200`);
    expect(ofKey.filter((event) => event.type === 'gate.decided')).toHaveLength(3);
    expect(ofKey.some((event) => event.type === 'api_key.created')).toBe(true);
    const ofReviewer = await events(`?user_id=${reviewerId}&limit=200`);
    expect(ofReviewer.map((event) => event.type)).toEqual(['review.approved']);
    expect(ofReviewer.find((event) => event.type === 'review.approved')!.actor).toEqual({ type: 'user', id: reviewerId, name: expect.stringMatching(/^reviewer@/) });

    expect((await events('?type=review.approved')).map((event) => event.type)).toEqual(['review.approved']);
    const all = await events('?limit=200');
    const middle = all[Math.floor(all.length / 2)]!.created_at;
    const since = await events(`?since=${encodeURIComponent(middle)}&limit=200`);
    const until = await events(`?until=${encodeURIComponent(middle)}&limit=200`);
    expect(since.length + until.length).toBe(all.length);
    expect(since.every((event) => event.created_at >= middle) && until.every((event) => event.created_at < middle)).toBe(true);
  });

  it('pages with a cursor, each event once', async () => {
    const all = await events('?limit=200');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await h.request({ method: 'GET', url: `/api/v1/audit-events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, token: ownerToken });
      const page = json(response);
      seen.push(...page.data.map((event: Event) => event.id));
      cursor = page.page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((event) => event.id));
  });

  it('refuses bad input in the envelope', async () => {
    for (const query of ['?since=yesterday', '?decision=maybe', '?limit=0', '?cursor=nonsense', '?colour=red']) {
      const response = await h.request({ method: 'GET', url: `/api/v1/audit-events${query}`, token: ownerToken });
      expect(response.statusCode, query).toBe(422);
      expect(json(response).error.code, query).toBe('validation_failed');
    }
  });

  it('is for owners, admins and reviewers: not members or API keys', async () => {
    expect((await events('?limit=1', acme.reviewerToken)).length).toBe(1);
    for (const [token, code] of [
      [acme.memberToken, 'insufficient_role'],
      [acme.readWriteToken, 'person_required'],
    ] as const) {
      const response = await h.request({ method: 'GET', url: '/api/v1/audit-events', token });
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe(code);
    }
  });

  it("never shows another organization's events", async () => {
    const acmeIds = new Set((await events('?limit=200')).map((event) => event.id));
    const theirs = await events('?limit=200', globexOwnerToken);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.some((event) => acmeIds.has(event.id))).toBe(false);
    expect(await events(`?api_key_id=${keyId}`, globexOwnerToken)).toEqual([]);
  });
});

describe('gatehouse audit export', () => {
  const env = () => cleanEnv({ DATABASE_URL: inject('databaseUrl') });

  it('writes every event oldest first, as JSON Lines or CSV', async () => {
    const newestFirst = await events('?limit=200');
    const jsonl = await runCli(['audit', 'export', '--org', acme.organization.slug], env());
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const lines = jsonl.stdout.trim().split('\n').map((line) => JSON.parse(line) as Event & { ledger_head?: unknown });
    // The last line is the ledger's head (test/audit/audit-ledger.test.ts verifies a copy with it).
    expect(lines.pop()).toEqual({ ledger_head: { org_id: acme.organization.id, seq: expect.any(Number), chain: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(lines.map((event) => event.id)).toEqual(newestFirst.map((event) => event.id).reverse());
    // The export is the record of what happened; the API's list adds an applied write's state now (undone_by,
    // undoable_until), which no event of the ledger holds.
    const { undone_by: _undoneBy, undoable_until: _undoableUntil, ...recorded } = newestFirst.at(-1)! as Event & { undone_by?: unknown; undoable_until?: unknown };
    expect(lines[0]).toMatchObject(recorded);
    expect(lines[0]).toHaveProperty('digest');

    const csv = await runCli(['audit', 'export', '--org', acme.organization.slug, '--format', 'csv', '--type', 'gate.decided'], env());
    expect(csv.code, csv.stderr).toBe(0);
    const rows = parseCsv(csv.stdout, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => row.decision)).toEqual(['allow', 'deny', 'review']);
    expect(rows[0]).toMatchObject({ type: 'gate.decided', actor_type: 'api_key', actor_id: keyId, operation: 'tasks.create' });
    expect(JSON.parse(rows[0]!.data!)).toMatchObject({ decision: 'allow', operation: 'tasks.create' });
  });

  it('refuses an instant it cannot read, and an organization that is not there', async () => {
    const badSince = await runCli(['audit', 'export', '--org', acme.organization.slug, '--since', 'last week', '--json'], env());
    expect(badSince.code).toBe(1);
    expect(badSince.json.error.message).toContain('--since');
    const nowhere = await runCli(['audit', 'export', '--org', 'no-such-org', '--json'], env());
    expect(nowhere.code).toBe(1);
    expect(nowhere.json.error.code).toBe('not_found');
  });
});
