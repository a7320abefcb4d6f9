import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { runCli } from '../support/cli';
import { addPerson } from '../support/console';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// A person's whole journey through the console, in Chromium, against the real api, worker, Temporal and
// PostgreSQL: from the link `gatehouse user create` prints to keys, people, API access and the playground.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let browser: Browser;
let origin: string;
const contexts: BrowserContext[] = [];
const pageErrors: string[] = [];

const ownerEmail = 'olivia@acme.test';
const ownerPassword = 'olivia keeps the gate';

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return page;
}

async function expectAccessible(page: Page) {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** What a REST client with this key gets. */
async function restStatus(token: string, path = '/api/v1/tasks'): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

async function setPassword(page: Page, link: string, password: string) {
  await page.goto(link);
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('The same password again').fill(password);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.getByText('Your password is set').waitFor();
}

async function signIn(page: Page, organization: string, email: string, password: string) {
  await page.getByLabel('Organization').fill(organization);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe("the owner's journey", () => {
  let page: Page;
  let keyToken: string;

  it('sets a password from the link `gatehouse user create` prints, then signs in', async () => {
    const created = await runCli(['user', 'create', '--org', acme.organization.slug, '--email', ownerEmail, '--name', 'Olivia Owner', '--role', 'owner', '--json'], {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      PUBLIC_URL: origin,
    });
    expect(created.code).toBe(0);
    const link: string = created.json.set_password_url;
    expect(link.startsWith(`${origin}/set-password#gate_l_`)).toBe(true);

    page = await newPage();
    await page.goto(link);
    await page.getByText(`For ${ownerEmail} in ${acme.organization.name}`).waitFor();
    expect(page.url()).toBe(`${origin}/set-password`);
    await expectAccessible(page);
    await screenshot(page, 'set-password');
    await setPassword(page, link, ownerPassword);

    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByLabel('Organization').inputValue()).toBe(acme.organization.slug);
    expect(await page.getByLabel('Email').inputValue()).toBe(ownerEmail);
    await expectAccessible(page);
    await screenshot(page, 'sign-in');

    await page.getByLabel('Password').fill(ownerPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: acme.organization.name }).waitFor();
    expect(await page.getByRole('banner').innerText()).toContain('Olivia Owner');
    await expectAccessible(page);
    await screenshot(page, 'overview');

    const used = await newPage();
    await used.goto(link);
    await used.getByRole('alert').getByText('expired or was used already').waitFor();
  });

  it('creates an API key in Settings → Advanced → API Keys; its token, shown once, works over REST until revoked', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Advanced: API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await expectAccessible(page);

    await page.getByLabel('Label').fill('Billing agent');
    await page.getByLabel('Read and write').check();
    const abilities = page.getByRole('group', { name: 'Abilities' });
    for (const box of await abilities.getByRole('checkbox').all()) await box.uncheck();
    await abilities.getByLabel('tasks.read').check();
    await abilities.getByLabel('tasks.write').check();
    await page.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByLabel("The new key's token");
    await shown.waitFor();
    keyToken = (await shown.innerText()).trim();
    expect(keyToken).toMatch(/^gate_k_key_/);
    const row = page.getByRole('row', { name: /Billing agent/ });
    expect(await row.innerText()).toContain(`by ${ownerEmail}`);
    await expectAccessible(page);
    await screenshot(page, 'api-keys');

    expect(await restStatus(keyToken)).toEqual({ status: 200, code: undefined });
    expect((await restStatus(keyToken, '/api/v1/customers')).code).toBe('insufficient_ability');

    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect(page.getByLabel("The new key's token").count()).resolves.toBe(0);
    await row.getByRole('button', { name: 'Revoke Billing agent' }).click();
    await row.getByRole('button', { name: 'Revoke "Billing agent" now' }).click();
    await row.getByText('Revoked').waitFor();
    expect(await restStatus(keyToken)).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('switches API access off: keys are refused, people still sign in; and on again', async () => {
    const toggle = page.getByRole('switch', { name: 'Enable API access for this organization' });
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await page.getByText('Off: every API key and personal token is refused').waitFor();
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    expect(await restStatus(acme.readWriteToken)).toEqual({ status: 403, code: 'api_access_disabled' });

    const another = await newPage();
    await another.goto(`${origin}/`);
    await another.waitForURL(/\/sign-in/);
    await signIn(another, acme.organization.slug, ownerEmail, ownerPassword);
    await another.getByText('Every API key is refused').waitFor();

    await toggle.click();
    await page.getByText('On: API keys work over REST and MCP').waitFor();
    expect((await restStatus(acme.readWriteToken)).status).toBe(200);
  });

  it('invites a member, who sets a password, signs in with that role, and cannot open the key settings', async () => {
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    await page.getByLabel('Email').fill('max@acme.test');
    await page.getByLabel('Name (optional)').fill('Max Member');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = (await page.getByLabel('Set-password link').innerText()).trim();
    expect(link.startsWith(`http://gatehouse.test/set-password#gate_l_`)).toBe(true);
    // No email is configured here: the link came to the owner, and Max is recorded as set up by her.
    await page.getByText('No email is configured, so the link came to you').waitFor();
    await page.getByRole('row', { name: /Max Member/ }).getByText('Invited').waitFor();
    await page.getByRole('row', { name: /Max Member/ }).getByText(`Set up by ${ownerEmail}`).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'people');

    const member = await newPage();
    await setPassword(member, `${origin}/set-password#${link.split('#')[1]}`, 'max reads along');
    await signIn(member, acme.organization.slug, 'max@acme.test', 'max reads along');
    await member.getByRole('heading', { level: 1, name: acme.organization.name }).waitFor();
    expect(await member.getByRole('banner').innerText()).toContain('Member');
    expect(await member.getByRole('link', { name: 'Advanced: API keys' }).count()).toBe(0);
    await member.goto(`${origin}/settings/advanced/api-keys`);
    await member.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
    await expectAccessible(member);

    await page.reload();
    const max = page.getByRole('row', { name: /Max Member/ });
    await max.getByText('Active').waitFor();
    // A role changes when saved, not as the select moves.
    await max.getByLabel('Role of max@acme.test').selectOption('reviewer');
    await max.getByRole('button', { name: 'Save role of max@acme.test' }).click();
    await page.getByText('max@acme.test is now reviewer.').waitFor();
    await member.reload();
    await member.getByRole('banner').getByText('Reviewer').waitFor();
  });

  it('a person of another organization sees none of it', async () => {
    const outsider = await addPerson(h.db, globex.organization, 'owner');
    const other = await newPage();
    await other.goto(`${origin}/settings/advanced/api-keys`);
    await signIn(other, globex.organization.slug, outsider.email, outsider.password);
    await other.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await other.getByRole('row', { name: /test agent/ }).waitFor();
    expect(await other.getByRole('main').innerText()).not.toContain('Billing agent');
    await other.goto(`${origin}/settings/people`);
    await other.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    const shown = await other.getByRole('main').innerText();
    expect(shown).not.toContain(ownerEmail);
    expect(shown).not.toContain('max@acme.test');
  });

  it('opens the API playground only when signed in', async () => {
    const stranger = await newPage();
    await stranger.goto(`${origin}/api/docs`);
    await stranger.waitForURL(`${origin}/sign-in?next=%2Fapi%2Fdocs`);
    await signIn(stranger, acme.organization.slug, ownerEmail, ownerPassword);
    await stranger.waitForURL(/\/api\/docs/);
    await stranger.locator('.opblock').first().waitFor();

    await page.goto(`${origin}/api/docs`);
    await page.locator('.opblock').first().waitFor();
  });

  it('works at a phone’s width', async () => {
    const phone = await newPage({ width: 390, height: 844 });
    await phone.goto(`${origin}/sign-in`);
    await signIn(phone, acme.organization.slug, ownerEmail, ownerPassword);
    await phone.getByRole('heading', { level: 1, name: acme.organization.name }).waitFor();
    const overflow = await phone.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await expectAccessible(phone);
    await screenshot(phone, 'overview-phone');
    await phone.getByRole('link', { name: 'Advanced: API keys' }).click();
    await phone.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await expectAccessible(phone);
  });

  it('works with the keyboard alone', async () => {
    const keys = await newPage();
    await keys.goto(`${origin}/sign-in`);
    await keys.getByLabel('Organization').focus();
    await keys.keyboard.press('Control+A');
    await keys.keyboard.type(acme.organization.slug);
    await keys.keyboard.press('Tab');
    await keys.keyboard.press('Control+A');
    await keys.keyboard.type(ownerEmail);
    await keys.keyboard.press('Tab');
    await keys.keyboard.type(ownerPassword);
    await keys.keyboard.press('Enter');
    await keys.getByRole('heading', { level: 1, name: acme.organization.name }).waitFor();

    // The first stop skips to the content; then the navigation, in order.
    await keys.keyboard.press('Tab');
    expect(await keys.evaluate(() => (globalThis as any).document.activeElement.textContent)).toBe('Skip to content');
    const stops: string[] = [];
    for (let step = 0; step < 10; step++) {
      await keys.keyboard.press('Tab');
      stops.push(await keys.evaluate(() => (globalThis as any).document.activeElement.textContent.trim()));
    }
    expect(stops).toEqual(['Sign out', 'Overview', 'Review queue', 'Agent Command Center', 'Policy', 'Audit', 'API playground', 'People', 'Notifications', 'Advanced: API keys']);

    await keys.keyboard.press('Enter');
    await keys.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    const toggle = keys.getByRole('switch', { name: 'Enable API access for this organization' });
    await toggle.focus();
    await keys.keyboard.press('Space');
    await keys.getByText('Off: every API key and personal token is refused').waitFor();
    await keys.keyboard.press('Space');
    await keys.getByText('On: API keys work over REST and MCP').waitFor();
  });

  it('signs out: the session ends and the pages ask to sign in again', async () => {
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.goto(`${origin}/settings/people`);
    await page.waitForURL(/\/sign-in\?next=%2Fsettings%2Fpeople/);
  });
});

