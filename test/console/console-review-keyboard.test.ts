import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { insertHeldReviews } from '../support/review-fixtures';

// The review queue worked from the keyboard alone, filtered by age, deadline, operation and key, and paged at the
// plan's cap with its exact count: in Chromium, against the real api, worker, Temporal and PostgreSQL. Every
// outcome is read back through the API.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
const pageErrors: string[] = [];
const hour = 3_600_000;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  reviewer = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(org: TestOrganization, person: TestPerson, path = '/reviews', viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}${path}`);
  await opened.getByLabel('Organization').fill(org.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  await opened.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
  return opened;
}

const card = (on: Page, title: string) => on.locator('article.review', { hasText: title });
/** The review whose card has the focus, or what has it: the element's queue action or tag. */
const focused = (on: Page) =>
  on.evaluate(() => {
    const active = (globalThis as any).document.activeElement as { dataset: Record<string, string>; tagName: string; id: string } | null;
    return active?.dataset.reviewId ?? (active?.id || active?.dataset.queueAction || active?.tagName);
  });
const said = (on: Page) => on.locator('.queue-keys [role="status"]').innerText();

async function hold(org: TestOrganization, title: string): Promise<string> {
  const response = await fetch(`${origin}/api/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as any).review.id;
}

const reviewOf = async (org: TestOrganization, id: string) => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${id}`, token: org.reviewerToken })).data;

describe('the review queue from the keyboard', () => {
  let page: Page;
  const ids = {} as Record<'one' | 'two' | 'three', string>;

  beforeAll(async () => {
    for (const name of ['one', 'two', 'three'] as const) ids[name] = await hold(acme, `review by keyboard ${name}`);
    page = await signedInPage(acme, reviewer);
    await card(page, 'review by keyboard one').waitFor({ timeout: 10_000 });
  });

  it('shows the keys: a compact legend always, every key with ?', async () => {
    const legend = page.getByRole('region', { name: 'Keyboard shortcuts' });
    expect(await legend.innerText()).toMatch(/j\s+next.*a\s+approve.*d d\s+deny/s);
    await page.keyboard.press('?');
    await legend.getByRole('heading', { name: 'Keyboard shortcuts' }).waitFor();
    expect(await legend.getByRole('button', { name: 'Hide shortcuts' }).getAttribute('aria-expanded')).toBe('true');
    expect(await legend.locator('dd').count()).toBe(10);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.keyboard.press('?');
    await legend.getByRole('heading', { name: 'Keyboard shortcuts' }).waitFor({ state: 'detached' });
  });

  it('moves between cards with j and k, and the arrows on a card', async () => {
    // Newest first: three, two, one.
    await page.keyboard.press('j');
    expect(await focused(page)).toBe(ids.three);
    await page.keyboard.press('j');
    expect(await focused(page)).toBe(ids.two);
    await page.keyboard.press('k');
    expect(await focused(page)).toBe(ids.three);
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe(ids.two);
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe(ids.one);
    await page.keyboard.press('j');
    expect(await said(page)).toContain('last review shown');
    await page.keyboard.press('ArrowUp');
    expect(await focused(page)).toBe(ids.two);
    // Keys with a modifier are the browser's, not the queue's.
    await page.keyboard.press('Control+j');
    await page.keyboard.press('Alt+a');
    expect(await focused(page)).toBe(ids.two);
    expect((await reviewOf(acme, ids.two)).status).toBe('pending');
  });

  it('comments (keys typed in the box stay text), approves with a, and the focus goes on to the next card', async () => {
    await page.keyboard.press('c');
    expect(await focused(page)).toBe(`comment-${ids.two}`);
    await page.keyboard.type('Fine by keyboard, a d x j');
    await page.keyboard.press('Escape');
    expect(await focused(page)).toBe(ids.two);
    expect((await reviewOf(acme, ids.two)).status).toBe('pending');
    await page.keyboard.press('a');
    await card(page, 'review by keyboard two').waitFor({ state: 'detached', timeout: 20_000 });
    await expect.poll(() => focused(page), { timeout: 10_000 }).toBe(ids.one);
    const approved = await reviewOf(acme, ids.two);
    expect(approved).toMatchObject({ status: 'approved', comment: 'Fine by keyboard, a d x j', decided_by: { email: reviewer.email }, decided_via: 'console' });
    await expect.poll(async () => (await reviewOf(acme, ids.two)).applied_at, { timeout: 20_000 }).not.toBeNull();
    await expect.poll(() => said(page)).toContain('Approved: tasks.create by “test agent”');
  });

  it('deny asks first: d moves to Deny and says what a second d does; Esc keeps the review; d d denies', async () => {
    await page.keyboard.press('d');
    expect(await focused(page)).toBe('deny');
    expect(await said(page)).toContain('Press d again to deny it, Escape to keep it.');
    await page.keyboard.press('Escape');
    expect(await focused(page)).toBe(ids.one);
    expect((await reviewOf(acme, ids.one)).status).toBe('pending');
    await page.keyboard.press('d');
    await page.keyboard.press('d');
    await card(page, 'review by keyboard one').waitFor({ state: 'detached', timeout: 20_000 });
    expect((await reviewOf(acme, ids.one)).status).toBe('denied');
    // The last card left: the one before it takes the focus.
    await expect.poll(() => focused(page), { timeout: 10_000 }).toBe(ids.three);
  });

  it('selects with x and decides the selection from the batch bar, keys only', async () => {
    const more = [await hold(acme, 'review by keyboard four'), await hold(acme, 'review by keyboard five')];
    await card(page, 'review by keyboard five').waitFor({ timeout: 10_000 });
    await page.keyboard.press('k');
    await page.keyboard.press('k');
    await page.keyboard.press('k');
    // Newest first: five, four, three.
    expect(await focused(page)).toBe(more[1]);
    await page.keyboard.press('x');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    expect(await said(page)).toContain('2 selected');
    await page.keyboard.press('b');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.textContent)).toBe('Approve 2 selected');
    await page.keyboard.press('Enter');
    await page.getByText('2 approved.').waitFor({ timeout: 20_000 });
    for (const id of more) expect((await reviewOf(acme, id)).status).toBe('approved');
    expect((await reviewOf(acme, ids.three)).status).toBe('pending');
  });

  it('e opens the edit form at its first field; o opens the card on its own page', async () => {
    await page.locator(`article[data-review-id="${ids.three}"]`).focus();
    await page.keyboard.press('e');
    expect(await focused(page)).toBe(`edit-${ids.three}-field-title`);
    // Keys typed in the form are text; Esc goes back to the card.
    await page.keyboard.press('Escape');
    expect(await focused(page)).toBe(ids.three);
    await page.keyboard.press('o');
    await page.waitForURL(`${origin}/reviews/${ids.three}`);
    await page.goBack();
    await card(page, 'review by keyboard three').waitFor();
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/reviews/${ids.three}`);
    await page.goBack();
    await card(page, 'review by keyboard three').waitFor();
  });

  it('single-key shortcuts can be turned off (and on again)', async () => {
    await page.keyboard.press('?');
    await page.getByLabel('Use single-key shortcuts').uncheck();
    await page.locator(`article[data-review-id="${ids.three}"]`).focus();
    await page.keyboard.press('a');
    await page.waitForTimeout(500);
    expect((await reviewOf(acme, ids.three)).status).toBe('pending');
    expect(await page.getByRole('region', { name: 'Keyboard shortcuts' }).innerText()).toContain('Single-key shortcuts are off.');
    await page.getByLabel('Use single-key shortcuts').check();
    await page.getByRole('button', { name: 'Hide shortcuts' }).click();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});

