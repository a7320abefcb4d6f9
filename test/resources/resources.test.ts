import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPolicySource } from '../../domain/policy-sets/versions';
import { newId } from '../../domain/kit/ids';
import { insertFixtures, type Fixtures } from '../support/fixtures';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;
let fx: Fixtures;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization({ policy: '@id("allow") permit (principal, action, resource);' });
  fx = await insertFixtures(h.db, org.organization.id);
});
afterAll(() => h?.close());

const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) =>
  h.request({ method, url: `/api/v1${url}`, token: org.readWriteToken, payload, headers });

describe('If-Match', () => {
  it('an update based on a stale read is refused with 409; one based on the current read goes through', async () => {
    const read = await req('GET', `/tasks/${fx.task}`);
    const etag = read.headers.etag as string;
    expect(etag).toBe(`"${json(read).data.version}"`);

    const first = await req('PATCH', `/tasks/${fx.task}`, { status: 'in_progress' }, { 'if-match': etag });
    expect(first.statusCode).toBe(200);
    expect(json(first).data).toMatchObject({ status: 'in_progress', version: json(read).data.version + 1 });
    expect(first.headers.etag).toBe(`"${json(first).data.version}"`);

    const stale = await req('PATCH', `/tasks/${fx.task}`, { status: 'done' }, { 'if-match': etag });
    expect(stale.statusCode).toBe(409);
    expect(json(stale).error).toMatchObject({ code: 'conflict', details: { current_version: json(first).data.version } });
    expect(json(await req('GET', `/tasks/${fx.task}`)).data.status).toBe('in_progress');

    const bad = await req('PATCH', `/tasks/${fx.task}`, { status: 'done' }, { 'if-match': 'yesterday' });
    expect(bad.statusCode).toBe(422);
  });

  it('sends before and changes to the policy', async () => {
    const guarded = await h.createOrganization({
      policy: `@id("allow") permit (principal, action, resource);
        @id("no-reopen") @reason("Done tasks stay done")
        forbid (principal, action == Action::"tasks.update", resource)
        when { context has before && context.before.status == "done" && context.changes has status };`,
    });
    const gfx = await insertFixtures(h.db, guarded.organization.id);
    const patch = (body: object) => h.request({ method: 'PATCH', url: `/api/v1/tasks/${gfx.task}`, token: guarded.readWriteToken, payload: body });
    expect((await patch({ status: 'done' })).statusCode).toBe(200);
    const reopen = await patch({ status: 'todo' });
    expect(reopen.statusCode).toBe(403);
    expect(json(reopen).error.details.reason).toBe('Done tasks stay done');
    expect((await patch({ title: 'Renamed, still done' })).statusCode).toBe(200);
  });
});

describe('references stay inside the organization', () => {
  it("a task cannot point at another organization's project or team member", async () => {
    const other = await h.createOrganization();
    const otherFx = await insertFixtures(h.db, other.organization.id);
    const response = await req('POST', '/tasks', { title: 'Sneaky', project_id: otherFx.project, assignee_id: otherFx.member });
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['assignee_id', 'project_id']);
  });
});

