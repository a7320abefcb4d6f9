import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerSlackLink } from '../../domain/notify/slack-links';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// Slack's buttons in the console, in Chromium against the real api and PostgreSQL: an owner gives the organization's
// Slack app its signing secret (never shown back) and copies the Request URL; a reviewer who pressed in Slack opens
// the one-time link, signs in on the way, confirms by name that the Slack user is them, and later unlinks it.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let owner: TestPerson;
let reviewer: TestPerson;
const pageErrors: string[] = [];
const secret = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner', 'olivia@acme.test');
  reviewer = await addPerson(h.db, acme.organization, 'reviewer', 'rita@acme.test');
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** A new page at `path`, through the sign-in page it is sent to, as the person; each request's address is kept in `addresses`. */
async function signedInAt(path: string, person: TestPerson, viewport = { width: 1280, height: 1000 }, addresses: string[] = []): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('request', (request) => addresses.push(request.url()));
  await page.goto(`${origin}${path}`);
  await page.getByLabel('Organization').fill(acme.organization.slug);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  return page;
}

const slackApp = (page: Page) => page.getByRole('region', { name: 'Slack buttons' });
const stored = async () => (await h.db.query('SELECT signing_secret, team_id FROM slack_apps WHERE org_id = $1', [acme.organization.id])).rows[0];

describe('Settings → Notifications: Slack buttons', () => {
  it('an owner sets the signing secret and the workspace, sees the Request URL, and never sees the secret again', async () => {
    const page = await signedInAt('/settings/notifications', owner);
    await slackApp(page).waitFor();
    await slackApp(page).getByText(`http://gatehouse.test/slack/interactions/${acme.organization.id}`).waitFor();
    await slackApp(page).getByText('Not set: presses are refused.').waitFor();

    await page.getByLabel('Workspace id').fill('not a team');
    await page.getByRole('button', { name: 'Save the Slack app' }).click();
    await slackApp(page).getByText('a Slack id such as T0123ABCD').waitFor();
    expect(await stored()).toBeUndefined();

    await page.getByLabel('Signing secret').fill(secret);
    await page.getByLabel('Workspace id').fill('T0ACME');
    await page.getByRole('button', { name: 'Save the Slack app' }).click();
    await slackApp(page).getByRole('status').getByText('Saved.').waitFor();
    // Kept sealed (SECRETS_ENCRYPTION_KEYS), for this organization's row only.
    const row = await stored();
    expect(row.team_id).toBe('T0ACME');
    expect(row.signing_secret).toMatch(/^sealed:v1:test:/);
    expect(h.secrets.open(row.signing_secret, `slack_apps.signing_secret:${acme.organization.id}`)).toBe(secret);
    expect(await page.getByLabel('Signing secret').inputValue()).toBe('');

    await page.reload();
    await slackApp(page).getByText('Set. It is never shown again').waitFor();
    await slackApp(page).getByText('Changing or removing it unlinks every Slack user of the organization').waitFor();
    expect(await page.getByLabel('Workspace id').inputValue()).toBe('T0ACME');
    expect(await page.content()).not.toContain(secret);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'slack-settings');
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("a reviewer opens a press's one-time link, signs in on the way, confirms by name that the Slack user is them, and unlinks it later", async () => {
    const offer = await offerSlackLink(h.db, acme.organization.id, { teamId: 'T0ACME', userId: 'U0RITA', teamDomain: 'acme-hq', userName: 'rita' });
    // At a phone's width: the link is opened from Slack, often on a phone. Its secret is in the fragment, carried
    // in the page through the sign-in, and sent in the bodies of the page's calls only.
    const addresses: string[] = [];
    const page = await signedInAt(`/slack/link#${offer.token}`, reviewer, { width: 390, height: 844 }, addresses);

    await page.getByRole('heading', { level: 1, name: 'Link your Slack' }).waitFor();
    // Before anything else, a warning that reads as one: the link may have been sent by someone else.
    const warning = page.getByRole('alert');
    expect(await warning.innerText()).toBe(
      'Confirm only a link you got yourself by pressing a button in Slack just now. If someone sent you this link, do not confirm: whoever holds that Slack user would approve and deny as you.',
    );
    expect(await warning.evaluate((element) => element.ownerDocument.defaultView!.getComputedStyle(element).borderLeftWidth)).toBe('4px');
    // Who pressed, by the names Slack's signed press gave and by Slack's ids: a forwarded offer is visibly someone else's.
    const question = page.getByText('Link Slack user @rita in workspace acme-hq');
    await question.waitFor();
    expect(await question.innerText()).toBe('Link Slack user @rita in workspace acme-hq (Slack ids U0RITA in T0ACME) to you (rita@acme.test) in Acme Inc.?');
    expect(page.url()).toBe(`${origin}/slack/link`);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'slack-link-confirm-phone');
    await page.getByRole('button', { name: 'Yes, Slack user @rita in acme-hq is me' }).click();
    await page.getByRole('status').getByText('Linked: Slack user @rita in workspace acme-hq is you').waitFor();
    const links = async () => (await h.db.query('SELECT user_id, slack_user_name, slack_team_domain FROM slack_links WHERE org_id = $1', [acme.organization.id])).rows;
    expect(await links()).toEqual([{ user_id: reviewer.user.id, slack_user_name: 'rita', slack_team_domain: 'acme-hq' }]);
    for (const address of addresses) expect(address).not.toContain(offer.token);

    // The link is spent: opened again, it says so.
    await page.goto(`${origin}/slack/link#${offer.token}`);
    await page.getByRole('alert').getByText('This Slack link has expired, was used already, or is for another organization').waitFor();

    // A link in the older form (the secret in the path), signed in: moved out of the address at once, and it works.
    const older = await offerSlackLink(h.db, acme.organization.id, { teamId: 'T0ACME', userId: 'U0RITA2', teamDomain: 'acme-hq', userName: 'rita.two' });
    await page.goto(`${origin}/slack/link/${older.token}`);
    await page.getByRole('button', { name: 'Yes, Slack user @rita.two in acme-hq is me' }).waitFor();
    expect(page.url()).toBe(`${origin}/slack/link`);

    await page.goto(`${origin}/settings/notifications`);
    const yours = page.getByRole('region', { name: 'Your Slack' });
    await yours.getByText('Slack user @rita in workspace acme-hq').waitFor();
    await yours.getByRole('button', { name: 'Unlink Slack user @rita' }).click();
    await yours.getByRole('button', { name: 'Unlink: its presses stop counting as yours' }).click();
    await yours.getByText('No Slack user is linked to you.').waitFor();
    expect(await links()).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
