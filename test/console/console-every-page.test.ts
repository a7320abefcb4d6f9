import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueDecisionLinks } from '../../domain/notify/decision-links';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { connectAppDirectly } from '../support/connected-app';
import { addPerson, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Every page of the console, in Chromium against the real service with data on it (writes allowed, held and
// denied, calls over REST and MCP, a memory), at a desktop's and a phone's width: each opens, reads in full
// without sideways scrolling, has no serious or critical axe violation, and throws no script error.

let h: Harness;
let acme: TestOrganization;
let owner: TestPerson;
let browser: Browser;
let origin: string;
let reviewId: string;
let appReviewId: string;
let decisionToken: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner');
  origin = await h.listen();
  browser = await launchChromium();

  const write = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title, tags: ['launch'] } });
  expect((await write('Plan the launch')).statusCode).toBe(201);
  expect((await write('deny the budget')).statusCode).toBe(403);
  const held = await write('review the launch date');
  expect(held.statusCode).toBe(202);
  reviewId = json(held).review.id;
  expect(reviewId).toMatch(/^rev_/);
  const remembered = await h.request({ method: 'POST', url: '/api/v1/memories', token: acme.readWriteToken, payload: { content: 'The launch is in March', tags: ['launch'] } });
  expect(remembered.statusCode).toBe(201);
  const mcp = await h.mcp(acme.readWriteToken);
  await mcp.callTool({ name: 'list_projects', arguments: {} });
  // A connected app's held write too: its own name is shown marked as such (on the decision link's page among others).
  const app = await connectAppDirectly(h.db, { orgId: acme.organization.id, personId: owner.user.id, name: 'Claude Desktop Assistant', publicUrl });
  const heldForApp = await h.request({ method: 'POST', url: '/api/v1/tasks', token: app.token, payload: { title: 'review the app’s launch plan' } });
  expect(heldForApp.statusCode, heldForApp.body).toBe(202);
  appReviewId = json(heldForApp).review.id;
  decisionToken = (await issueDecisionLinks(h.db, acme.organization.id, appReviewId, [owner.user.id])).get(owner.user.id)!.approve;
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** The console's pages, each with its main heading. */
const pages = () => [
  { path: '/', heading: acme.organization.name },
  { path: '/reviews', heading: 'Review queue' },
  { path: `/reviews/${reviewId}`, heading: 'Review' },
  { path: `/reviews/${appReviewId}`, heading: 'Review' },
  { path: '/agents', heading: 'Agent Command Center' },
  { path: '/policy', heading: 'Policy' },
  { path: '/audit', heading: 'Audit' },
  { path: '/settings/people', heading: 'People' },
  { path: '/settings/notifications', heading: 'Notifications' },
  { path: '/settings/passkeys', heading: 'Passkeys' },
  { path: '/settings/advanced/api-keys', heading: 'API keys' },
  { path: '/settings/advanced/webhooks', heading: 'Webhooks' },
];

/** How far the page scrolls sideways (0 when it fits its width), and the outermost elements that stick out. */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const { document, getComputedStyle } = globalThis as unknown as {
      document: { documentElement: { scrollWidth: number; clientWidth: number }; querySelectorAll(selector: string): Element[] };
      getComputedStyle(element: Element): { overflowX: string };
    };
    interface Element {
      getBoundingClientRect(): { right: number };
      tagName: string;
      className: string;
      parentElement: Element | null;
    }
    const width = document.documentElement.clientWidth;
    const out = (element: Element | null) => element !== null && element.getBoundingClientRect().right > width + 1;
    // An element inside a box that scrolls (or clips) sideways does not widen the page.
    const clipped = (element: Element) => {
      for (let above = element.parentElement; above; above = above.parentElement) if (getComputedStyle(above).overflowX !== 'visible' && !out(above)) return true;
      return false;
    };
    const culprits = [...document.querySelectorAll('body *')]
      .filter((element) => out(element) && !out(element.parentElement) && !clipped(element))
      .map((element) => `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).trim().replace(/ +/g, '.')}` : ''}`);
    return { by: document.documentElement.scrollWidth - width, culprits };
  });

/** Waits until nothing on the page says it is still loading. */
async function settled(page: Page) {
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached', timeout: 10_000 }).catch(() => undefined);
}

describe.each([
  { width: 1280, height: 1000, name: 'desktop' },
  { width: 390, height: 844, name: 'phone' },
])('every page at a $name width ($width px)', ({ width, height }) => {
  let page: Page;

  beforeAll(async () => {
    page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: owner.email, password: owner.password }, pageErrors, { viewport: { width, height } });
  });

  afterAll(async () => {
    await page?.context().close();
  });

  it('opens each of the console’s pages with no serious or critical axe violation, fitting the width', async () => {
    const found: Record<string, string[]> = {};
    for (const { path, heading } of pages()) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
      await settled(page);
      const violations = await accessibilityViolations(page);
      const sideways = await overflow(page);
      if (violations.length || sideways.by > 0) found[path] = [...violations, ...(sideways.by > 0 ? [`scrolls ${sideways.by} px sideways: ${sideways.culprits.join(', ')}`] : [])];
    }
    expect(found).toEqual({});
  });

  it('opens a decision link’s page, outside the console’s frame, the same way', async () => {
    await page.goto(`${origin}/decide#${decisionToken}`);
    // The page says "Decision link" while it reads the link, then asks the question.
    await page.getByRole('heading', { level: 1, name: /^Approve this .*\?$/ }).waitFor();
    await settled(page);
    await page.getByText('unverified app name').waitFor();
    await screenshot(page, `decision-link-unverified-app-${width}`);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect((await overflow(page)).by).toBeLessThanOrEqual(0);
  });
});

describe('the pages', () => {
  it('threw no script error', () => {
    expect(pageErrors).toEqual([]);
  });
});