describe('customers', () => {
  it('updated_since never misses a change made while a client syncs', async () => {
    const customers: string[] = [];
    for (let i = 0; i < 30; i++) {
      const created = await req('POST', '/customers', { name: `Sync customer ${i}` });
      customers.push(json(created).data.id);
    }
    const since = new Date(Date.now() - 60_000).toISOString();
    const replica = new Map<string, number>();
    let cursorTime = since;

    async function syncOnce(): Promise<number> {
      let cursor: string | null = null;
      let seen = 0;
      do {
        const query: URLSearchParams = new URLSearchParams({ updated_since: cursorTime, limit: '7', ...(cursor ? { cursor } : {}) });
        const page: any = json(await req('GET', `/customers?${query}`));
        for (const customer of page.data) {
          replica.set(customer.id, customer.version);
          cursorTime = customer.updated_at;
          seen++;
        }
        cursor = page.page.next_cursor;
      } while (cursor);
      return seen;
    }

    // Writers change customers while the reader pages through them.
    const writers = (async () => {
      for (let round = 0; round < 3; round++) {
        await Promise.all(customers.slice(round * 5, round * 5 + 10).map((id, i) => req('PATCH', `/customers/${id}`, { notes: `round ${round} ${i}` })));
      }
    })();
    while ((await Promise.race([writers.then(() => 'done'), syncOnce().then(() => 'synced')])) !== 'done') {
      // keep syncing while writers run
    }
    await writers;
    await syncOnce();

    const { rows } = await h.db.query('SELECT id, version FROM customers WHERE org_id = $1 AND updated_at >= $2', [org.organization.id, since]);
    for (const row of rows) expect(replica.get(row.id), `customer ${row.id}`).toBe(row.version);
  });

  it('search matches name, company and email; tags filter on all tags given', async () => {
    await req('POST', '/customers', { name: 'Zelda Quartermaine', company: 'Hyrule Trading', email: 'zq@hyrule.example', tags: ['vip', 'wholesale'] });
    for (const term of ['zelda', 'HYRULE', 'zq@hyr']) {
      const found = json(await req('GET', `/customers?search=${encodeURIComponent(term)}`)).data;
      expect(found.map((c: { name: string }) => c.name)).toContain('Zelda Quartermaine');
    }
    const both = json(await req('GET', '/customers?tags=vip,wholesale')).data;
    expect(both.map((c: { name: string }) => c.name)).toEqual(['Zelda Quartermaine']);
    const percent = json(await req('GET', `/customers?search=${encodeURIComponent('%')}`)).data;
    expect(percent).toEqual([]);
  });

  it('pagination walks a large list without gaps or duplicates', async () => {
    const paged = await h.createOrganization();
    const values = Array.from({ length: 230 }, (_, i) => `('${newId('cus')}', '${paged.organization.id}', 'Bulk ${i}')`).join(',');
    await h.db.query(`INSERT INTO customers (id, org_id, name) VALUES ${values}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = json(await h.request({ method: 'GET', url: `/api/v1/customers?limit=50${cursor ? `&cursor=${cursor}` : ''}`, token: paged.readOnlyToken }));
      seen.push(...page.data.map((c: { id: string }) => c.id));
      cursor = page.page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(230);
    expect(new Set(seen).size).toBe(230);
  });
});

describe('meeting ingests', () => {
  const ingest = (tasks: object[]) => ({ title: 'Planning', occurred_at: new Date().toISOString(), participants: ['Ada', 'Grace'], transcript: 'Ada: do X. Grace: do Y.', tasks });

  it('creates the ingest and all its tasks together, readable with the tasks it created', async () => {
    const created = await req('POST', '/meeting-ingests', ingest([{ title: 'Do X', assignee_id: fx.member }, { title: 'Do Y', priority: 'high' }]));
    expect(created.statusCode).toBe(201);
    const data = json(created).data;
    expect(data.tasks.map((t: { title: string }) => t.title)).toEqual(['Do X', 'Do Y']);
    expect(data.tasks.every((t: { meeting_ingest_id: string }) => t.meeting_ingest_id === data.id)).toBe(true);
    const read = json(await req('GET', `/meeting-ingests/${data.id}`)).data;
    expect(read.tasks).toHaveLength(2);
  });

  it('creates nothing when one task is refused (a bad reference)', async () => {
    const before = (await h.db.query('SELECT (SELECT count(*) FROM tasks WHERE org_id = $1)::int AS t, (SELECT count(*) FROM meeting_ingests WHERE org_id = $1)::int AS m', [org.organization.id])).rows[0];
    const response = await req('POST', '/meeting-ingests', ingest([{ title: 'Fine' }, { title: 'Broken', assignee_id: 'mem_nobody' }]));
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields[0].field).toBe('tasks.1.assignee_id');
    const after = (await h.db.query('SELECT (SELECT count(*) FROM tasks WHERE org_id = $1)::int AS t, (SELECT count(*) FROM meeting_ingests WHERE org_id = $1)::int AS m', [org.organization.id])).rows[0];
    expect(after).toEqual(before);
  });

  it('a reviewer sees the whole batch; more than 20 tasks are held by the default policy', async () => {
    const defaults = await h.createOrganization({ policy: defaultPolicySource });
    const tasks = Array.from({ length: 21 }, (_, i) => ({ title: `Item ${i}` }));
    const held = await h.request({ method: 'POST', url: '/api/v1/meeting-ingests', token: defaults.readWriteToken, payload: ingest(tasks) });
    expect(held.statusCode).toBe(202);
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${json(held).review.id}`, token: defaults.reviewerToken })).data;
    expect(review.resource).toMatchObject({ task_count: 21, title: 'Planning' });
    expect(review.proposed.tasks).toHaveLength(21);
    const approved = json(await h.request({ method: 'POST', url: `/api/v1/reviews/${review.id}/approve`, token: defaults.reviewerToken })).data;
    expect(approved.result.tasks).toHaveLength(21);
  });
});

