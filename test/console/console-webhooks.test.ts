import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { createPersonalToken } from '../../domain/identity/people';
import { addPerson, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { startReceiver, type Received, type Receiver } from '../support/receiver';

// The console's Webhooks page in Chromium against the real api, worker, outbox relay, Temporal and PostgreSQL: an
// owner adds an endpoint (a receiver on loopback), keeps its secret, sees an agent's write arrive signed with it,
// reads the delivery log, redelivers, switches the endpoint off and deletes it; the owners' email about an endpoint
// the service switched off leads to this page; members and reviewers are not offered the page.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let receiver: Receiver;
let catcher: MailCatcher;
let owner: TestPerson;
let page: Page;
let hookUrl: string;
let secret: string;
let eventId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher();
  // One delivery failing all its attempts switches an endpoint off, and the owners are emailed.
  h = await startHarness({ webhooks: { smtpUrl: catcher.url, disableAfter: 1 } });
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner', 'olivia@acme.test');
  receiver = await startReceiver();
  hookUrl = `${receiver.url}/hook`;
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(owner);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await h?.close();
  await catcher?.close();
});

const signedInPage = (person: TestPerson): Promise<Page> =>
  signedInConsole(browser, origin, { slug: acme.organization.slug, ...person }, pageErrors, { permissions: ['clipboard-read', 'clipboard-write'] });

const endpointRow = () => page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row', { name: /Ops alerts/ });
const log = () => page.getByRole('region', { name: 'Delivery log' });
const logRows = () => log().getByRole('table', { name: `Deliveries to ${hookUrl}, newest first` }).locator('tbody tr');
const activeElement = (on = page) => on.evaluate(() => (globalThis as any).document.activeElement?.textContent?.trim() ?? '');
const endpointsInDatabase = async () =>
  (await h.db.query('SELECT url, enabled, disabled_reason FROM webhook_endpoints WHERE org_id = $1', [acme.organization.id])).rows;

/** The event a request carries, once its Standard Webhooks signature is checked with the secret. */
function verified(request: Received): { type: string; data: Record<string, any> } {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { type: string; data: Record<string, any> };
}

const agentWrite = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title } });