describe('filters for age, deadline, operation and key', () => {
  let initech: TestOrganization;
  let page: Page;
  let agent: string;
  let helper: string;

  beforeAll(async () => {
    initech = await h.createOrganization({ name: 'Initech' });
    const keys = (await h.db.query('SELECT id, label FROM api_keys WHERE org_id = $1', [initech.organization.id])).rows as { id: string; label: string }[];
    agent = keys.find((key) => key.label === 'test agent')!.id;
    helper = keys.find((key) => key.label === 'test reader')!.id;
    await insertHeldReviews(h.db, initech.organization.id, { apiKeyId: agent, count: 3, heldAgoMs: 2 * 24 * hour });
    await insertHeldReviews(h.db, initech.organization.id, { apiKeyId: agent, count: 2, operation: 'tasks.update', heldAgoMs: 3 * hour, expiresInMs: hour / 2 });
    await insertHeldReviews(h.db, initech.organization.id, { apiKeyId: helper, count: 4, operation: 'projects.create', expiresInMs: 20 * hour });
    await insertHeldReviews(h.db, initech.organization.id, { apiKeyId: helper, count: 2, operation: 'customers.delete', status: 'denied', heldAgoMs: 10 * 24 * hour });
    const person = await addPerson(h.db, initech.organization, 'reviewer');
    // Opened on one operation's queue: the choices still offer every key and operation with a review.
    page = await signedInPage(initech, person, '/reviews?operation=projects.create');
  });

  const count = () => page.locator('.queue-count strong').innerText();
  const cards = () => page.locator('section[aria-label="Reviews"] > article.review').count();
  const apiCount = async (filters: Record<string, string>) =>
    json(await h.request({ method: 'GET', url: `/api/v1/reviews?${new URLSearchParams({ status: 'pending', limit: '200', ...filters })}`, token: initech.reviewerToken })).data.length;

  it('offers every operation and key with a review, not only those shown', async () => {
    await expect.poll(count).toBe('4 pending');
    expect(await cards()).toBe(4);
    const operations = await page.getByLabel('Operation').locator('option').allInnerTexts();
    expect(operations).toEqual(['Any', 'customers.delete', 'projects.create (4 pending)', 'tasks.create (3 pending)', 'tasks.update (2 pending)']);
    const keys = await page.getByLabel('API key').locator('option').allInnerTexts();
    expect(keys).toEqual(['Any', 'test agent (5 pending)', 'test reader (4 pending)']);
  });

  it('each filter narrows the list and the count, as the API counts it', async () => {
    await page.getByLabel('Operation').selectOption('');
    await expect.poll(count).toBe('9 pending');
    expect(await cards()).toBe(9);

    await page.getByLabel('Held').selectOption({ label: 'More than 1 day ago' });
    await expect.poll(count).toBe('3 pending');
    expect(await cards()).toBe(3);
    expect(await apiCount({ held_before: new Date(Date.now() - 24 * hour).toISOString() })).toBe(3);
    await page.getByLabel('Held').selectOption({ label: 'More than 1 hour ago' });
    await expect.poll(count).toBe('5 pending');
    expect(await cards()).toBe(5);

    await page.getByLabel('Held').selectOption({ label: 'Any time' });
    await page.getByLabel('Expires').selectOption({ label: 'Within 1 hour' });
    await expect.poll(count).toBe('2 pending');
    expect(await cards()).toBe(2);
    expect(await apiCount({ expires_before: new Date(Date.now() + hour).toISOString() })).toBe(2);
    await page.getByLabel('Expires').selectOption({ label: 'Within 1 day' });
    await expect.poll(count).toBe('6 pending');

    await page.getByLabel('Expires').selectOption({ label: 'Any time' });
    await page.getByLabel('API key').selectOption({ label: 'test reader (4 pending)' });
    await expect.poll(count).toBe('4 pending');
    // Two changes in a row both hold (the second does not bring back what the first undid).
    expect(new URL(page.url()).search).toBe(`?key=${helper}`);
    expect(await apiCount({ api_key_id: helper })).toBe(4);
    await page.getByLabel('Status').selectOption('denied');
    await expect.poll(count).toBe('2 denied');
    await page.getByLabel('Status').selectOption('any');
    await expect.poll(count).toBe('6 reviews');
    // The address keeps the filters: a reload (or Back from a card) shows the same queue.
    await page.reload();
    await expect.poll(count).toBe('6 reviews');
    expect(await page.getByLabel('API key').inputValue()).toBe(helper);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});

describe('a queue at the plan’s cap', () => {
  let busy: TestOrganization;
  let page: Page;

  beforeAll(async () => {
    busy = await h.createOrganization({ name: 'Busy Corp' });
    const agent = (await h.db.query("SELECT id FROM api_keys WHERE org_id = $1 AND label = 'test agent'", [busy.organization.id])).rows[0].id as string;
    await insertHeldReviews(h.db, busy.organization.id, { apiKeyId: agent, count: 300, status: 'approved', heldAgoMs: 9 * 24 * hour });
    await insertHeldReviews(h.db, busy.organization.id, { apiKeyId: agent, count: 999, operation: 'customers.update', heldAgoMs: 26 * hour });
    page = await signedInPage(busy, await addPerson(h.db, busy.organization, 'admin'));
  });

  const count = () => page.locator('.queue-count').innerText();
  const shownIds = () => page.locator('section[aria-label="Reviews"] > article.review').evaluateAll((cards) => cards.map((card) => (card as any).dataset.reviewId as string));
  const apiPage = async (cursor?: string) =>
    json(await h.request({ method: 'GET', url: `/api/v1/reviews?${new URLSearchParams({ status: 'pending', limit: '50', ...(cursor ? { cursor } : {}) })}`, token: busy.reviewerToken }));

  it('shows the exact count live: one more held write makes it 1,000 pending, the plan’s cap', async () => {
    await expect.poll(count).toBe('999 pending · 1–50 shown, newest first');
    const held = await hold(busy, 'review the thousandth write');
    await expect.poll(count, { timeout: 10_000 }).toBe('1,000 pending · 1–50 shown, newest first');
    expect((await shownIds())[0]).toBe(held);
    // The cap holds: the next write to be held is refused.
    const refused = await fetch(`${origin}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${busy.readWriteToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'review one too many' }),
    });
    expect(refused.status).not.toBe(202);
  });

  it('is paged 50 at a time, each page the API’s own', async () => {
    const first = await apiPage();
    expect(await shownIds()).toEqual(first.data.map((review: { id: string }) => review.id));
    // The first card selected, and a deny asked for: what the page shows while the keys work it.
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await page.keyboard.press('d');
    expect(await said(page)).toContain('Press d again to deny it');
    expect(await accessibilityViolations(page)).toEqual([]);
    // The page from its top, tall enough for the filters, the count, the first card and the keys below.
    await page.setViewportSize({ width: 1280, height: 1180 });
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await screenshot(page, 'review-queue-keyboard', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.keyboard.press('Escape');
    await page.keyboard.press('x');
    expect((await reviewOf(busy, first.data[0].id)).status).toBe('pending');

    // A page turn took up to sixteen seconds on a loaded machine (when each of the fifty new cards read its context
    // at once; now only those near the screen do): the default second of expect.poll is far too short.
    const turned = { timeout: 30_000 };
    await page.getByRole('navigation', { name: 'Pages of the queue' }).getByRole('button', { name: 'Older' }).click();
    await expect.poll(count, turned).toBe('1,000 pending · 51–100 shown, newest first');
    const second = await apiPage(first.page.next_cursor);
    await expect.poll(shownIds, turned).toEqual(second.data.map((review: { id: string }) => review.id));
    // The new page's first card takes the focus, for the keys.
    await expect.poll(() => focused(page), turned).toBe(second.data[0].id);
    await page.getByRole('navigation', { name: 'Pages of the queue' }).getByRole('button', { name: 'Newer' }).click();
    await expect.poll(count, turned).toBe('1,000 pending · 1–50 shown, newest first');
    await expect.poll(shownIds, turned).toEqual(first.data.map((review: { id: string }) => review.id));
  });

  it('is accessible at a phone’s width, and nothing scrolls sideways', async () => {
    const phone = await signedInPage(busy, await addPerson(h.db, busy.organization, 'reviewer'), '/reviews', { width: 390, height: 844 });
    await expect.poll(() => phone.locator('.queue-count').innerText()).toContain('1,000 pending');
    const overflow = await phone.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(phone)).toEqual([]);
    await phone.context().close();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