describe('calendar', () => {
  it('the feed merges events, bookings and task due dates, each saying where it comes from', async () => {
    const feed = json(await req('GET', '/calendar')).data;
    const sources = new Map(feed.map((item: { id: string; source: string }) => [item.id, item.source]));
    expect(sources.get(fx.event)).toBe('event');
    expect(sources.get(fx.booking)).toBe('booking');
    expect(sources.get(fx.task)).toBe('task_due');
    const starts = feed.map((item: { starts_at: string }) => item.starts_at);
    expect([...starts].sort()).toEqual(starts);
  });

  it("task due dates fall at midnight in the organization's time zone", async () => {
    const berlin = await h.createOrganization({ timezone: 'Europe/Berlin' });
    await h.db.query(`INSERT INTO tasks (id, org_id, title, status, priority, due_on) VALUES ($1, $2, 'Due in Berlin', 'todo', 'normal', '2027-07-01')`, [newId('task'), berlin.organization.id]);
    const feed = json(await h.request({ method: 'GET', url: '/api/v1/calendar?from=2027-06-30T00:00:00Z&to=2027-07-03T00:00:00Z', token: berlin.readOnlyToken })).data;
    expect(feed[0]).toMatchObject({ source: 'task_due', all_day: true, starts_at: '2027-06-30T22:00:00.000Z', ends_at: '2027-07-01T22:00:00.000Z' });
  });

  it('a double-booking is visible to the policy and, by default, held for review', async () => {
    const defaults = await h.createOrganization({ policy: defaultPolicySource });
    const dfx = await insertFixtures(h.db, defaults.organization.id);
    const event = json(await h.request({ method: 'GET', url: `/api/v1/calendar/events/${dfx.event}`, token: defaults.readOnlyToken })).data;
    const book = (startsAt: string, endsAt: string) =>
      h.request({ method: 'POST', url: '/api/v1/calendar/events', token: defaults.readWriteToken, payload: { title: 'Clash?', starts_at: startsAt, ends_at: endsAt, attendee_ids: [dfx.member] } });
    const clash = await book(event.starts_at, event.ends_at);
    expect(clash.statusCode).toBe(202);
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${json(clash).review.id}`, token: defaults.reviewerToken })).data;
    expect(review.policy.policy_ids).toEqual(['review-double-bookings']);
    const free = new Date(Date.parse(event.ends_at) + 3_600_000);
    expect((await book(free.toISOString(), new Date(free.getTime() + 3_600_000).toISOString())).statusCode).toBe(201);
  });

  it('refuses an event that ends before it starts', async () => {
    const response = await req('POST', '/calendar/events', { title: 'Backwards', starts_at: '2027-01-01T10:00:00Z', ends_at: '2027-01-01T09:00:00Z' });
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields[0].field).toBe('ends_at');
    const moved = await req('PATCH', `/calendar/events/${fx.event}`, { ends_at: '2000-01-01T00:00:00Z' });
    expect(moved.statusCode).toBe(422);
  });
});

describe('edges', () => {
  it('an incremental sync over imported customers (many in one millisecond) ends, with every customer once', async () => {
    const { seedOrganization } = await import('../../data-import/seed');
    const seeded = await h.createOrganization();
    await seedOrganization(h.db, seeded.organization, { size: 'small' });
    const total = (await h.db.query('SELECT count(*)::int AS n FROM customers WHERE org_id = $1', [seeded.organization.id])).rows[0].n;
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: URLSearchParams = new URLSearchParams({ updated_since: '2000-01-01T00:00:00Z', limit: '7', ...(cursor ? { cursor } : {}) });
      const page: any = json(await h.request({ method: 'GET', url: `/api/v1/customers?${query}`, token: seeded.readOnlyToken }));
      seen.push(...page.data.map((c: { id: string }) => c.id));
      cursor = page.page.next_cursor;
      expect(++pages).toBeLessThan(100);
    } while (cursor);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  it.each([
    ['/tasks/%00', 'a NUL in an id'],
    ['/customers?tags=a%00', 'a NUL in a filter'],
    ['/expenses?category=%00', 'a NUL in a category'],
    ['/calendar?attendee_id=%00', 'a NUL in an attendee'],
  ])('GET %s (%s) is a 422, never a 500', async (url) => {
    const response = await req('GET', url);
    expect(response.statusCode).toBe(422);
  });

  it('instants with any RFC 3339 offset are read as the UTC instant they name', async () => {
    const response = await req('GET', '/bookings?to=2030-01-01T00:00:00%2B16:00');
    expect(response.statusCode).toBe(200);
    const booked = await req('POST', '/calendar/events', { title: 'Far east', starts_at: '2030-01-01T09:00:00+14:00', ends_at: '2030-01-01T10:00:00+14:00' });
    expect(booked.statusCode).toBe(201);
    expect(json(booked).data.starts_at).toBe('2029-12-31T19:00:00.000Z');
  });

  it('a meeting ingest needs tasks.write as well, since it creates tasks', async () => {
    const ingestOnly = await org.keyWith(['meeting_ingests.write', 'meeting_ingests.read']);
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/meeting-ingests',
      token: ingestOnly,
      payload: { title: 'x', occurred_at: new Date().toISOString(), transcript: 'x', tasks: [{ title: 'urgent thing', priority: 'urgent' }] },
    });
    expect(response.statusCode).toBe(403);
    expect(json(response).error.details.required).toBe('tasks.write');
  });

  it('deleting a record others still refer to is refused before the policy runs', async () => {
    const before = (await h.db.query('SELECT count(*)::int AS n FROM gate_decisions WHERE org_id = $1', [org.organization.id])).rows[0].n;
    const response = await req('DELETE', `/projects/${fx.project}`);
    expect(response.statusCode).toBe(409);
    expect(json(response).error.details).toMatchObject({ referred_by: 'tasks' });
    const after = (await h.db.query('SELECT count(*)::int AS n FROM gate_decisions WHERE org_id = $1', [org.organization.id])).rows[0].n;
    expect(after).toBe(before);
  });

  it('a PATCH that changes nothing writes nothing', async () => {
    const read = json(await req('GET', `/customers/${fx.customer}`)).data;
    const same = await req('PATCH', `/customers/${fx.customer}`, { name: read.name });
    expect(same.statusCode).toBe(200);
    expect(json(same).data.version).toBe(read.version);
    expect(json(await req('PATCH', `/customers/${fx.customer}`, {})).data.version).toBe(read.version);
  });

  it('a held update lands only on the version the policy saw: a change in between makes the approval fail, recorded', async () => {
    const held = await h.createOrganization({
      policy: '@id("allow") permit (principal, action, resource); @id("hold-updates") @decision("review") permit (principal, action == Action::"customers.update", resource);',
    });
    const hfx = await insertFixtures(h.db, held.organization.id);
    const pending = json(await h.request({ method: 'PATCH', url: `/api/v1/customers/${hfx.customer}`, token: held.readWriteToken, payload: { notes: 'from the agent' } }));
    await h.db.query(`UPDATE customers SET phone = '+1 555 0100', version = version + 1 WHERE id = $1`, [hfx.customer]);
    const approved = json(await h.request({ method: 'POST', url: `/api/v1/reviews/${pending.review.id}/approve`, token: held.reviewerToken })).data;
    expect(approved).toMatchObject({ status: 'approved', applied_at: null, failure: { code: 'conflict' } });
    const customer = json(await h.request({ method: 'GET', url: `/api/v1/customers/${hfx.customer}`, token: held.readOnlyToken })).data;
    expect(customer).toMatchObject({ notes: null, phone: '+1 555 0100', version: 2 });
  });

  it("no write reaches into another organization through any reference", async () => {
    const other = await h.createOrganization();
    const ofx = await insertFixtures(h.db, other.organization.id);
    const attempts = [
      req('POST', '/projects', { name: 'x', owner_id: ofx.member }),
      req('PATCH', `/projects/${fx.project}`, { owner_id: ofx.member }),
      req('POST', '/calendar/events', { title: 'x', starts_at: '2030-01-01T09:00:00Z', ends_at: '2030-01-01T10:00:00Z', attendee_ids: [ofx.member] }),
      req('POST', '/calendar/events', { title: 'x', starts_at: '2030-01-01T09:00:00Z', ends_at: '2030-01-01T10:00:00Z', customer_id: ofx.customer }),
      req('PATCH', `/tasks/${fx.task}`, { project_id: ofx.project }),
    ];
    for (const response of await Promise.all(attempts)) expect(response.statusCode).toBe(422);
  });

  it('the calendar window defaults to the 30 days before `to` when only `to` is given', async () => {
    expect((await req('GET', '/calendar?to=2020-01-01T00:00:00Z')).statusCode).toBe(200);
  });
});
