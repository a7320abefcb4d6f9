import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/database';
import { createApiKey } from '../../domain/identity/api-keys';
import { newId } from '../../domain/kit/ids';
import { recordDeliveryFailed } from '../../domain/notify/deliveries';
import { createWebhookEndpoint, updateWebhookEndpoint } from '../../domain/notify/endpoints';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { testSecrets } from '../support/secrets';

// The overview against the real api, worker, Temporal and PostgreSQL: its figures for a known sequence of agents'
// writes (held and denied by the test policy: titles "review…" and "deny…"), per organization and never another's;
// then in Chromium: the page shows the same figures, moves without a reload when a write is held, draws the week's
// decisions and the busiest agents with their text equivalents, and lists what needs a person.

let h: Harness;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** A task create by an agent: 201 allowed, 202 held (its review's id), 403 denied. */
async function write(token: string, title: string): Promise<{ status: number; reviewId?: string }> {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  return { status: response.statusCode, reviewId: response.statusCode === 202 ? json(response).review.id : undefined };
}

async function read(token: string): Promise<number> {
  return (await h.request({ method: 'GET', url: '/api/v1/tasks', token })).statusCode;
}

/** An endpoint Gatehouse switched off: one delivery failed every attempt, with a threshold of one. */
const loopback = { allowLoopback: true, allowPrivate: false };

async function endpointSwitchedOff(db: Database, orgId: string, url: string): Promise<string> {
  const { endpoint } = await createWebhookEndpoint(db, testSecrets, orgId, { url, eventTypes: ['write.applied'] }, loopback);
  const eventId = newId('evt');
  const deliveryId = newId('whd');
  await db.query(`INSERT INTO webhook_events (id, org_id, type, data, relayed_at) VALUES ($1, $2, 'write.applied', '{}', now())`, [eventId, orgId]);
  await db.query(`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts) VALUES ($1, $2, $3, $4, 'pending', 0)`, [
    deliveryId,
    orgId,
    endpoint.id,
    eventId,
  ]);
  expect((await recordDeliveryFailed(db, deliveryId, 1))?.disabled).toBe(true);
  return endpoint.id;
}

/**
 * The charts drawn at their width before a full-page screenshot: a capture taken while the page produced no frame
 * for a while has caught the charts at a passing width (never seen on the page itself, whose widths hold steady).
 */
async function settled(page: Page): Promise<void> {
  await page.waitForTimeout(500);
  await page.evaluate(() => new Promise((resolve) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(resolve))));
}

