import { parse as parseCsv } from 'csv-parse/sync';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The console's Audit page in Chromium against the real api, worker, Temporal and PostgreSQL: a reviewer reads
// what the policy decided and who approved what, filters it (by a person too: picked by an owner, typed by a
// reviewer), and exports it as CSV and JSON Lines.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let member: TestPerson;
let owner: TestPerson;
let page: Page;
let reviewId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  [reviewer, member] = [await addPerson(h.db, acme.organization, 'reviewer'), await addPerson(h.db, acme.organization, 'member')];
  owner = await addPerson(h.db, acme.organization, 'owner');
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

const signedInPage = (person: TestPerson): Promise<Page> =>
  signedInConsole(browser, origin, { slug: acme.organization.slug, ...person }, pageErrors, { acceptDownloads: true });

const table = (on = page) => on.getByRole('table', { name: 'Audit events, newest first' });
const rows = (on = page) => table(on).locator('tbody tr');
const shownIds = (on = page) => rows(on).evaluateAll((shown) => shown.map((row) => row.getAttribute('data-event-id')));
/** What the API answers for the person's events, newest first. */
async function eventsOf(userId: string): Promise<{ id: string; type: string }[]> {
  const answer = await h.request({ method: 'GET', url: `/api/v1/audit-events?limit=200&user_id=${userId}`, token: acme.reviewerToken });
  return json(answer).data as { id: string; type: string }[];
}

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

  it("filters by a person a reviewer types the id of, and exports only that person's events", async () => {
    // The approval was made with the reviewer's personal token: an event of that person.
    const { rows: found } = await h.db.query('SELECT id FROM users WHERE email = $1', [`reviewer@${acme.organization.slug}.test`]);
    const approverId = found[0].id as string;
    const expected = await eventsOf(approverId);
    expect(expected.map((event) => event.type)).toContain('review.approved');
    expect(expected.map((event) => event.type)).not.toContain('gate.decided');

    // A reviewer may not list people: the filter takes a person's id.
    await page.getByLabel('Person', { exact: true }).fill(approverId);
    await expect.poll(() => shownIds()).toEqual(expected.map((event) => event.id));
    expect(await table().getByRole('row', { name: /review\.approved/ }).innerText()).toContain('Invoice checked');
    expect(await accessibilityViolations(page)).toEqual([]);
    const lines = (await downloaded('Export JSON Lines')).trim().split('\n').map((line) => JSON.parse(line) as { id: string });
    expect(lines.map((event) => event.id)).toEqual(expected.map((event) => event.id).reverse());

    await page.getByLabel('Person', { exact: true }).fill('usr_nobody');
    await page.getByText('No events match.').waitFor();
    await page.getByLabel('Person', { exact: true }).fill('');
    await expect.poll(async () => rows().count()).toBeGreaterThan(expected.length);
  });

  it("lets an owner pick a person from the organization's people and see only their events", async () => {
    const owners = await signedInPage(owner);
    await owners.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit' }).click();
    await table(owners).getByRole('row', { name: /gate\.decided/ }).first().waitFor();
    const person = owners.getByLabel('Person', { exact: true });
    // The reviewer who signed in above: invited, set a password, signed in; nothing of the agents' writes.
    await expect.poll(async () => (await person.locator('option').allInnerTexts()).includes(reviewer.email)).toBe(true);
    const expected = await eventsOf(reviewer.user.id);
    expect(new Set(expected.map((event) => event.type))).toEqual(new Set(['person.invited', 'person.password_set', 'person.signed_in']));

    await person.selectOption({ label: reviewer.email });
    await expect.poll(() => shownIds(owners)).toEqual(expected.map((event) => event.id));
    expect((await rows(owners).allInnerTexts()).join('\n')).not.toMatch(/gate\.decided|review\.approved/);
    // The other filters narrow it further.
    await owners.getByLabel('Event', { exact: true }).selectOption('person.signed_in');
    await expect.poll(() => shownIds(owners)).toEqual(expected.filter((event) => event.type === 'person.signed_in').map((event) => event.id));
    expect(await accessibilityViolations(owners)).toEqual([]);
    await owners.context().close();
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
