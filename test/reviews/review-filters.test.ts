import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { insertHeldReviews } from '../support/review-fixtures';

// The queue's filters (age, deadline, key, operation) on reviews.list, and the console's exact count and filter
// choices: the same filters, one organization's reviews only, bad values a 422. The rows are written straight to
// the database (a queue at its cap in a second); deciding real held writes is test/console/console-review-keyboard.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let session: ConsoleSession;
let agent: string;
let helper: string;
const hour = 3_600_000;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  const keys = (await h.db.query('SELECT id, label FROM api_keys WHERE org_id = $1', [acme.organization.id])).rows as { id: string; label: string }[];
  agent = keys.find((key) => key.label === 'test agent')!.id;
  helper = keys.find((key) => key.label === 'test reader')!.id;
  await insertHeldReviews(h.db, acme.organization.id, { apiKeyId: agent, count: 3, heldAgoMs: 2 * 24 * hour });
  await insertHeldReviews(h.db, acme.organization.id, { apiKeyId: agent, count: 2, operation: 'tasks.update', heldAgoMs: 3 * hour, expiresInMs: hour / 2 });
  await insertHeldReviews(h.db, acme.organization.id, { apiKeyId: helper, count: 4, operation: 'projects.create', expiresInMs: 20 * hour });
  await insertHeldReviews(h.db, acme.organization.id, { apiKeyId: helper, count: 5, status: 'denied', heldAgoMs: 10 * 24 * hour });
  await insertHeldReviews(h.db, acme.organization.id, { apiKeyId: agent, count: 1, expiresInMs: -hour });
  const globexKey = (await h.db.query("SELECT id FROM api_keys WHERE org_id = $1 AND label = 'test agent'", [globex.organization.id])).rows[0].id as string;
  await insertHeldReviews(h.db, globex.organization.id, { apiKeyId: globexKey, count: 7, operation: 'customers.delete' });
  session = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'reviewer'));
});

afterAll(async () => {
  await h?.close();
});

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
const query = (filters: Record<string, string>) => new URLSearchParams(filters).toString();

async function listed(filters: Record<string, string>): Promise<number> {
  const response = await h.request({ method: 'GET', url: `/api/v1/reviews?${query({ limit: '200', ...filters })}`, token: acme.reviewerToken });
  expect(response.statusCode).toBe(200);
  return json(response).data.length;
}

async function counted(filters: Record<string, string>, as = session): Promise<number> {
  const response = await as.request({ method: 'GET', url: `/console/api/v1/reviews/count?${query(filters)}` });
  expect(response.statusCode).toBe(200);
  return json(response).data.count;
}

describe('the review queue’s filters and count', () => {
  it.each([
    ['every pending review', { status: 'pending' }, 9],
    ['held more than a day ago', { status: 'pending', held_before: ago(24 * hour) }, 3],
    ['held more than an hour ago', { status: 'pending', held_before: ago(hour) }, 5],
    ['expiring within the hour', { status: 'pending', expires_before: ahead(hour) }, 2],
    ['expiring within a day', { status: 'pending', expires_before: ahead(24 * hour) }, 6],
    ['one operation', { status: 'pending', operation: 'projects.create' }, 4],
    ['one key', { status: 'pending', api_key_id: 'KEY:helper' }, 4],
    ['one key’s denied writes', { status: 'denied', api_key_id: 'KEY:helper' }, 5],
    ['expired (a deadline past, before the workflow records it)', { status: 'expired' }, 1],
    ['any status', {}, 15],
    ['an offset other than Z', { status: 'pending', held_before: ago(hour).replace('Z', '+00:00') }, 5],
  ])('%s: the list and the count agree', async (_, given, expected) => {
    const filters = Object.fromEntries(Object.entries(given).map(([name, value]) => [name, value === 'KEY:helper' ? helper : value]));
    expect(await listed(filters)).toBe(expected);
    expect(await counted(filters)).toBe(expected);
  });

  it('pages the list with the same filters: every review once, in order', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await h.request({ method: 'GET', url: `/api/v1/reviews?${query({ status: 'pending', limit: '4', ...(cursor ? { cursor } : {}) })}`, token: acme.reviewerToken });
      const body = json(response);
      seen.push(...body.data.map((review: { id: string }) => review.id));
      cursor = body.page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(9);
    expect([...seen].sort().reverse()).toEqual(seen);
  });

  it('refuses a time that is not RFC 3339, an unknown status or filter, with 422 in the envelope', async () => {
    for (const bad of ['held_before=yesterday', 'expires_before=2026-13-45T00:00:00Z', 'held_before=2026-03-02', 'status=waiting', 'older_than=1h']) {
      const listing = await h.request({ method: 'GET', url: `/api/v1/reviews?${bad}`, token: acme.reviewerToken });
      expect(listing.statusCode, bad).toBe(422);
      expect(json(listing)).toMatchObject({ success: false, error: { code: 'validation_failed' } });
      const counting = await session.request({ method: 'GET', url: `/console/api/v1/reviews/count?${bad}` });
      expect(counting.statusCode, bad).toBe(422);
      expect(json(counting)).toMatchObject({ success: false, error: { code: 'validation_failed' } });
    }
    const named = json(await h.request({ method: 'GET', url: '/api/v1/reviews?held_before=yesterday', token: acme.reviewerToken }));
    expect(named.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['held_before']);
  });

  it('offers every key and operation with a review, with how many wait; another organization’s are neither counted nor offered', async () => {
    // A decision that opened no review (an Allow) offers nothing: the choices come from the decisions that held a write.
    await h.db.query(
      `INSERT INTO gate_decisions (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_version, input, resource, context)
       VALUES ('dec_allowedonly0000000000000000', $1, 'allowed-only', 'customers.update', 'rest', $2, 'allow', 'Ordinary', '{}', 1, '{}', '{}', '{}')`,
      [acme.organization.id, agent],
    );
    const choices = json(await session.request({ method: 'GET', url: '/console/api/v1/reviews/filter-choices' })).data;
    expect(choices).toEqual({
      keys: [
        { api_key_id: agent, label: 'test agent', pending: 5 },
        { api_key_id: helper, label: 'test reader', pending: 4 },
      ],
      operations: [
        { operation: 'projects.create', pending: 4 },
        { operation: 'tasks.create', pending: 3 },
        { operation: 'tasks.update', pending: 2 },
      ],
    });
    expect(await counted({ operation: 'customers.delete' })).toBe(0);
    const theirs = await signIn(h.app, globex.organization, await addPerson(h.db, globex.organization, 'member'));
    expect(await counted({ status: 'pending' }, theirs)).toBe(7);
    expect(await counted({ api_key_id: agent }, theirs)).toBe(0);
  });

  it('the count and the choices are the console’s, not the API’s', async () => {
    for (const url of ['/api/v1/reviews/count', '/api/v1/reviews/filter-choices']) {
      const response = await h.request({ method: 'GET', url, token: acme.reviewerToken });
      expect(response.statusCode, url).not.toBe(200);
    }
  });
});
