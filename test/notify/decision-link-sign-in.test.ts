import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';

// An Approve link of an organization that asks for the person signed in ("signed in as that person", what new
// organizations get), in Chromium against the real api, worker, Temporal and PostgreSQL, at a desktop's and a
// phone's width: the page says what the link needs before anyone taps; nobody signed in is offered "Sign in as
// <the link's person>" and comes back to the link after signing in, the fragment kept, to decide in one tap;
// someone else signed in is told whom the link is for.

let h: Harness;
let catcher: MailCatcher;
let browser: Browser;
let origin: string;
let acme: TestOrganization;
let rita: TestPerson;
let sam: TestPerson;
const pageErrors: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url } });
  origin = await h.listen();
  browser = await launchChromium();
  // A new organization: Approve links need the person signed in.
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  rita = await addPerson(h.db, acme.organization, 'reviewer', 'rita@acme.test');
  sam = await addPerson(h.db, acme.organization, 'reviewer', 'sam@acme.test');
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await catcher?.close();
});

async function approveLinkFor(title: string): Promise<{ reviewId: string; approve: string }> {
  const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title } });
  expect(held.statusCode, held.body).toBe(202);
  const reviewId = json(held).review.id as string;
  const [approve] = linksIn(await catcher.mailTo(rita.email, reviewId), `${publicUrl}/decide#`).map((link) => link.slice(`${publicUrl}/decide#`.length));
  return { reviewId, approve: approve! };
}

const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

const written = async (title: string) => (await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, title])).rowCount;

/** Signs in on the sign-in page the link sent the person to: the organization and the email are filled in already. */
async function signInThere(page: Page, person: TestPerson) {
  await page.getByRole('heading', { level: 1, name: 'Sign in to Gatehouse' }).waitFor();
  expect(await page.getByLabel('Organization').inputValue()).toBe(acme.organization.slug);
  expect(await page.getByLabel('Email').inputValue()).toBe(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('an Approve link that needs its person signed in', () => {
  it('at a desktop’s width, nobody signed in: the page says so, sends the person to sign in as themselves, and back to decide in one tap', async () => {
    const title = 'review the desktop approval';
    const { reviewId, approve } = await approveLinkFor(title);
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const addresses: string[] = [];
    page.on('request', (request) => addresses.push(request.url()));
    await page.goto(`${origin}/decide#${approve}`);

    await page.getByRole('heading', { level: 1, name: 'Approve this write?' }).waitFor();
    const needs = page.getByText(`Approving from this link needs you signed in as ${rita.email}`);
    await needs.waitFor();
    expect(await page.getByRole('button', { name: 'Approve this write' }).count()).toBe(0);
    const signInAs = page.getByRole('button', { name: `Sign in as ${rita.email}` });
    await signInAs.waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-sign-in-needed');

    await signInAs.click();
    await signInThere(page, rita);
    const button = page.getByRole('button', { name: 'Approve this write' });
    await button.waitFor();
    // Back at the link, the token in the fragment as it was.
    expect(page.url()).toBe(`${origin}/decide#${approve}`);
    await page.getByText(`You are deciding as ${rita.email}`).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-signed-in');
    await button.click();
    await page.getByRole('heading', { level: 2, name: 'Approved and applied' }).waitFor({ timeout: 30_000 });
    expect(await written(title)).toBe(1);
    expect((await h.db.query('SELECT decided_by, decided_via FROM reviews WHERE id = $1', [reviewId])).rows[0]).toEqual({ decided_by: rita.user.id, decided_via: 'link' });
    // Through the sign-in and back, the token was in no address the browser asked for.
    for (const address of addresses) expect(address).not.toContain(approve);
    await context.close();
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('at a phone’s width, signed in as someone else: the page names whom the link is for, and switches to that person', async () => {
    const title = 'review the phone approval';
    const { approve } = await approveLinkFor(title);
    const page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: sam.email, password: sam.password }, pageErrors, {
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    await page.goto(`${origin}/decide#${approve}`);
    await page.getByRole('heading', { level: 1, name: 'Approve this write?' }).waitFor();
    await page.getByText(`This link is for ${rita.email}. You are signed in as ${sam.email}`).waitFor();
    expect(await page.getByRole('button', { name: 'Approve this write' }).count()).toBe(0);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-someone-else-phone');

    await page.getByRole('button', { name: `Sign in as ${rita.email}` }).click();
    await signInThere(page, rita);
    const button = page.getByRole('button', { name: 'Approve this write' });
    await button.waitFor();
    expect(page.url()).toBe(`${origin}/decide#${approve}`);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'decision-link-signed-in-phone');
    await button.click();
    await page.getByRole('heading', { level: 2, name: 'Approved and applied' }).waitFor({ timeout: 30_000 });
    expect(await written(title)).toBe(1);
    await page.context().close();
    expect(pageErrors).toEqual([]);
  }, 90_000);
});
