import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// A review card that shows the change: the changed fields first and the rest folded, a warning when the record
// changed after the write was held, what the agent knew about the record (its own notes, to reviewers too), and
// where the write came from. In Chromium against the real api, worker, Temporal and PostgreSQL, and through the
// console's API (GET /console/api/v1/reviews/:id/context): who gets the agent's notes, and tenancy.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let page: Page;
const pageErrors: string[] = [];

/** The held update of "Pay the rent", and the notes of the agent that made it. */
let rent: { taskId: string; reviewId: string };
const notes: Record<'tagged' | 'named' | 'unrelated' | 'otherKey', string> = { tagged: '', named: '', unrelated: '', otherKey: '' };

async function call(method: string, path: string, token: string, body?: object) {
  const response = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body && JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function remember(token: string, content: string, tags: string[]): Promise<string> {
  const remembered = await call('POST', '/memories', token, { content, tags });
  expect(remembered.status, JSON.stringify(remembered.body)).toBe(201);
  return remembered.body.data.id;
}

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  reviewer = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  browser = await launchChromium();

  // The agent's morning: it creates the task, notes what it learned, reads the task again, then changes it.
  const created = await call('POST', '/tasks', acme.readWriteToken, { title: 'Pay the rent', description: 'Monthly, to Harbour Lettings', tags: ['rent', 'office'] });
  expect(created.status).toBe(201);
  const taskId = created.body.data.id as string;
  notes.tagged = await remember(acme.readWriteToken, 'Harbour Lettings wants it by the 3rd of each month, by bank transfer', ['rent']);
  notes.unrelated = await remember(acme.readWriteToken, 'The team prefers stand-ups before 10:00', ['team']);
  notes.named = await remember(acme.readWriteToken, 'Ana said “Pay the rent” is urgent this month: the landlord sent a reminder', ['finance']);
  const otherKey = await acme.keyWith(['memories.read', 'memories.write']);
  notes.otherKey = await remember(otherKey, 'The rent goes up in May (another agent’s note)', ['rent']);
  expect((await call('GET', `/tasks/${taskId}`, acme.readWriteToken)).status).toBe(200);
  const held = await call('PATCH', `/tasks/${taskId}`, acme.readWriteToken, { title: 'review the rent: pay it today', priority: 'urgent', due_on: '2026-12-03' });
  expect(held.status, JSON.stringify(held.body)).toBe(202);
  rent = { taskId, reviewId: held.body.review.id };
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(person: TestPerson, viewport = { width: 1280, height: 900 }, path = '/reviews'): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}${path}`);
  await opened.getByLabel('Organization').fill(acme.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  return opened;
}

const card = (on: Page, title: string) => on.locator('article.review', { hasText: title });

describe('a review card in the browser', () => {
  it('shows an update’s changed fields first and folds the unchanged ones', async () => {
    page = await signedInPage(reviewer);
    const shown = card(page, 'review the rent: pay it today');
    await shown.waitFor({ timeout: 10_000 });
    const changed = await shown.locator('tr[data-changed="true"] th').allInnerTexts();
    expect(changed.map((field) => field.replace('(changed)', '').trim())).toEqual(['title', 'due_on', 'priority']);
    expect(await shown.innerText()).toContain('Changes 3 fields: title, due_on, priority.');
    // The rest is folded: named and counted, not shown until asked for.
    const folded = shown.locator('details.folded-fields');
    await expect.poll(() => folded.locator('summary').innerText()).toMatch(/^\d+ unchanged fields$/);
    expect(await folded.getAttribute('open')).toBeNull();
    expect(await shown.getByRole('rowheader', { name: 'created_at' }).isVisible()).toBe(false);
    expect(await shown.innerText()).not.toContain('org_id');
    await folded.locator('summary').click();
    await shown.getByRole('rowheader', { name: 'description' }).waitFor();
    expect(await folded.innerText()).toContain('Monthly, to Harbour Lettings');
    await folded.locator('summary').click();
  });

  it('shows a reviewer the agent’s notes that concern the record, and no others', async () => {
    const shown = card(page, 'review the rent: pay it today');
    const knew = shown.getByRole('region', { name: 'What “test agent” knew about the record' });
    await knew.waitFor({ timeout: 10_000 });
    const text = await knew.innerText();
    expect(text).toContain('Harbour Lettings wants it by the 3rd');
    expect(text).toContain('tag rent');
    expect(text).toContain('“Pay the rent” is urgent this month');
    expect(text).toContain('names “Pay the rent”');
    expect(text).not.toContain('stand-ups');
    expect(text).not.toContain('another agent');
    expect(await knew.locator('[data-memory-id]').evaluateAll((items) => items.map((item) => item.getAttribute('data-memory-id')))).toEqual([notes.named, notes.tagged]);
    // Read-only: nothing on the card corrects or forgets them.
    expect(await knew.getByRole('button').count()).toBe(0);
  });

  it('shows where the write came from: the interface, the key, and its calls just before the hold', async () => {
    const shown = card(page, 'review the rent: pay it today');
    const provenance = shown.locator('details.provenance');
    await expect.poll(() => provenance.locator('summary').innerText()).toBe('Where it came from: REST · key “test agent” · 5 calls just before');
    await provenance.locator('summary').click();
    const rows = await provenance.getByRole('table', { name: /calls before the write was held/ }).locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t').slice(0, 2).join(' ').replace(/\s+/g, ' '))).toEqual([
      'tasks.get (REST) ok',
      'memories.remember (REST) applied',
      'memories.remember (REST) applied',
      'memories.remember (REST) applied',
      'tasks.create (REST) applied',
    ]);
  });

  it('warns before the person decides when the record changed after the hold, naming what changed', async () => {
    const shown = card(page, 'review the rent: pay it today');
    expect(await shown.locator('.stale-warning').count()).toBe(0);
    const changed = await call('PATCH', `/tasks/${rent.taskId}`, acme.readWriteToken, { description: 'Paid by standing order from now on', tags: ['rent'] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    // The agent's write is a call: the card on screen reads its record again by itself, nobody touching the page.
    await page.mouse.move(1, 1);
    await shown.locator('.stale-warning').waitFor({ timeout: 15_000 });
    const warning = shown.getByRole('alert');
    const text = await warning.innerText();
    expect(text).toContain('The record changed after this write was held.');
    expect(text).toContain('It is at version 2 now (held at 1');
    const rows = await warning.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)));
    expect(rows).toEqual([
      ['description', 'Monthly, to Harbour Lettings', 'Paid by standing order from now on'],
      ['tags', '["rent","office"]', '["rent"]'],
    ]);
    // Before the diff, where the person looks before deciding.
    expect(await shown.evaluate((article) => {
      const warning = article.querySelector('.stale-warning')!;
      const diff = article.querySelector('table.record.diff:not(.stale-changes)')!;
      return Boolean(warning.compareDocumentPosition(diff) & 4);
    })).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await shown.locator('details.provenance').evaluate((details) => details.setAttribute('open', ''));
    await screenshot(page, 'review-card-context');
  });

  it('shows a create’s given fields and folds its defaults', async () => {
    const held = await call('POST', '/tasks', acme.readWriteToken, { title: 'review the new lease', tags: ['lease'] });
    expect(held.status).toBe(202);
    const shown = card(page, 'review the new lease');
    await shown.waitFor({ timeout: 10_000 });
    await expect.poll(() => shown.locator('tr[data-given="true"] th').allInnerTexts()).toEqual(['title', 'tags']);
    expect(await shown.innerText()).toContain('Creates a record with 2 fields given: title, tags.');
    expect(await shown.locator('details.folded-fields summary').innerText()).toMatch(/^\d+ other fields?: defaults, id and times$/);
    expect(await shown.getByRole('rowheader', { name: 'priority' }).isVisible()).toBe(false);
  });

  it('is accessible at a phone’s width, and nothing scrolls sideways', async () => {
    const phone = await signedInPage(reviewer, { width: 390, height: 844 });
    const shown = card(phone, 'review the rent: pay it today');
    // A card reads its context as it comes near the screen: on a phone this one is further down.
    await shown.scrollIntoViewIfNeeded();
    await shown.locator('.stale-warning').waitFor({ timeout: 10_000 });
    await shown.locator('details.provenance summary').click();
    await shown.locator('details.folded-fields summary').click();
    const overflow = await phone.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(phone)).toEqual([]);
    await phone.context().close();
    expect(pageErrors).toEqual([]);
  });
});

describe('the context through the console’s API', () => {
  let reviewerSession: ConsoleSession;
  const context = (session: ConsoleSession, id: string) => session.request({ method: 'GET', url: `/console/api/v1/reviews/${id}/context` });

  beforeAll(async () => {
    reviewerSession = await signIn(h.app, acme.organization, reviewer);
  });

  it('gives a reviewer and an owner the stale check, the agent’s notes about the record and the calls before', async () => {
    const owner = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'owner'));
    for (const session of [reviewerSession, owner]) {
      const answer = await context(session, rent.reviewId);
      expect(answer.statusCode, answer.body).toBe(200);
      const data = json(answer).data;
      expect(data.stale).toEqual([
        expect.objectContaining({ index: null, operation: 'tasks.update', record_id: rent.taskId, state: 'changed', held_version: 1, current_version: 2 }),
      ]);
      expect(data.stale[0].changes.map((change: { field: string }) => change.field)).toEqual(['description', 'tags']);
      expect(data.memories.map((memory: { id: string }) => memory.id)).toEqual([notes.named, notes.tagged]);
      expect(data.given).toEqual([]);
      expect(data.provenance).toMatchObject({ interface: 'rest', api_key: { label: 'test agent', connected_client: null } });
      expect(data.provenance.calls_before.map((one: { operation: string }) => one.operation)).toEqual([
        'tasks.get',
        'memories.remember',
        'memories.remember',
        'memories.remember',
        'tasks.create',
      ]);
    }
  });

  it('names the MCP client a write held over MCP came from, as its initialize named itself', async () => {
    const mcp = await h.mcp(acme.readWriteToken);
    const held = await mcp.callTool({ name: 'create_task', arguments: { title: 'review the plants: water them' } });
    const reviewId = (held.structuredContent as { review: { id: string } }).review.id;
    const data = json(await context(reviewerSession, reviewId)).data;
    expect(data.provenance).toMatchObject({ interface: 'mcp', mcp_client: { name: 'gatehouse-test', version: '1.0.0' } });
    // Over REST there is no MCP client to name.
    expect(json(await context(reviewerSession, rent.reviewId)).data.provenance.mcp_client).toBeNull();
  });

  it('leaves the agent’s notes out for a member, who does not decide', async () => {
    const member = await signIn(h.app, acme.organization, await addPerson(h.db, acme.organization, 'member'));
    const answer = await context(member, rent.reviewId);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(json(answer).data.memories).toBeNull();
    expect(json(answer).data.stale[0].state).toBe('changed');
  });

  it('is not offered to API keys, nor over REST to a person’s token', async () => {
    for (const token of [acme.readWriteToken, acme.reviewerToken]) {
      const answer = await h.request({ method: 'GET', url: `/api/v1/reviews/${rent.reviewId}/context`, token });
      expect(answer.statusCode).toBe(404);
      expect(answer.body).not.toContain('Harbour Lettings');
    }
    const mcp = await h.mcp(acme.readWriteToken);
    const tools = await mcp.listTools();
    expect(JSON.stringify(tools)).not.toContain('reviews.context');
  });

  it('answers 404 for another organization’s review, and for one that does not exist', async () => {
    const globexOwner = await signIn(h.app, globex.organization, await addPerson(h.db, globex.organization, 'owner'));
    for (const id of [rent.reviewId, 'rev_nope']) {
      const answer = await context(globexOwner, id);
      expect(answer.statusCode).toBe(404);
      expect(json(answer).error.code).toBe('not_found');
      expect(answer.body).not.toContain('Harbour');
    }
  });

  it('tells a record deleted since the hold, and checks nothing once the review is decided', async () => {
    const created = await call('POST', '/tasks', acme.readWriteToken, { title: 'Pay the water bill' });
    const held = await call('PATCH', `/tasks/${created.body.data.id}`, acme.readWriteToken, { title: 'review the water bill' });
    expect(held.status).toBe(202);
    const current = json(await context(reviewerSession, held.body.review.id)).data;
    expect(current.stale).toEqual([expect.objectContaining({ state: 'current', held_version: 1, current_version: 1, changes: [] })]);
    expect((await call('DELETE', `/tasks/${created.body.data.id}`, acme.readWriteToken)).status).toBe(200);
    const gone = json(await context(reviewerSession, held.body.review.id)).data;
    expect(gone.stale).toEqual([expect.objectContaining({ state: 'deleted', current_version: null })]);
    const denied = await reviewerSession.request({ method: 'POST', url: `/console/api/v1/reviews/${held.body.review.id}/deny`, payload: {} });
    expect(denied.statusCode, denied.body).toBe(200);
    expect(json(await context(reviewerSession, held.body.review.id)).data.stale).toEqual([]);
  });

  it('names the fields a create was given, not those left to their defaults', async () => {
    const held = await call('POST', '/tasks', acme.readWriteToken, { title: 'review the parking permit', priority: 'high' });
    expect(held.status).toBe(202);
    expect(json(await context(reviewerSession, held.body.review.id)).data.given).toEqual([{ index: null, fields: ['title', 'priority'] }]);
  });
});
