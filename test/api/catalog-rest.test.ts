import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { catalog as wholeCatalog } from '../../api/catalog';
import { isOfferedOn, type Operation } from '../../api/catalog/operation';
import { newId } from '../../domain/kit/ids';
import { insertAppliedWrite, insertFixtures, insertWebhookDelivery, insertWebhookEndpoint, type Fixtures } from '../support/fixtures';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

/** What REST offers (the console's own operations are tested in console-api.test.ts). */
const catalog = wholeCatalog.filter((operation) => isOfferedOn(operation, 'rest'));

// Table-driven over the whole catalog: each operation, on both route shapes, answers as its schema says,
// goes through the gate if it writes, and refuses what it must.

interface Sample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}
interface Site {
  org: TestOrganization;
  fx: Fixtures;
  make: Makers;
}
interface Makers {
  task(): Promise<string>;
  project(): Promise<string>;
  customer(): Promise<string>;
  event(): Promise<string>;
  /** A memory of the organization's read-write key, the key the table calls with. */
  memory(): Promise<string>;
  review(): Promise<string>;
  /** An applied write of the organization (its workflow id). */
  appliedWrite(): Promise<string>;
  webhookEndpoint(): Promise<string>;
  webhookDelivery(): Promise<{ endpointId: string; deliveryId: string }>;
}

const inTwoDays = (hour: number) => {
  const day = new Date(Date.now() + 2 * 86_400_000);
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hour)).toISOString();
};

