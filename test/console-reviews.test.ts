import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../api/app';
import { createGateClient } from '../api/catalog/gate-client';
import { accessibilityViolations, launchChromium, screenshot } from './support/browser';
import { addPerson, type TestPerson } from './support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from './support/harness';

// The review queue in Chromium, live, against the real api (two processes' worth), worker, Temporal and
// PostgreSQL: agents' held writes over REST and MCP appear without a reload, people decide them, and the
// decisions hold in the database.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  reviewer = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(acme, reviewer);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(org: TestOrganization, person: TestPerson, path = '/reviews'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}${path}`);
  await opened.getByLabel('Organization').fill(org.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  return opened;
}

const card = (on: Page, title: string) => on.locator('article.review', { hasText: title });

async function postTask(title: string, base = origin) {
  const response = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('the review queue', () => {
  it('shows an agent’s held write over REST without a reload, and its web_url opens it', async () => {
    await page.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
    await page.getByText('Nothing waits for a decision.').waitFor();
    const held = await postTask('review the supplier contract');
    expect(held.status).toBe(202);
    expect(held.body.review.web_url).toBe(`${publicUrl}/reviews/${held.body.review.id}`);
    expect(held.body.review.url).toBe(`${publicUrl}/api/v1/reviews/${held.body.review.id}`);

    const shown = card(page, 'review the supplier contract');
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.innerText()).toContain('by “test agent”');
    expect(await shown.innerText()).toContain('Over REST');
    expect(await shown.innerText()).toContain('The title asks for a review');
    expect(await shown.innerText()).toContain('review-when-asked');
    expect(await accessibilityViolations(page)).toEqual([]);

    const direct = await browser.newPage();
    await direct.goto(`${origin}/reviews/${held.body.review.id}`);
    await direct.waitForURL(/\/sign-in\?next=%2Freviews%2Frev_/);
  });

  it('shows one over MCP with the SDK client, and one that arrives through a second api process', async () => {
    const mcp = await h.mcp(acme.readWriteToken);
    const result: any = await mcp.callTool({ name: 'create_task', arguments: { title: 'review the MCP order' } });
    expect(result.structuredContent.review.web_url).toMatch(/\/reviews\/rev_/);
    const viaMcp = card(page, 'review the MCP order');
    await viaMcp.waitFor({ timeout: 10_000 });
    expect(await viaMcp.innerText()).toContain('Over MCP');

    const second = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent' });
    await second.listen({ port: 0, host: '127.0.0.1' });
    try {
      const other = `http://127.0.0.1:${(second.server.address() as { port: number }).port}`;
      expect((await postTask('review what the second process took', other)).status).toBe(202);
      await card(page, 'review what the second process took').waitFor({ timeout: 10_000 });
    } finally {
      await second.close();
    }
  });

  it('shows an update as a field-by-field diff of the real record', async () => {
    const created = await postTask('Pay the rent');
    expect(created.status).toBe(201);
    const update = await fetch(`${origin}/api/v1/tasks/${created.body.data.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'review the rent', priority: 'high' }),
    });
    expect(update.status).toBe(202);
    const shown = card(page, 'review the rent');
    await shown.waitFor({ timeout: 10_000 });
    const changed = await shown.locator('tr[data-changed="true"] th').allInnerTexts();
    expect(changed.map((field) => field.replace('(changed)', '').trim()).sort()).toEqual(['priority', 'title']);
    const titleRow = await shown.locator('tr[data-changed="true"]', { hasText: 'title' }).innerText();
    expect(titleRow).toContain('Pay the rent');
    expect(titleRow).toContain('review the rent');
    await screenshot(page, 'review-queue');
  });

  it('approve: the record exists; deny: nothing changed; both stay findable', async () => {
    const approve = card(page, 'review the supplier contract');
    await approve.getByLabel('Comment (optional)').fill('Checked with legal');
    await approve.getByRole('button', { name: 'Approve' }).click();
    await approve.waitFor({ state: 'detached', timeout: 20_000 });
    // The card leaves the open queue once the approval is recorded; the write follows as the workflow applies it.
    const written = async () =>
      (await h.db.query('SELECT title FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'review the supplier contract'])).rows.length;
    await expect.poll(written, { timeout: 20_000 }).toBe(1);

    const deny = card(page, 'review the rent');
    await deny.getByRole('button', { name: 'Deny' }).click();
    await deny.waitFor({ state: 'detached', timeout: 20_000 });
    const { rows: unchanged } = await h.db.query('SELECT title, priority FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'Pay the rent']);
    expect(unchanged).toEqual([{ title: 'Pay the rent', priority: 'normal' }]);

    await page.getByLabel('Status').selectOption('approved');
    const decided = card(page, 'review the supplier contract');
    await decided.waitFor();
    await decided.getByText(`Approved by ${reviewer.email}: “Checked with legal”. The write ran.`).waitFor({ timeout: 20_000 });
    await page.getByLabel('Status').selectOption('denied');
    await card(page, 'review the rent').waitFor();
    await page.getByLabel('Status').selectOption('pending');
  });

  it('someone else’s decision leaves the open queue without a reload', async () => {
    const held = await postTask('review decided elsewhere');
    const shown = card(page, 'review decided elsewhere');
    await shown.waitFor({ timeout: 10_000 });
    const decided = await h.request({ method: 'POST', url: `/api/v1/reviews/${held.body.review.id}/deny`, token: acme.reviewerToken });
    expect(decided.statusCode).toBe(200);
    await shown.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('a member sees the queue but cannot decide; another organization sees none of it', async () => {
    const member = await addPerson(h.db, acme.organization, 'member');
    const memberPage = await signedInPage(acme, member);
    const shown = card(memberPage, 'review the MCP order');
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await shown.getByText('Reviewers, admins and owners decide held writes.').waitFor();
    expect(await accessibilityViolations(memberPage)).toEqual([]);

    const outsider = await addPerson(h.db, globex.organization, 'owner');
    const theirs = await signedInPage(globex, outsider);
    await theirs.getByText('Nothing waits for a decision.').waitFor();
    const reviewId = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: acme.reviewerToken })).data[0].id;
    await theirs.goto(`${origin}/reviews/${reviewId}`);
    await theirs.getByRole('alert').waitFor();
    expect(await theirs.getByRole('main').innerText()).not.toContain('review the MCP order');
  });

  it('the web_url opens the review for a signed-in person, who decides it there', async () => {
    const held = await postTask('review from the link');
    const opened = await signedInPage(acme, reviewer, new URL(held.body.review.web_url).pathname);
    const shown = card(opened, 'review from the link');
    await shown.waitFor();
    expect(await accessibilityViolations(opened)).toEqual([]);
    await screenshot(opened, 'review');
    await shown.getByRole('button', { name: 'Approve' }).click();
    await shown.getByText('The write ran.').waitFor({ timeout: 20_000 });
  });

  it('an escalated review says so on its card (escalation itself: test/notifications.test.ts)', async () => {
    const held = await postTask('review the escalated request');
    expect(held.status).toBe(202);
    // As the escalation step records it when the organization's wait runs out.
    await h.db.query("UPDATE reviews SET escalated_to = 'admins', escalated_at = now() WHERE id = $1", [held.body.review.id]);
    await page.goto(`${origin}/reviews/${held.body.review.id}`);
    const shown = card(page, 'review the escalated request');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByText('Escalated to admins').waitFor();
    expect(await shown.innerText()).toMatch(/Escalated to admins .*waited longer than the organization allows/);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
