import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';

// Settings → People with email configured, in Chromium against the real stack: an invite and a password reset say
// that a link was sent to the person, and to whom, and never show it; a link that could not be sent is said so.
// At the desktop width and a phone's.

let h: Harness;
let catcher: MailCatcher;
let browser: Browser;
let origin: string;
let acme: TestOrganization;
let owner: TestPerson;
const pageErrors: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url } });
  acme = await h.createOrganization({ name: 'Acme Mail' });
  owner = await addPerson(h.db, acme.organization, 'owner');
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await catcher?.close();
});

async function peoplePage(width: number): Promise<Page> {
  const page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: owner.email, password: owner.password }, pageErrors);
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${origin}/settings/people`);
  await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
  return page;
}

describe('People, with email configured', () => {
  it('an invite says a link was sent to the person, never shows it; the person’s mailbox has it (1280 px)', async () => {
    const page = await peoplePage(1280);
    await page.getByLabel('Email').fill('nina@acme.test');
    await page.getByLabel('Name (optional)').fill('Nina Newcomer');
    await page.getByLabel('Role', { exact: true }).selectOption('reviewer');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('heading', { name: 'nina@acme.test is invited' }).waitFor();
    await page.getByRole('status').getByText('A link to set a password was sent to nina@acme.test, and to nobody else.', { exact: false }).waitFor();
    expect(await page.getByLabel('Set-password link').count()).toBe(0);
    expect(await page.content()).not.toContain('gate_l_');
    await page.getByRole('row', { name: /Nina Newcomer/ }).getByText('Invited').waitFor();
    expect(await page.getByRole('row', { name: /Nina Newcomer/ }).getByText(/Set up by/).count()).toBe(0);
    expect(linksIn(await catcher.mailTo('nina@acme.test', 'set-password#'), `${publicUrl}/set-password#`)).toHaveLength(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'people-link-sent');
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByRole('heading', { name: 'nina@acme.test is invited' }).count()).resolves.toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('a reset says the same on a phone (390 px)', async () => {
    const person = await addPerson(h.db, acme.organization, 'reviewer', 'otto@acme.test');
    const page = await peoplePage(390);
    await page.getByRole('button', { name: `Reset password of ${person.email}` }).click();
    await page.getByRole('heading', { name: `The password of ${person.email} is reset` }).waitFor();
    await page.getByRole('status').getByText(`A link to set a password was sent to ${person.email}, and to nobody else.`, { exact: false }).waitFor();
    expect(await page.getByLabel('Set-password link').count()).toBe(0);
    await catcher.mailTo(person.email, 'set-password#');
    expect(await accessibilityViolations(page)).toEqual([]);
    const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await screenshot(page, 'people-reset-sent-phone');
    expect(pageErrors).toEqual([]);
  });

  it('a link that could not be sent is said so, with what to do (the last test: the SMTP server goes away)', async () => {
    const page = await peoplePage(1280);
    await catcher.close();
    await page.getByLabel('Email').fill('petra@acme.test');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('alert').getByText(/could not be sent to petra@acme\.test \(the mail server could not be reached\)\. That link was voided: send a new one with Reset password\./).waitFor();
    expect(await page.getByLabel('Set-password link').count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'people-link-unsent');
  });
});