/** The organization's local date of an instant, YYYY-MM-DD. */
const localDate = (zone: string, at: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(at);

async function overviewOf(session: ConsoleSession) {
  const response = await session.request({ method: 'GET', url: '/console/api/v1/overview' });
  expect(response.statusCode, response.body).toBe(200);
  return json(response).data;
}

/**
 * The known sequence: the read-write key ("test agent") makes 3 allowed writes, 2 held, 1 denied and a read; a key
 * with a budget of 3 requests ("Calendar agent") one allowed, one held and a read (its budget used); a key with a cap
 * of 1 task create a day ("Notes agent") one allowed write (its cap reached).
 */
async function knownSequence(org: TestOrganization) {
  const orgId = org.organization.id;
  const calendar = await createApiKey(h.db, { orgId, label: 'Calendar agent', access: 'read_write', dailyRequestBudget: 3 });
  const notes = await createApiKey(h.db, { orgId, label: 'Notes agent', access: 'read_write', writeCaps: { 'tasks.create': 1 }, writeOperations: ['tasks.create'] });
  const agent = org.readWriteToken;
  const held: string[] = [];
  const statuses: number[] = [];
  for (const title of ['Water the plants', 'review the budget', 'Call the supplier', 'deny the refund', 'review the hiring plan', 'File the invoices']) {
    const answer = await write(agent, title);
    statuses.push(answer.status);
    if (answer.reviewId) held.push(answer.reviewId);
  }
  statuses.push(await read(agent));
  for (const title of ['Book the room', 'review the offsite']) {
    const answer = await write(calendar.token, title);
    statuses.push(answer.status);
    if (answer.reviewId) held.push(answer.reviewId);
  }
  statuses.push(await read(calendar.token));
  statuses.push((await write(notes.token, 'Write the minutes')).status);
  expect(statuses).toEqual([201, 202, 201, 403, 202, 201, 200, 201, 202, 200, 201]);
  return { held, calendar: calendar.key, notes: notes.key };
}

describe('the overview operation', () => {
  let acme: TestOrganization;
  let globex: TestOrganization;
  let acmeOwner: ConsoleSession;
  let globexOwner: ConsoleSession;
  let sequence: Awaited<ReturnType<typeof knownSequence>>;
  const zone = 'Pacific/Kiritimati';

  beforeAll(async () => {
    // UTC+14: its day is not UTC's for most of the day.
    acme = await h.createOrganization({ name: 'Acme Inc.', timezone: zone });
    globex = await h.createOrganization({ name: 'Globex' });
    acmeOwner = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'owner'));
    globexOwner = await signIn(h.app, globex.organization, await addPerson(h.db, globex.organization, 'owner'));

    sequence = await knownSequence(acme);
    // Globex's day: counted for Globex alone.
    for (const title of ['Ship the order', 'Invoice the client', 'review the discount', 'deny the credit']) await write(globex.readWriteToken, title);
    await endpointSwitchedOff(h.db, globex.organization.id, 'http://127.0.0.1:9/globex-hook');
  });

  it("counts the known sequence: the queue, today's calls and writes, the busiest keys and the keys at their budget", async () => {
    // The call log is written just after each answer.
    await expect.poll(async () => (await overviewOf(acmeOwner)).today.calls).toBe(11);
    const overview = await overviewOf(acmeOwner);
    const today = localDate(zone, new Date());
    expect(overview.date).toBe(today);
    expect(overview.timezone).toBe(zone);
    expect(overview.queue).toMatchObject({ pending: 3, cap: 1000, expiring_within_a_day: 3, escalated: 0 });
    expect(overview.queue.oldest).toMatchObject({ review_id: sequence.held[0], operation: 'tasks.create', api_key_label: 'test agent' });
    expect(overview.queue.next_to_expire.review_id).toBe(sequence.held[0]);
    expect(overview.today).toEqual({ calls: 11, writes: { allow: 5, review: 3, deny: 1, refused: 0 } });
    expect(overview.decisions_by_day).toHaveLength(7);
    expect(overview.decisions_by_day.at(-1)).toEqual({ date: today, allow: 5, review: 3, deny: 1, refused: 0 });
    expect(overview.decisions_by_day.slice(0, 6).map(({ allow, review, deny, refused }: Record<string, number>) => allow! + review! + deny! + refused!)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(overview.busiest_agents.map(({ label, calls, held, denied }: Record<string, unknown>) => ({ label, calls, held, denied }))).toEqual([
      { label: 'test agent', calls: 7, held: 2, denied: 1 },
      { label: 'Calendar agent', calls: 3, held: 1, denied: 0 },
      { label: 'Notes agent', calls: 1, held: 0, denied: 0 },
    ]);
    expect(overview.needs_a_person).toEqual([
      { kind: 'key_at_budget', api_key_id: sequence.calendar.id, label: 'Calendar agent', label_verified: true, budget: 'requests', operation: null, used: 3, limit: 3 },
      { kind: 'key_at_budget', api_key_id: sequence.notes.id, label: 'Notes agent', label_verified: true, budget: 'writes', operation: 'tasks.create', used: 1, limit: 1 },
    ]);
  });

  it('puts each decision on its local day over the last 7 days, zeros between, and leaves out older ones', async () => {
    const moved = async (title: string, days: number) => {
      const { rows } = await h.db.query(
        `UPDATE gate_decisions SET created_at = created_at - $3 * interval '1 day' WHERE org_id = $1 AND input->>'title' = $2 RETURNING created_at`,
        [acme.organization.id, title, days],
      );
      return rows[0].created_at as Date;
    };
    const twoDaysAgo = await moved('Water the plants', 2);
    await moved('Call the supplier', 8);
    const days = (await overviewOf(acmeOwner)).decisions_by_day;
    expect(days.map((day: { date: string }) => day.date)).toEqual(
      Array.from({ length: 7 }, (_, index) => localDate(zone, new Date(Date.now() - (6 - index) * 86_400_000))),
    );
    expect(days.find((day: { date: string }) => day.date === localDate(zone, twoDaysAgo))).toMatchObject({ allow: 1, review: 0, deny: 0 });
    expect(days.at(-1)).toMatchObject({ allow: 3, review: 3, deny: 1 });
    expect(days.reduce((sum: number, day: { allow: number }) => sum + day.allow, 0)).toBe(4);
  });

  it('lists an endpoint Gatehouse switched off (its URL for those who manage webhooks only), not one a person switched off', async () => {
    const endpointId = await endpointSwitchedOff(h.db, acme.organization.id, 'http://127.0.0.1:9/acme-hook');
    const { endpoint: quiet } = await createWebhookEndpoint(h.db, h.secrets, acme.organization.id, { url: 'http://127.0.0.1:9/quiet', eventTypes: ['write.applied'] }, loopback);
    await updateWebhookEndpoint(h.db, acme.organization.id, quiet.id, { enabled: false }, loopback);
    const switchedOff = (await overviewOf(acmeOwner)).needs_a_person.filter((need: { kind: string }) => need.kind === 'webhook_switched_off');
    expect(switchedOff).toEqual([
      { kind: 'webhook_switched_off', endpoint_id: endpointId, url: 'http://127.0.0.1:9/acme-hook', reason: expect.stringMatching(/^Switched off by Gatehouse: 1 deliveries/), since: expect.any(String) },
    ]);
    const member = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'member'));
    const seenByMember = (await overviewOf(member)).needs_a_person.filter((need: { kind: string }) => need.kind === 'webhook_switched_off');
    expect(seenByMember).toEqual([{ ...switchedOff[0], url: null }]);
  });

  it('lists the reviews waiting past the escalation wait, oldest first', async () => {
    await h.db.query('UPDATE organizations SET review_escalation_ms = 1000 WHERE id = $1', [acme.organization.id]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const overview = await overviewOf(acmeOwner);
    expect(overview.queue.escalated).toBe(3);
    const escalated = overview.needs_a_person.filter((need: { kind: string }) => need.kind === 'review_escalated');
    expect(escalated.map((need: { review_id: string }) => need.review_id)).toEqual(sequence.held);
    expect(escalated[0]).toMatchObject({ operation: 'tasks.create', api_key_label: 'test agent', held_at: expect.any(String), expires_at: expect.any(String) });
  });

  it("never counts another organization's calls, writes, reviews, keys or endpoints", async () => {
    await expect.poll(async () => (await overviewOf(globexOwner)).today.calls).toBe(4);
    const overview = await overviewOf(globexOwner);
    expect(overview.queue).toMatchObject({ pending: 1, escalated: 0 });
    expect(overview.today).toEqual({ calls: 4, writes: { allow: 2, review: 1, deny: 1, refused: 0 } });
    expect(overview.decisions_by_day.at(-1)).toMatchObject({ allow: 2, review: 1, deny: 1 });
    expect(overview.busiest_agents).toEqual([{ api_key_id: expect.any(String), label: 'test agent', label_verified: true, calls: 4, held: 1, denied: 1 }]);
    expect(overview.needs_a_person.map((need: { kind: string; url?: string }) => [need.kind, need.url])).toEqual([['webhook_switched_off', 'http://127.0.0.1:9/globex-hook']]);
    const acmes = JSON.stringify(await overviewOf(acmeOwner));
    for (const foreign of ['globex-hook', globex.organization.id]) expect(acmes).not.toContain(foreign);
  });

  it("says when the review queue is full and the organization used its daily budget, counting the writes refused", async () => {
    const plan = `overview-${process.pid}-${Date.now().toString(36)}`;
    await h.db.query(
      `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
       VALUES ($1, 4, 1000, 1000, 2, '{}', 'a plan of the overview tests')`,
      [plan],
    );
    const small = await h.createOrganization({ plan });
    const session = await signIn(h.app, small.organization, await addPerson(h.db, small.organization, 'reviewer'));
    const statuses = [];
    for (const title of ['review one', 'review two', 'review three']) statuses.push((await write(small.readWriteToken, title)).status);
    statuses.push(await read(small.readWriteToken));
    // The fifth request is past the budget of 4: refused, and counted (as the limits count refused requests).
    statuses.push(await read(small.readWriteToken));
    expect(statuses).toEqual([202, 202, 429, 200, 429]);
    const overview = await overviewOf(session);
    expect(overview.queue).toMatchObject({ pending: 2, cap: 2 });
    expect(overview.today.writes).toEqual({ allow: 0, review: 2, deny: 0, refused: 1 });
    expect(overview.decisions_by_day.at(-1)).toMatchObject({ review: 2, refused: 1 });
    expect(overview.needs_a_person).toEqual([
      { kind: 'queue_full', pending: 2, cap: 2 },
      { kind: 'organization_at_budget', used: 5, limit: 4 },
    ]);
  });

  it("is the console's alone: an API key's request for it finds nothing", async () => {
    const response = await h.request({ method: 'GET', url: '/api/v1/overview', token: acme.readWriteToken });
    expect(response.statusCode).toBe(404);
  });
});

