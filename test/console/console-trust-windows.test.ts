import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// Trust windows in Chromium against the real api, worker, Temporal and PostgreSQL: a reviewer approves a held
// write and opens a window from its card; the key's next matching write goes through; the Policy page lists the
// window with its uses, and "Close now" ends it, so the next write is held again.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let page: Page;
let project: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  reviewer = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  project = (await (await agentWrite('/api/v1/projects', { name: 'Launch' })).body).data.id;
  browser = await launchChromium();
  page = await signedInConsole(browser, origin, { slug: acme.organization.slug, ...reviewer }, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function agentWrite(path: string, payload: Record<string, unknown>) {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: response.status, body: response.json() as Promise<any> };
}

describe('a trust window in the console', () => {
  it('is opened from the review card, lets the matching write through, and is closed on the Policy page', async () => {
    const held = await agentWrite('/api/v1/tasks', { title: 'review the launch checklist', project_id: project });
    expect(held.status).toBe(202);

    await page.goto(`${origin}/reviews`);
    const card = page.locator('article.review', { hasText: 'review the launch checklist' });
    await card.waitFor({ timeout: 10_000 });
    await card.getByLabel(/Also trust “test agent”/).check();
    await card.getByLabel('For how many minutes').fill('30');
    await card.getByLabel('At most how many writes').fill('3');
    await card.getByLabel(/project_id =/).check();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'trust-window-approve');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.waitFor({ state: 'detached', timeout: 20_000 });
    await expect.poll(async () => (await h.db.query('SELECT 1 FROM trust_windows WHERE org_id = $1', [acme.organization.id])).rowCount, { timeout: 20_000 }).toBe(1);

    const through = await agentWrite('/api/v1/tasks', { title: 'review the launch slides', project_id: project });
    expect(through.status).toBe(201);
    const elsewhere = await agentWrite('/api/v1/tasks', { title: 'review something unrelated' });
    expect(elsewhere.status).toBe(202);

    // The approved review's card names the window it opened, with its uses and its expiry.
    const windowId = (await h.db.query('SELECT id FROM trust_windows WHERE org_id = $1', [acme.organization.id])).rows[0].id as string;
    await page.goto(`${origin}/reviews/${(await held.body).review.id}`);
    const opened = page.locator(`[data-trust-window="${windowId}"]`);
    await opened.waitFor({ timeout: 10_000 });
    const openedText = await opened.innerText();
    expect(openedText).toContain(`Trust window ${windowId} (open)`);
    expect(openedText).toContain(`project_id = "${project}"`);
    expect(openedText).toContain('1 of 3 used');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'trust-window-review-card');

    await page.goto(`${origin}/policy`);
    const section = page.getByRole('region', { name: 'Trust windows' });
    const row = section.locator('tr', { hasText: 'tasks.create' });
    await row.waitFor({ timeout: 10_000 });
    expect(await row.innerText()).toContain('1 of 3');
    expect(await row.innerText()).toContain(project);
    expect(await row.innerText()).toContain(reviewer.email);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'trust-window-policy');

    await row.getByRole('button', { name: /Close now/ }).click();
    await section.getByRole('status').filter({ hasText: 'Closed the trust window' }).waitFor();
    await section.getByText('No trust window is open.').waitFor();
    const after = await agentWrite('/api/v1/tasks', { title: 'review after closing', project_id: project });
    expect(after.status).toBe(202);
    const closed = (await h.db.query("SELECT closed_by FROM trust_windows WHERE org_id = $1", [acme.organization.id])).rows;
    expect(closed).toEqual([{ closed_by: reviewer.user.id }]);
    expect(pageErrors).toEqual([]);
  });
});