/** A valid call of every operation; an operation without one fails the suite. */
const samples: Record<string, (site: Site) => Promise<Sample>> = {
  'me.get': async () => ({}),
  'tasks.list': async ({ fx }) => ({ query: { project_id: fx.project, status: 'todo' } }),
  'tasks.get': async ({ fx }) => ({ params: { id: fx.task } }),
  'tasks.create': async ({ fx }) => ({ body: { title: 'Table task', project_id: fx.project, assignee_id: fx.member, due_on: '2027-01-15' } }),
  'tasks.update': async ({ make }) => ({ params: { id: await make.task() }, body: { status: 'done', tags: ['updated'] } }),
  'tasks.delete': async ({ make }) => ({ params: { id: await make.task() } }),
  'projects.list': async () => ({ query: { status: 'active' } }),
  'projects.get': async ({ fx }) => ({ params: { id: fx.project } }),
  'projects.create': async ({ fx }) => ({ body: { name: 'Table project', owner_id: fx.member, due_on: '2027-03-01' } }),
  'projects.update': async ({ make }) => ({ params: { id: await make.project() }, body: { status: 'on_hold' } }),
  'projects.delete': async ({ make }) => ({ params: { id: await make.project() } }),
  'customers.list': async () => ({ query: { search: 'grace', tags: 'vip' } }),
  'customers.get': async ({ fx }) => ({ params: { id: fx.customer } }),
  'customers.create': async () => ({ body: { name: 'Table customer', email: 'table@example.com', tags: ['lead'] } }),
  'customers.update': async ({ make }) => ({ params: { id: await make.customer() }, body: { phone: '+49 30 1234' } }),
  'calendar.feed': async () => ({ query: { sources: 'event,booking,task_due' } }),
  'calendar.list_events': async ({ fx }) => ({ query: { attendee_id: fx.member } }),
  'calendar.get_event': async ({ fx }) => ({ params: { id: fx.event } }),
  'calendar.book': async ({ fx }) => ({ body: { title: 'Table meeting', starts_at: inTwoDays(9), ends_at: inTwoDays(10), attendee_ids: [fx.member] } }),
  'calendar.update': async ({ make }) => ({ params: { id: await make.event() }, body: { location: 'Room 2' } }),
  'calendar.delete': async ({ make }) => ({ params: { id: await make.event() } }),
  'invoices.list': async ({ fx }) => ({ query: { customer_id: fx.customer, status: 'sent' } }),
  'invoices.get': async ({ fx }) => ({ params: { id: fx.invoice } }),
  'products.list': async () => ({ query: { search: 'cons', active: 'true' } }),
  'products.get': async ({ fx }) => ({ params: { id: fx.product } }),
  'bookings.list': async ({ fx }) => ({ query: { customer_id: fx.customer } }),
  'bookings.get': async ({ fx }) => ({ params: { id: fx.booking } }),
  'expenses.list': async () => ({ query: { category: 'travel' } }),
  'expenses.get': async ({ fx }) => ({ params: { id: fx.expense } }),
  'work_logs.list': async ({ fx }) => ({ query: { task_id: fx.task } }),
  'work_logs.get': async ({ fx }) => ({ params: { id: fx.workLog } }),
  'team.list': async () => ({}),
  'meeting_ingests.list': async () => ({}),
  'meeting_ingests.get': async ({ fx }) => ({ params: { id: fx.meetingIngest } }),
  'meeting_ingests.create': async ({ fx }) => ({
    body: { title: 'Table sync', occurred_at: new Date().toISOString(), transcript: 'We agreed on two things.', tasks: [{ title: 'First' }, { title: 'Second', assignee_id: fx.member }] },
  }),
  'memories.list': async ({ make }) => {
    await make.memory();
    return { query: { tags: 'table', search: 'MORNING' } };
  },
  'memories.remember': async () => ({ body: { content: 'The customer prefers invoices in English', tags: ['billing', 'preference'] } }),
  'memories.forget': async ({ make }) => ({ params: { id: await make.memory() } }),
  'changesets.submit': async ({ fx, make }) => ({
    body: {
      items: [
        { ref: 'new', operation: 'tasks.create', input: { title: 'Table changeset task', project_id: fx.project } },
        { operation: 'tasks.update', input: { id: await make.task(), status: 'done' } },
        { operation: 'tasks.update', input: { id: '$ref:new', tags: ['changeset'] } },
      ],
    },
  }),
  'reviews.list': async ({ make }) => {
    await make.review();
    return { query: { status: 'pending' } };
  },
  'reviews.get': async ({ make }) => ({ params: { id: await make.review() } }),
  'reviews.status': async ({ make }) => ({ params: { review_id: await make.review() } }),
  'reviews.approve': async ({ make }) => ({ params: { id: await make.review() }, body: { comment: 'ok' } }),
  'reviews.deny': async ({ make }) => ({ params: { id: await make.review() } }),
  'reviews.decide_batch': async ({ make }) => ({ body: { review_ids: [await make.review(), await make.review()], verdict: 'denied', comment: 'not now' } }),
  'trust_windows.list': async () => ({ query: { state: 'all' } }),
  // A window matching a title no other write of the table has, so that it lets none of theirs through.
  'trust_windows.close': async ({ org }) => {
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: `Held for a trust window ${Math.random()}` } });
    const review = json(held).review.id as string;
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${review}/approve`, token: org.reviewerToken, payload: { trust: { minutes: 5, max_uses: 1, match: ['title'] } } });
    expect(approved.statusCode, approved.body).toBe(200);
    const windows = json(await h.request({ method: 'GET', url: '/api/v1/trust-windows', token: org.reviewerToken })).data.windows as { id: string; review_id: string }[];
    return { params: { id: windows.find((window) => window.review_id === review)!.id } };
  },
  // Every organization's trail starts with its key's creation and its policy.
  'audit.events': async () => ({ query: { limit: '5' } }),
  'webhooks.event_types': async () => ({}),
  'webhooks.list': async ({ make }) => {
    await make.webhookEndpoint();
    return {};
  },
  'webhooks.get': async ({ make }) => ({ params: { id: await make.webhookEndpoint() } }),
  'webhooks.create': async () => ({ body: { url: 'http://127.0.0.1:9/created', event_types: ['review.created', 'write.denied'], description: 'Table' } }),
  'webhooks.update': async ({ make }) => ({ params: { id: await make.webhookEndpoint() }, body: { description: 'Changed', event_types: ['key.created'] } }),
  'webhooks.delete': async ({ make }) => ({ params: { id: await make.webhookEndpoint() } }),
  'webhooks.deliveries': async ({ make }) => ({ params: { id: (await make.webhookDelivery()).endpointId }, query: { limit: '5' } }),
  'webhooks.redeliver': async ({ make }) => ({ params: { id: (await make.webhookDelivery()).deliveryId } }),
  'writes.get': async ({ make }) => ({ params: { write: await make.appliedWrite() } }),
  'writes.undo': async ({ make }) => ({ body: { write: await make.appliedWrite() } }),
  'writes.undo_now': async ({ make }) => ({ params: { write: await make.appliedWrite() } }),
};

const policies = {
  allow: '@id("allow-all") permit (principal, action, resource);',
  review: '@id("review-all") @decision("review") @reason("Everything is reviewed here") permit (principal, action, resource);',
  deny: '@id("deny-all") @reason("Nothing is written here") forbid (principal, action, resource);',
};

let h: Harness;
const sites = {} as Record<'allow' | 'review' | 'deny' | 'other', Site>;
let freePlan: TestOrganization;

function makers(org: TestOrganization): Makers {
  const orgId = org.organization.id;
  const insert = async (prefix: 'task' | 'prj' | 'cus' | 'cal' | 'mry', sql: string, extra: unknown[] = []) => {
    const id = newId(prefix);
    await h.db.query(sql, [id, orgId, ...extra]);
    return id;
  };
  return {
    task: () => insert('task', `INSERT INTO tasks (id, org_id, title, status, priority) VALUES ($1, $2, 'Standalone task', 'todo', 'normal')`),
    project: () => insert('prj', `INSERT INTO projects (id, org_id, name, status) VALUES ($1, $2, 'Standalone project', 'planned')`),
    customer: () => insert('cus', `INSERT INTO customers (id, org_id, name) VALUES ($1, $2, 'Standalone customer')`),
    event: () => insert('cal', `INSERT INTO events (id, org_id, title, starts_at, ends_at) VALUES ($1, $2, 'Standalone event', $3, $4)`, [inTwoDays(16), inTwoDays(17)]),
    memory: () =>
      insert('mry', `INSERT INTO agent_memories (id, org_id, api_key_id, content, tags) VALUES ($1, $2, $3, 'Likes morning meetings', '{table}')`, [
        org.taskRequest('').apiKey.id,
      ]),
    webhookEndpoint: () => insertWebhookEndpoint(h.db, orgId),
    appliedWrite: () => insertAppliedWrite(h.db, orgId),
    webhookDelivery: () => insertWebhookDelivery(h.db, orgId),
    async review() {
      const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: sites.review.org.readWriteToken, payload: { title: 'Held for the table' } });
      return json(held).review.id;
    },
  };
}

beforeAll(async () => {
  h = await startHarness();
  for (const kind of ['allow', 'review', 'deny', 'other'] as const) {
    const org = await h.createOrganization({ policy: kind === 'other' ? policies.allow : policies[kind] });
    sites[kind] = { org, fx: await insertFixtures(h.db, org.organization.id), make: makers(org) };
    const owner = await createUser(h.db, { orgId: org.organization.id, email: `owner@${org.organization.slug}.test`, role: 'owner' });
    ownerTokens.set(org.organization.id, (await createPersonalToken(h.db, owner)).token);
  }
  freePlan = await h.createOrganization({ plan: 'free', policy: policies.allow });
});
afterAll(() => h?.close());

const shapes = ['implicit', 'explicit'] as const;

function url(operation: Operation, sample: Sample, slug: string | undefined): string {
  const path = operation.path.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(sample.params?.[name] ?? 'missing'));
  const query = sample.query ? `?${new URLSearchParams(sample.query)}` : '';
  return `/api/v1${slug ? `/organizations/${slug}` : ''}${path}${query}`;
}

function call(operation: Operation, sample: Sample, token: string, slug?: string, headers: Record<string, string> = {}) {
  const withBody = operation.method === 'POST' || operation.method === 'PATCH';
  return h.request({ method: operation.method, url: url(operation, sample, slug), token, headers, ...(withBody ? { payload: sample.body ?? {} } : {}) });
}

const siteFor = (operation: Operation) => (operation.family === 'reviews' || operation.family === 'trust_windows' ? sites.review : sites.allow);
/** An owner's token for what reviewers may not do (webhooks). */
const ownerTokens = new Map<string, string>();
const tokenFor = (operation: Operation, org: TestOrganization) =>
  operation.access.apiKey ? org.readWriteToken : operation.access.person?.roles.includes('reviewer') ? org.reviewerToken : ownerTokens.get(org.organization.id)!;

describe('every catalog operation has a sample', () => {
  it.each(catalog.map((op) => [op.name]))('%s', (name) => {
    expect(samples[name], `add a sample for ${name} to this table`).toBeDefined();
  });
});

describe.each(shapes)('on the %s route shape', (shape) => {
  describe.each(catalog.map((op) => [op.name, op] as const))('%s', (_name, operation) => {
    it('answers as its schema says', async () => {
      const site = siteFor(operation);
      const sample = await samples[operation.name]!(site);
      const response = await call(operation, sample, tokenFor(operation, site.org), shape === 'explicit' ? site.org.organization.slug : undefined);
      const expected = operation.kind === 'gated_write' ? operation.successStatus : 200;
      expect(response.statusCode, response.body).toBe(expected);
      const body = json(response);
      expect(body.success).toBe(true);
      (operation.output as z.ZodType).parse(body.data);
      if (operation.kind === 'read' && operation.list) {
        expect(body.page).toHaveProperty('next_cursor');
        expect((body.data as unknown[]).length, 'the sample should find something').toBeGreaterThan(0);
      }
      if (typeof body.data?.version === 'number') expect(response.headers.etag).toBe(`"${body.data.version}"`);
    });

    it("refuses another organization's slug", async () => {
      const site = siteFor(operation);
      const sample = await samples[operation.name]!(site);
      const response = await call(operation, sample, tokenFor(operation, sites.other.org), site.org.organization.slug);
      expect(response.statusCode).toBe(404);
      expect(json(response).error.code).toBe('organization_mismatch');
    });
  });
});

const withIds = catalog.filter((op) => op.path.includes(':id'));
describe.each(withIds.map((op) => [op.name, op] as const))("%s never reaches another organization's record", (_name, operation) => {
  it('404 with the record of another organization, and nothing changes', async () => {
    const site = siteFor(operation);
    const sample = await samples[operation.name]!(site);
    const before = await h.request({ method: 'GET', url: `/api/v1/reviews/${sample.params!.id}`, token: site.org.reviewerToken });
    const response = await call(operation, sample, tokenFor(operation, sites.other.org));
    expect(response.statusCode).toBe(404);
    expect(json(response).error.code).toBe('not_found');
    if (operation.family === 'reviews') {
      const after = await h.request({ method: 'GET', url: `/api/v1/reviews/${sample.params!.id}`, token: site.org.reviewerToken });
      expect(json(after).data.status).toBe(json(before).data.status);
    }
  });
});

const apiKeyOperations = catalog.filter((op) => op.access.apiKey?.ability);
describe.each(apiKeyOperations.map((op) => [op.name, op] as const))('%s refuses keys that may not', (_name, operation) => {
  it('a key without the ability: 403 insufficient_ability', async () => {
    const site = siteFor(operation);
    const token = await site.org.keyWith([operation.family === 'tasks' ? 'customers.read' : 'tasks.read'], 'read_write');
    const response = await call(operation, await samples[operation.name]!(site), token);
    expect(response.statusCode).toBe(403);
    expect(json(response).error).toMatchObject({ code: 'insufficient_ability', details: { required: operation.access.apiKey!.ability } });
  });

  if (operation.kind === 'gated_write') {
    it('a read-only key: 403 read_only_key', async () => {
      const response = await call(operation, await samples[operation.name]!(sites.allow), sites.allow.org.readOnlyToken);
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe('read_only_key');
    });
  }
});

const gated = catalog.filter((op) => op.kind === 'gated_write');
const tableOf: Record<string, string> = {
  tasks: 'tasks',
  projects: 'projects',
  customers: 'customers',
  calendar: 'events',
  meeting_ingests: 'meeting_ingests',
  memories: 'agent_memories',
  // The sample undoes a task's create.
  writes: 'tasks',
  // The sample changeset writes tasks.
  changesets: 'tasks',
};

async function snapshot(operation: Operation, site: Site, sample: Sample) {
  const table = tableOf[operation.family]!;
  const { rows } = await h.db.query(`SELECT count(*)::int AS n, coalesce(sum(${table === 'meeting_ingests' ? '0' : 'version'}), 0)::int AS versions FROM ${table} WHERE org_id = $1`, [
    site.org.organization.id,
  ]);
  const tasks = (await h.db.query('SELECT count(*)::int AS n FROM tasks WHERE org_id = $1', [site.org.organization.id])).rows[0].n;
  return { ...rows[0], tasks, id: sample.params?.id };
}

describe.each(gated.map((op) => [op.name, op] as const))('%s goes through the gate', (_name, operation) => {
  it('Review: 202 pending_review, nothing written until a person approves', async () => {
    const site = sites.review;
    const sample = await samples[operation.name]!(site);
    const before = await snapshot(operation, site, sample);
    const response = await call(operation, sample, site.org.readWriteToken);
    expect(response.statusCode).toBe(202);
    expect(json(response)).toMatchObject({ error: { code: 'pending_review' }, review: { status: 'pending' } });
    expect(await snapshot(operation, site, sample)).toEqual(before);
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${json(response).review.id}`, token: site.org.reviewerToken })).data;
    expect(review.operation).toBe(operation.name);
    if (operation.method !== 'POST') expect(review.resource.id).toBe(sample.params!.id);
  });

  it('Deny: 403 policy_denied with the reason, nothing written', async () => {
    const site = sites.deny;
    const sample = await samples[operation.name]!(site);
    const before = await snapshot(operation, site, sample);
    const response = await call(operation, sample, site.org.readWriteToken);
    expect(response.statusCode).toBe(403);
    // A changeset's reason names the item that decided it: "item 0 (tasks.create): Nothing is written here".
    const reason = operation.kind === 'gated_write' && operation.changeset ? expect.stringContaining(': Nothing is written here') : 'Nothing is written here';
    expect(json(response).error).toMatchObject({ code: 'policy_denied', details: { reason, policy_ids: ['deny-all'] } });
    expect(await snapshot(operation, site, sample)).toEqual(before);
  });

  it('an unknown field: 422 naming it, nothing written', async () => {
    const site = sites.allow;
    const sample = await samples[operation.name]!(site);
    const before = await snapshot(operation, site, sample);
    const bad = operation.method === 'DELETE' ? { ...sample, query: { bogus_field: '1' } } : { ...sample, body: { ...sample.body, bogus_field: 1 } };
    const response = await call(operation, bad, site.org.readWriteToken);
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields.map((f: { field: string }) => f.field)).toContain('bogus_field');
    expect(await snapshot(operation, site, sample)).toEqual(before);
  });
});

describe('plan features', () => {
  const featured = catalog.filter((op) => op.feature);
  it.each(featured.map((op) => [op.name, op] as const))('%s: 403 feature_not_in_plan on a plan without it', async (_name, operation) => {
    const fx = await insertFixtures(h.db, freePlan.organization.id);
    const response = await call(operation, await samples[operation.name]!({ org: freePlan, fx, make: makers(freePlan) }), freePlan.readWriteToken);
    expect(response.statusCode).toBe(403);
    expect(json(response).error).toMatchObject({ code: 'feature_not_in_plan', details: { feature: operation.feature, plan: 'free' } });
  });

  it('expenses and work logs exist on the catalog at all', () => {
    expect(featured.map((op) => op.name).sort()).toEqual(['expenses.get', 'expenses.list', 'work_logs.get', 'work_logs.list']);
  });
});