/** Decisions of earlier days, as [days ago, allowed, held, denied]: the week before today's known sequence. */
const history = [
  [6, 4, 1, 0],
  [5, 7, 2, 1],
  [4, 3, 0, 0],
  [3, 8, 3, 1],
  [2, 6, 2, 2],
  [1, 9, 1, 0],
] as const;

/**
 * The week before, written as the gate records decisions: copies of one of the organization's decisions of each
 * kind, at noon of an earlier local day (the call log and the queue are today's alone, so they stay as they are).
 */
async function decisionsOfEarlierDays(orgId: string, zone: string): Promise<void> {
  for (const [daysAgo, ...counts] of history) {
    for (const [index, decision] of (['allow', 'review', 'deny'] as const).entries()) {
      await h.db.query(
        `INSERT INTO gate_decisions (id, org_id, workflow_id, operation, interface, api_key_id, decision, reason, policy_ids, policy_errors, policy_version, input, resource, context, created_at)
         SELECT 'dec_history_' || d.org_id || '_' || $2::int || '_' || $3::text || '_' || i, d.org_id, 'history:' || d.org_id || ':' || $2::int || ':' || $3::text || ':' || i, d.operation, d.interface,
                d.api_key_id, d.decision, d.reason, d.policy_ids, d.policy_errors, d.policy_version, d.input, d.resource, d.context,
                (date_trunc('day', now() AT TIME ZONE $5::text) - $2::int * interval '1 day' + interval '12 hours') AT TIME ZONE $5::text
         FROM (SELECT * FROM gate_decisions WHERE org_id = $1 AND decision = $3::text ORDER BY id LIMIT 1) d CROSS JOIN generate_series(1, $4::int) i`,
        [orgId, daysAgo, decision, counts[index], zone],
      );
    }
  }
}

