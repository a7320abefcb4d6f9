import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { json, publicUrl, startHarness, type Harness } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// A decision link's page in Chromium at a phone's width (390 × 844), against the real api, worker, Temporal and
// PostgreSQL: opened from the email without signing in, it shows the write and changes nothing; its one button
// applies the write; opened again, it says it was used. The token lives in the link's fragment and the calls' bodies:
// an older link with it in the path still works, moved to the fragment at once. These organizations let anyone with
// an Approve link confirm it (decision-link-sign-in.test.ts: "signed in as that person").

let h: Harness;
let catcher: MailCatcher;
let browser: Browser;
let origin: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url } });
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await catcher?.close();
});

async function phonePage(path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${origin}${path}`);
  return page;
}

const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

const focusedText = (page: Page) => page.evaluate(() => (globalThis as any).document.activeElement?.textContent as string);

describe('a decision link’s page at a phone’s width', () => {
  it('shows the write without signing in, decides nothing until confirmed, then applies it once', async () => {
    const org = await h.createOrganization({ name: 'Acme Inc.', approveLinks: 'anyone_with_link' });
    const created = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'Pay the rent', priority: 'normal' } });
    expect(created.statusCode).toBe(201);
    const taskId = json(created).data.id as string;
    const held = await h.request({
      method: 'PATCH',
      url: `/api/v1/tasks/${taskId}`,
      token: org.readWriteToken,
      payload: { title: 'review the rent increase with the landlord before the first of the month', priority: 'high' },
    });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id as string;
    const reviewer = `reviewer@${org.organization.slug}.test`;
    const mail = await catcher.mailTo(reviewer, reviewId);
    const [approve] = linksIn(mail, `${publicUrl}/decide#`).map((link) => link.slice(publicUrl.length));

    const page = await phonePage(approve!);
    await page.getByRole('heading', { level: 1, name: 'Approve this write?' }).waitFor();
    await page.getByText(`You are deciding as ${reviewer}`).waitFor();
    await expect.poll(() => page.getByText('tasks.update').count()).toBeGreaterThan(0);
    await page.getByText('The title asks for a review').waitFor();
    // The changed fields come first in the diff.
    const rows = await page.locator('table.record.diff tbody tr th').allTextContents();
    expect(rows.slice(0, 2).map((row) => row.replace(' (changed)', '')).sort()).toEqual(['priority', 'title']);
    const button = page.getByRole('button', { name: 'Approve this write' });
    await button.waitFor();
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-phone');

    // Opened, read, nothing decided.
    const pending = await h.db.query('SELECT status FROM reviews WHERE id = $1', [reviewId]);
    expect(pending.rows[0].status).toBe('pending');
    expect((await h.db.query('SELECT title FROM tasks WHERE id = $1', [taskId])).rows[0].title).toBe('Pay the rent');

    await page.getByLabel('Comment (optional)').fill('Agreed on the phone');
    await button.click();
    const outcome = page.getByRole('heading', { level: 2, name: 'Approved and applied' });
    await outcome.waitFor({ timeout: 30_000 });
    expect(await focusedText(page)).toBe('Approved and applied');
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-phone-approved');
    expect((await h.db.query('SELECT title, priority FROM tasks WHERE id = $1', [taskId])).rows[0]).toEqual({
      title: 'review the rent increase with the landlord before the first of the month',
      priority: 'high',
    });
    expect((await h.db.query('SELECT status, decided_via, comment FROM reviews WHERE id = $1', [reviewId])).rows[0]).toEqual({
      status: 'approved',
      decided_via: 'link',
      comment: 'Agreed on the phone',
    });

    // Opened again: used, and no button.
    await page.reload();
    await page.getByText('This link was used already').waitFor();
    expect(await page.getByRole('button', { name: 'Approve this write' }).count()).toBe(0);
    await page.context().close();

    const broken = await phonePage(`/decide#${'x'.repeat(43)}`);
    await broken.getByRole('heading', { level: 1, name: 'This link does not work' }).waitFor();
    expect(await accessibilityViolations(broken)).toEqual([]);
    await broken.context().close();
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('a held changeset: every item with its decision and record (a reference by the item that makes it); the link approves all of it, in one transaction', async () => {
    const org = await h.createOrganization({ name: 'Globex', approveLinks: 'anyone_with_link' });
    const existing = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'Draft the quote' } })).data.id as string;
    const held = await h.request({
      method: 'POST',
      url: '/api/v1/changesets',
      token: org.readWriteToken,
      payload: {
        items: [
          { ref: 'proj', operation: 'projects.create', input: { name: 'Globex onboarding' } },
          { operation: 'tasks.create', input: { title: 'review the kickoff agenda', project_id: '$ref:proj' } },
          { operation: 'tasks.update', input: { id: existing, status: 'done', project_id: '$ref:proj' } },
        ],
      },
    });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id as string;
    const reviewer = `reviewer@${org.organization.slug}.test`;
    const [approve] = linksIn(await catcher.mailTo(reviewer, reviewId), `${publicUrl}/decide#`).map((link) => link.slice(publicUrl.length));

    // What the page reads: the changeset's items, no record of its own.
    const read = json(await h.request({ method: 'POST', url: '/console/api/decision-links/read', payload: { token: approve!.slice('/decide#'.length) } }));
    expect(read.data.review).toMatchObject({ operation: 'changesets.submit', before: null, after: null, reason: 'item 2 (tasks.create): The title asks for a review' });
    expect(read.data.review.changeset).toMatchObject({ mode: 'all_or_nothing', item_count: 3, summary: 'changeset of 3 writes: projects.create, tasks.create, tasks.update' });
    expect(read.data.review.changeset.items.map((item: { operation: string; decision: string }) => `${item.operation}:${item.decision}`)).toEqual([
      'projects.create:allow',
      'tasks.create:review',
      'tasks.update:allow',
    ]);

    const page = await phonePage(approve!);
    await page.getByRole('heading', { level: 1, name: 'Approve this changeset?' }).waitFor();
    await page.getByText('A changeset of 3 writes: projects.create, tasks.create, tasks.update').waitFor();
    const items = page.locator('.changeset-items > li');
    await expect.poll(() => items.count()).toBe(3);
    expect(await items.nth(1).textContent()).toContain('2. tasks.create · Held: The title asks for a review');
    expect(await items.nth(2).textContent()).toContain('3. tasks.update · Allowed: Ordinary writes are allowed');
    // The task's project is named by the item that makes it, in the create and in the update.
    const projectCell = (item: number) => items.nth(item).locator('tr', { has: page.locator('th', { hasText: /^project_id/ }) }).locator('td').last();
    expect(await projectCell(1).textContent()).toBe('project made by item 1 (proj)');
    expect(await projectCell(2).textContent()).toBe('project made by item 1 (proj)');
    const button = page.getByRole('button', { name: 'Approve all 3 writes' });
    await button.waitFor();
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-changeset-phone');
    expect((await h.db.query('SELECT count(*)::int AS n FROM projects WHERE org_id = $1', [org.organization.id])).rows[0].n).toBe(0);

    await button.click();
    await page.getByRole('heading', { level: 2, name: 'Approved and applied' }).waitFor({ timeout: 30_000 });
    await page.getByText('All 3 writes were applied together, once, as you approved them.').waitFor();
    const { rows } = await h.db.query(
      `SELECT xmin::text AS tx, id, project_id FROM tasks WHERE org_id = $1
       UNION ALL SELECT xmin::text, id, NULL FROM projects WHERE org_id = $1 ORDER BY id`,
      [org.organization.id],
    );
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((row) => row.tx)).size).toBe(1);
    const project = rows.find((row) => row.id.startsWith('prj_'))!;
    expect(rows.filter((row) => row.project_id === project.id)).toHaveLength(2);
    expect((await h.db.query('SELECT status, decided_via FROM reviews WHERE id = $1', [reviewId])).rows[0]).toEqual({ status: 'approved', decided_via: 'link' });
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('an older link with the token in its path still works: the page moves it to the fragment at once, and no request it makes carries the token', async () => {
    const org = await h.createOrganization({ name: 'Initech', approveLinks: 'anyone_with_link' });
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'review the printer budget' } });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id as string;
    const [approve, deny] = linksIn(await catcher.mailTo(`reviewer@${org.organization.slug}.test`, reviewId), `${publicUrl}/decide#`).map((link) =>
      link.slice(`${publicUrl}/decide#`.length),
    );

    /** A page whose every request (address and Referer) is kept, with the request bodies that carry the token. */
    const recorded = async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      const requests: { url: string; referer: string | undefined; body: string | null }[] = [];
      page.on('request', (request) => requests.push({ url: request.url(), referer: request.headers().referer, body: request.postData() }));
      return { page, requests };
    };

    /** The paths of the requests whose bodies carry the token, each once (a development build reads twice). */
    const carrying = (requests: { url: string; body: string | null }[], token: string) => [
      ...new Set(requests.filter((request) => request.body?.includes(token)).map((request) => new URL(request.url).pathname)),
    ];

    // A link as sent now: the token never leaves the browser but in the bodies of the page's calls.
    const fresh = await recorded();
    await fresh.page.goto(`${origin}/decide#${deny}`);
    await fresh.page.getByRole('button', { name: 'Deny this write' }).waitFor();
    expect(fresh.page.url()).toBe(`${origin}/decide#${deny}`);
    expect(fresh.requests.length).toBeGreaterThan(2);
    for (const request of fresh.requests) {
      expect(request.url, request.url).not.toContain(deny);
      expect(request.referer ?? '', request.url).not.toContain(deny);
    }
    expect(carrying(fresh.requests, deny!)).toEqual(['/console/api/decision-links/read']);
    const historyOfOneLink = await fresh.page.evaluate(() => (globalThis as any).history.length as number);
    await fresh.page.context().close();

    // A link sent before: its address is the page's first request, and only that one; the page replaces it with
    // the fragment form before it calls anything, and decides over the calls that carry the token in their bodies.
    const old = await recorded();
    await old.page.goto(`${origin}/decide/${approve}`);
    const button = old.page.getByRole('button', { name: 'Approve this write' });
    await button.waitFor();
    expect(old.page.url()).toBe(`${origin}/decide#${approve}`);
    await button.click();
    await old.page.getByRole('heading', { level: 2, name: 'Approved and applied' }).waitFor({ timeout: 30_000 });
    const [opened, ...after] = old.requests;
    expect(opened!.url).toBe(`${origin}/decide/${approve}`);
    for (const request of after) expect(request.url, request.url).not.toContain(approve);
    expect(carrying(old.requests, approve!)).toEqual(['/console/api/decision-links/read', '/console/api/decision-links/confirm']);
    // The old address was replaced in the history, not followed by a new entry: going back does not find it.
    expect(await old.page.evaluate(() => (globalThis as any).history.length)).toBe(historyOfOneLink);
    expect((await h.db.query('SELECT status, decided_via FROM reviews WHERE id = $1', [reviewId])).rows[0]).toEqual({ status: 'approved', decided_via: 'link' });
    await old.page.context().close();
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('a link to a write withdrawn since (its key revoked) says so, and offers nothing to press', async () => {
    const org = await h.createOrganization({ name: 'Acme Inc.' });
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'Agent revoked after the email', access: 'read_write' });
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title: 'review the order the agent placed' } });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id as string;
    const mail = await catcher.mailTo(`reviewer@${org.organization.slug}.test`, reviewId);
    const [approve] = linksIn(mail, `${publicUrl}/decide#`).map((link) => link.slice(publicUrl.length));
    await revokeApiKey(h.db, withdrawReviewsOfKey, org.organization.id, key.key.id);

    const page = await phonePage(approve!);
    await page.getByText('This write was withdrawn before anyone decided it: the API key or the app that made it was revoked.').waitFor();
    expect(await page.getByRole('button', { name: 'Approve this write' }).count()).toBe(0);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-withdrawn-phone');
    await page.context().close();
    expect((await h.db.query('SELECT status FROM reviews WHERE id = $1', [reviewId])).rows[0].status).toBe('withdrawn');
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