describe('another site', () => {
  let attacker: Server;
  let attackerOrigin: string;

  beforeAll(async () => {
    attacker = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(`<!doctype html><title>Win a prize</title>
        <form id="f" method="POST" action="${origin}/console/api/v1/organization" enctype="text/plain">
          <input name='{"api_access": false, "x": "' value='"}'>
        </form>
        <iframe id="frame" src="${origin}/settings/advanced/api-keys"></iframe>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
    attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => attacker.close(() => resolve())));

  it('can neither change settings with a cross-site request nor frame the console', async () => {
    const victim = await newPage();
    await victim.goto(`${origin}/sign-in`);
    await signIn(victim, acme.organization.slug, ownerEmail, ownerPassword);
    await victim.getByRole('heading', { level: 1, name: acme.organization.name }).waitFor();

    const blocked: string[] = [];
    victim.on('console', (message) => blocked.push(message.text()));
    await victim.goto(attackerOrigin);
    // Framed, the console would show at least its sign-in page (the Strict cookie stays home); the browser shows nothing of it.
    const framed = await victim.frameLocator('#frame').locator('body').innerText({ timeout: 2_000 }).catch(() => '');
    expect(framed).not.toContain('Gatehouse');
    expect(framed).not.toContain('API keys');

    const forged = await victim.evaluate(async (target) => {
      try {
        const response = await fetch(`${target}/console/api/v1/organization`, {
          method: 'PATCH',
          credentials: 'include',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_access: false }),
        });
        return response.status;
      } catch {
        return 'blocked';
      }
    }, origin);
    expect(forged).toBe('blocked');

    const [answer] = await Promise.all([victim.waitForResponse(`${origin}/console/api/v1/organization`), victim.locator('#f').evaluate((form) => (form as any).submit())]);
    expect([401, 403, 415]).toContain(answer.status());

    const { rows } = await h.db.query('SELECT api_access FROM organizations WHERE id = $1', [acme.organization.id]);
    expect(rows[0].api_access).toBe(true);
  });

  it('left no script errors on any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