describe('the Overview page', () => {
  let initech: TestOrganization;
  let owner: TestPerson;
  let ownerSession: ConsoleSession;
  let page: Page;
  let sequence: Awaited<ReturnType<typeof knownSequence>>;

  beforeAll(async () => {
    initech = await h.createOrganization({ name: 'Initech', timezone: 'Europe/Berlin' });
    owner = await addPerson(h.db, initech.organization, 'owner');
    ownerSession = await signIn(h.app, initech.organization, owner);
    sequence = await knownSequence(initech);
    await decisionsOfEarlierDays(initech.organization.id, 'Europe/Berlin');
    await endpointSwitchedOff(h.db, initech.organization.id, 'http://127.0.0.1:9/ops-alerts');
    // The call log is written just after each answer.
    for (let tries = 0; (await overviewOf(ownerSession)).today.calls < 11 && tries < 50; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    browser = await launchChromium();
    page = await signedInConsole(browser, await h.listen(), { slug: initech.organization.slug, ...owner }, pageErrors);
    await page.getByRole('heading', { level: 1, name: 'Initech' }).waitFor();
  });

  const figure = (name: string) => page.locator(`[data-figure="${name}"] .figure-value`);
  const figures = async () =>
    Object.fromEntries(
      await Promise.all(['pending', 'expiring', 'escalated', 'calls', 'allowed', 'held', 'denied'].map(async (name) => [name, Number(await figure(name).innerText())])),
    );
  const decisionsChart = () => page.getByRole('figure', { name: 'Decisions, last 7 days' });
  const agentsChart = () => page.getByRole('figure', { name: 'Busiest agents today' });
  /** A bar of a chart as drawn: its total and each series' value, from the SVG's data attributes. */
  const bar = async (chart: ReturnType<typeof decisionsChart>, group: string) =>
    chart.locator(`g[data-group="${group}"]`).evaluate((node) => ({
      total: Number(node.getAttribute('data-total')),
      ...Object.fromEntries([...node.querySelectorAll('rect[data-series]')].map((rect) => [rect.getAttribute('data-series'), Number(rect.getAttribute('data-value'))])),
    }));

  it("shows the figures the overview operation reports, which are the known sequence's", async () => {
    const reported = await overviewOf(ownerSession);
    const expected = { pending: 3, expiring: 3, escalated: 0, calls: 11, allowed: 5, held: 3, denied: 1 };
    expect({
      pending: reported.queue.pending,
      expiring: reported.queue.expiring_within_a_day,
      escalated: reported.queue.escalated,
      calls: reported.today.calls,
      allowed: reported.today.writes.allow,
      held: reported.today.writes.review,
      denied: reported.today.writes.deny,
    }).toEqual(expected);
    await expect.poll(figures).toEqual(expected);
    const oldest = page.locator('[data-figure="oldest"]');
    expect(await oldest.getByRole('link').getAttribute('href')).toBe(`/reviews/${sequence.held[0]}`);
    expect(await oldest.innerText()).toMatch(/tasks\.create by test agent/);
  });

  it("draws the week's decisions and the busiest agents from the known data, each with its text equivalent", async () => {
    const week = [...history.map(([, allow, review, deny]) => [allow, review, deny]), [5, 3, 1]];
    const drawn = await decisionsChart()
      .locator('g[data-group]')
      .evaluateAll((groups) => groups.map((group) => ['allow', 'review', 'deny'].map((series) => Number(group.querySelector(`rect[data-series="${series}"]`)?.getAttribute('data-value') ?? 0))));
    expect(drawn).toEqual(week);
    expect(await bar(decisionsChart(), 'Today')).toEqual({ total: 9, allow: 5, review: 3, deny: 1 });
    expect(await decisionsChart().getAttribute('aria-describedby')).toBeTruthy();
    expect(await decisionsChart().locator('figcaption').innerText()).toMatch(/59 gated writes in the last 7 days: 42 allowed, 12 held for review, 5 denied\. The busiest day was \w+, \w+ \d+, with 12\./);
    await decisionsChart().getByText('The figures as a table').click();
    const table = await decisionsChart().getByRole('table', { name: 'Decisions, last 7 days' }).locator('tbody tr').allInnerTexts();
    expect(table.map((row) => row.split('\t').slice(1).map(Number))).toEqual(week.map((counts) => [...counts, counts.reduce((sum, count) => sum + count, 0)]));
    expect(table.at(-1)!.split('\t')[0]).toBe('Today');

    expect(await bar(agentsChart(), 'test agent')).toEqual({ total: 7, other: 4, held: 2, denied: 1 });
    expect(await bar(agentsChart(), 'Calendar agent')).toEqual({ total: 3, other: 2, held: 1 });
    expect(await bar(agentsChart(), 'Notes agent')).toEqual({ total: 1, other: 1 });
    expect(await agentsChart().locator('figcaption').innerText()).toContain('test agent made the most calls today: 7 (2 held, 1 denied). Then Calendar agent 3, Notes agent 1.');
    await agentsChart().getByText('The figures as a table').click();
    const rows = await agentsChart().getByRole('table', { name: 'Busiest agents today' }).locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t'))).toEqual([
      ['test agent', '4', '2', '1', '7'],
      ['Calendar agent', '2', '1', '0', '3'],
      ['Notes agent', '1', '0', '0', '1'],
    ]);
  });

  it('lists what needs a person, each linking to where it is fixed', async () => {
    const needs = page.getByRole('region', { name: 'Needs a person' });
    const webhook = needs.locator('li[data-need="webhook_switched_off"]');
    expect(await webhook.innerText()).toMatch(/Webhook off\s+http:\/\/127\.0\.0\.1:9\/ops-alerts: Switched off by Gatehouse: 1 deliveries in a row failed/);
    expect(await webhook.getByRole('link').getAttribute('href')).toBe('/settings/advanced/webhooks');
    const keys = needs.locator('li[data-need="key_at_budget"]');
    expect(await keys.allInnerTexts()).toEqual([
      expect.stringMatching(/Calendar agent used its daily budget of 3 requests/),
      expect.stringMatching(/Notes agent used its daily cap of 1 tasks\.create writes/),
    ]);
    expect(await keys.first().getByRole('link').getAttribute('href')).toBe('/settings/advanced/api-keys');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('moves without a reload when an agent holds another write', async () => {
    await page.evaluate(() => ((globalThis as any).notReloaded = true));
    expect((await write(initech.readWriteToken, 'review the new supplier')).status).toBe(202);
    await expect.poll(() => figure('pending').innerText(), { timeout: 10_000 }).toBe('4');
    await expect.poll(() => figure('held').innerText()).toBe('4');
    expect(await bar(decisionsChart(), 'Today')).toEqual({ total: 10, allow: 5, review: 4, deny: 1 });
    await expect.poll(async () => (await bar(agentsChart(), 'test agent')).total).toBe(8);
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    const reported = await overviewOf(ownerSession);
    expect([reported.queue.pending, reported.today.writes.review]).toEqual([4, 4]);
    // The picture for the README with the figures' tables folded, as a person first sees the page.
    for (const chart of [decisionsChart(), agentsChart()]) await chart.getByText('The figures as a table').click();
    await settled(page);
    await screenshot(page, 'overview-dashboard');
  });

  it('works at a phone’s width, with nothing wider than the screen', async () => {
    const phone = await signedInConsole(browser, await h.listen(), { slug: initech.organization.slug, ...owner }, pageErrors, { viewport: { width: 390, height: 844 } });
    await phone.locator('[data-figure="pending"] .figure-value').getByText('4').waitFor();
    await phone.getByRole('figure', { name: 'Busiest agents today' }).locator('g[data-group="test agent"]').waitFor();
    const overflow = await phone.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(phone)).toEqual([]);
    await settled(phone);
    await screenshot(phone, 'overview-dashboard-phone');
  });

  it('says so when nothing needs a person', async () => {
    const quiet = await h.createOrganization({ name: 'Quiet Ltd' });
    const member = await addPerson(h.db, quiet.organization, 'member');
    const other = await signedInConsole(browser, await h.listen(), { slug: quiet.organization.slug, ...member }, pageErrors);
    await other.getByRole('region', { name: 'Needs a person' }).getByText('Nothing needs you').waitFor();
    expect(await other.locator('[data-figure="pending"] .figure-value').innerText()).toBe('0');
    expect(await other.getByRole('figure', { name: 'Decisions, last 7 days' }).locator('figcaption').innerText()).toContain('No gated writes in the last 7 days.');
    expect(await accessibilityViolations(other)).toEqual([]);
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