describe('the Webhooks page', () => {
  it('is offered to an owner under Settings; a URL that is not public is refused by its field, and nothing is added', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Advanced: Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet.').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.getByLabel('URL').fill('https://10.0.0.1/hook');
    await page.getByRole('checkbox', { name: 'write.applied' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const problem = page.locator('#endpoint-url-problem');
    await problem.waitFor();
    expect(await problem.innerText()).toMatch(/10\.0\.0\.1 is a private address, not a public one/);
    const url = page.getByLabel('URL');
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect((await url.getAttribute('aria-describedby'))?.split(' ')).toContain('endpoint-url-problem');
    // The keyboard is taken to the field that says what is wrong.
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe('endpoint-url');
    expect(await endpointsInDatabase()).toEqual([]);
    await page.getByText('No endpoints yet.').waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('adds an endpoint for write.applied and shows its signing secret once; an agent\'s write arrives signed with it', async () => {
    await page.getByLabel('URL').fill(hookUrl);
    await page.getByLabel('Description (optional)').fill('Ops alerts');
    await page.getByRole('checkbox', { name: 'write.applied' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();

    const shown = page.getByLabel("The new endpoint's signing secret");
    await shown.waitFor();
    secret = (await shown.innerText()).trim();
    expect(secret).toMatch(/^whsec_/);
    expect(await page.getByRole('region', { name: `Endpoint ${hookUrl} added` }).innerText()).toContain('new Webhook(secret).verify(body, headers)');
    expect(await page.getByLabel('URL').getAttribute('aria-invalid')).toBeNull();
    const row = endpointRow();
    expect(await row.innerText()).toMatch(new RegExp(`${hookUrl}[\\s\\S]*write\\.applied[\\s\\S]*On\\s+0`));
    expect(await endpointsInDatabase()).toEqual([{ url: hookUrl, enabled: true, disabled_reason: null }]);
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);

    expect((await agentWrite('Order more paper')).statusCode).toBe(201);
    const [request] = await receiver.waitFor(1);
    expect(verified(request!)).toMatchObject({ type: 'write.applied', data: { operation: 'tasks.create', resource_type: 'Task' } });
    eventId = request!.headers['webhook-id'] as string;
  });

  it('shows the delivery in its log as delivered; a redelivery sends the same webhook-id again', async () => {
    // By keyboard: the log opens with the focus on its heading, and closes back to its button.
    await endpointRow().getByRole('button', { name: `Delivery log of ${hookUrl}` }).focus();
    await page.keyboard.press('Enter');
    await log().waitFor();
    expect(await activeElement()).toBe('Delivery log');
    expect(await endpointRow().getByRole('button', { name: `Delivery log of ${hookUrl}` }).getAttribute('aria-expanded')).toBe('true');

    await expect.poll(async () => logRows().allInnerTexts(), { timeout: 10_000 }).toEqual([
      expect.stringMatching(new RegExp(`write\\.applied\\s+${eventId}\\s+Delivered[\\s\\S]*\\s1\\s+204\\s+—`)),
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);

    await log().getByRole('button', { name: `Redeliver write.applied ${eventId}` }).click();
    await log().getByRole('status').getByText('is being sent again').waitFor();
    const [, again] = await receiver.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(eventId);
    expect(verified(again!).type).toBe('write.applied');
    await expect.poll(async () => logRows().allInnerTexts(), { timeout: 10_000 }).toEqual([
      expect.stringMatching(/Delivered[\s\S]*Redelivery[\s\S]*\s1\s+204/),
      expect.stringMatching(/Delivered/),
    ]);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'webhooks');

    await log().getByRole('button', { name: 'Close the log' }).click();
    await log().waitFor({ state: 'detached' });
    expect(await activeElement()).toBe('Delivery log');
    expect(await endpointRow().getByRole('button', { name: `Delivery log of ${hookUrl}` }).getAttribute('aria-expanded')).toBe('false');
  });

  it('pages the log: the newest deliveries first, older ones on request', async () => {
    for (let count = 0; count < 20; count++) expect((await agentWrite(`Task ${count}`)).statusCode).toBe(201);
    await receiver.waitFor(22);
    await endpointRow().getByRole('button', { name: `Delivery log of ${hookUrl}` }).click();
    await expect.poll(async () => logRows().count()).toBe(20);
    await expect.poll(async () => (await logRows().allInnerTexts()).every((text) => text.includes('Delivered')), { timeout: 10_000 }).toBe(true);
    await log().getByRole('button', { name: 'Show older deliveries' }).click();
    await expect.poll(async () => logRows().count()).toBe(22);
    expect(await log().getByRole('button', { name: 'Show older deliveries' }).count()).toBe(0);
    // The first delivery and its redelivery, oldest, at the bottom.
    expect((await logRows().allInnerTexts()).slice(-2).every((text) => text.includes(eventId))).toBe(true);
  });

  it('switches the endpoint off (saying so, and why); a redelivery to it is refused with the reason; then deletes it', async () => {
    await endpointRow().getByRole('button', { name: `Switch off ${hookUrl}` }).click();
    await page.getByRole('status').getByText(`${hookUrl} is switched off`).waitFor();
    expect(await endpointRow().innerText()).toMatch(/Off\s+Switched off by a person/);
    await endpointRow().getByRole('button', { name: `Switch on ${hookUrl}` }).waitFor();
    expect(await endpointsInDatabase()).toEqual([{ url: hookUrl, enabled: false, disabled_reason: 'Switched off by a person' }]);

    const before = receiver.received.length;
    await log().getByRole('button', { name: `Redeliver write.applied ${eventId}` }).last().click();
    await log().getByRole('alert').getByText('The endpoint is switched off: switch it on before redelivering').waitFor();
    expect(receiver.received.length).toBe(before);
    expect(await accessibilityViolations(page)).toEqual([]);

    await endpointRow().getByRole('button', { name: `Delete ${hookUrl}` }).click();
    await endpointRow().getByRole('button', { name: 'Delete it and its log' }).click();
    await page.getByRole('status').getByText(`${hookUrl} is deleted, with its delivery log.`).waitFor();
    await page.getByText('No endpoints yet.').waitFor();
    expect(await log().count()).toBe(0);
    expect(await endpointsInDatabase()).toEqual([]);
  });

  it("the owners' email about an endpoint switched off after failing leads a signed-in owner to it on this page", async () => {
    const failing = await startReceiver();
    try {
      failing.answerWith(500, 500, 500);
      const token = (await createPersonalToken(h.db, owner.user)).token;
      const created = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token, payload: { url: `${failing.url}/down`, event_types: ['write.applied'] } });
      expect(created.statusCode, created.body).toBe(200);
      const endpointId = json(created).data.endpoint.id as string;
      expect((await agentWrite('Water the plants')).statusCode).toBe(201);

      const mail = await catcher.mailTo(owner.email, endpointId, 20_000);
      const [link, ...others] = linksIn(mail, publicUrl);
      expect(others).toEqual([]);
      // The link on the console this test serves (the email names the public URL, which nothing here answers).
      const { pathname, search, hash } = new URL(link!);
      await page.goto(`${origin}${pathname}${search}${hash}`);
      const heading = page.getByRole('heading', { level: 1 });
      await heading.waitFor();
      // Not "No such page", nor "Not for your role".
      expect(await heading.innerText()).toBe('Webhooks');
      const row = page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row', { name: new RegExp(`${failing.url}/down`) });
      expect(await row.innerText()).toMatch(/Off\s+Switched off by Gatehouse: \d+ deliveries in a row failed/);
      await row.getByRole('button', { name: `Switch on ${failing.url}/down` }).waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  it('is not offered to a member or a reviewer, and says so at its address', async () => {
    for (const role of ['member', 'reviewer'] as const) {
      const other = await signedInPage(await addPerson(h.db, acme.organization, role));
      expect(await other.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Advanced: Webhooks' }).count()).toBe(0);
      await other.goto(`${origin}/settings/advanced/webhooks`);
      await other.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
      await other.context().close();
    }
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
