import { parse as parseCsv } from 'csv-parse/sync';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from './support/browser';
import { addPerson, type TestPerson } from './support/console';
import { json, startHarness, type Harness, type TestOrganization } from './support/harness';

// The console's Audit page in Chromium against the real api, worker, Temporal and PostgreSQL: a reviewer reads
// what the policy decided and who approved what, filters it, and exports it as CSV and JSON Lines.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let member: TestPerson;
let page: Page;
let reviewId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  [reviewer, member] = [await addPerson(h.db, acme.organization, 'reviewer'), await addPerson(h.db, acme.organization, 'member')];
  const write = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title } });
  expect((await write('Order more paper')).statusCode).toBe(201);
  expect((await write('deny: wire the money abroad')).statusCode).toBe(403);
  const held = await write('review: pay the supplier');
  reviewId = json(held).review.id;
  const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.reviewerToken, payload: { comment: 'Invoice checked' } });
  expect(approved.statusCode).toBe(200);
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(reviewer);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(person: TestPerson): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}/`);
  await opened.getByLabel('Organization').fill(acme.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  await opened.getByRole('navigation', { name: 'Console' }).waitFor();
  return opened;
}

const table = () => page.getByRole('table', { name: 'Audit events, newest first' });
const rows = () => table().locator('tbody tr');

async function downloaded(button: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  await page.getByRole('status').getByText(/^Exported \d+ events/).waitFor();
  return readFileSync((await download.path())!, 'utf8');
}

describe('the Audit page', () => {
  it("shows a reviewer the policy's decisions, the approvals and the changes, newest first", async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
    await table().getByRole('row', { name: /review\.approved/ }).waitFor();
    const approval = await table().getByRole('row', { name: /review\.approved/ }).innerText();
    expect(approval).toContain('Invoice checked');
    expect(approval).toContain(`Review ${reviewId}`);
    const decisions = await table().getByRole('row', { name: /gate\.decided/ }).allInnerTexts();
    expect(decisions).toHaveLength(3);
    expect(decisions.join('\n')).toMatch(/Key “test agent”\s+tasks\.create\s+Denied/);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'audit');
  });

  it('filters by decision, event and key', async () => {
    await page.getByLabel('Decision', { exact: true }).selectOption('deny');
    await expect.poll(async () => rows().allInnerTexts()).toEqual([expect.stringMatching(/gate\.decided.*Denied/s)]);
    await page.getByLabel('Decision', { exact: true }).selectOption('');
    await page.getByLabel('Event', { exact: true }).selectOption('write.applied');
    await expect.poll(async () => rows().count()).toBe(2);
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await page.getByLabel('Operation', { exact: true }).fill('customers.update');
    await page.getByText('No events match.').waitFor();
    await page.getByLabel('Operation', { exact: true }).fill('');
    await page.getByLabel('Key', { exact: true }).selectOption({ label: 'test agent' });
    await expect.poll(async () => (await rows().allInnerTexts()).every((text) => text.includes('test agent'))).toBe(true);
    await page.getByLabel('Key', { exact: true }).selectOption('');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('exports what it shows as CSV and as JSON Lines, oldest first', async () => {
    const all = json(await h.request({ method: 'GET', url: '/api/v1/audit-events?limit=200', token: acme.reviewerToken })).data as { id: string }[];
    await page.getByLabel('Decision', { exact: true }).selectOption('review');
    await expect.poll(async () => rows().count()).toBe(1);
    const csv = parseCsv(await downloaded('Export CSV'), { columns: true }) as Record<string, string>[];
    expect(csv).toHaveLength(1);
    expect(csv[0]).toMatchObject({ type: 'gate.decided', decision: 'review', operation: 'tasks.create', actor_type: 'api_key' });
    expect(JSON.parse(csv[0]!.data!)).toMatchObject({ decision: 'review' });

    await page.getByLabel('Decision', { exact: true }).selectOption('');
    await expect.poll(async () => rows().count()).toBe(all.length);
    const lines = (await downloaded('Export JSON Lines')).trim().split('\n').map((line) => JSON.parse(line) as { id: string });
    expect(lines.map((event) => event.id)).toEqual(all.map((event) => event.id).reverse());
  });

  it('is not offered to a member, and says so at its address', async () => {
    const members = await signedInPage(member);
    expect(await members.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit' }).count()).toBe(0);
    await members.goto(`${origin}/audit`);
    await members.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
