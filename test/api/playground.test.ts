import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog as wholeCatalog } from '../../api/catalog';
import { isOfferedOn } from '../../api/catalog/operation';
import { launchChromium } from '../support/browser';
import { addPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';


let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let page: Page;
let origin: string;
const requested: string[] = [];
/** What REST offers, and so the playground shows. */
const catalog = wholeCatalog.filter((operation) => isOfferedOn(operation, 'rest'));
const consoleErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization();
  const created = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'Seen from the playground' } });
  expect(created.statusCode).toBe(201);
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => requested.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  // The playground is for signed-in people: it sends the browser to sign in, and back.
  const person = await addPerson(h.db, acme.organization, 'admin');
  await page.goto(`${origin}/api/docs`);
  await page.getByLabel('Organization').fill(acme.organization.slug);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.opblock').first().waitFor();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Opens an operation, lets `fill` set its inputs, executes it and returns what the page shows of the answer. */
async function tryOperation(operationId: string, family: string, fill?: (block: ReturnType<Page['locator']>) => Promise<void>) {
  const block = page.locator(`#operations-${family}-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await fill?.(block);
  await block.locator('button.execute').click();
  const answer = block.locator('.live-responses-table .response').first();
  await answer.waitFor();
  return {
    status: (await answer.locator('.response-col_status').innerText()).trim(),
    shown: await answer.locator('.response-col_description').innerText(),
  };
}

describe('the playground at /api/docs', () => {
  it('lists every operation of the catalog on both route shapes, grouped by family', async () => {
    for (const family of new Set(catalog.map((operation) => operation.family))) {
      expect(await page.locator(`#operations-tag-${family}`).count(), family).toBe(1);
    }
    for (const operation of catalog) {
      const id = operation.name.replace('.', '_');
      for (const operationId of [id, `${id}_in_organization`]) {
        expect(await page.locator(`#operations-${operation.family}-${operationId}`).count(), operationId).toBe(1);
      }
    }
    expect(await page.locator('.opblock').count()).toBe(catalog.length * 2);
  });

  it("lets a person paste a token and try operations: they see the status, headers and the organization's data", async () => {
    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input').first().fill(acme.readWriteToken);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    const me = await tryOperation('me_get', 'me');
    expect(me.status).toBe('200');
    expect(me.shown).toContain(acme.organization.slug);
    expect(me.shown).toMatch(/content-type: application\/json/i);

    const tasks = await tryOperation('tasks_list', 'tasks', (block) => block.locator('tr[data-param-name="limit"] input').fill('5'));
    expect(tasks.status).toBe('200');
    expect(tasks.shown).toContain('Seen from the playground');
    const curl = await page.locator('#operations-tasks-tasks_list .curl-command').innerText();
    expect(curl).toContain(`${origin}/api/v1/tasks?limit=5`);

    const create = await tryOperation('tasks_create', 'tasks', (block) =>
      block.locator('textarea.body-param__text').fill(JSON.stringify({ title: 'Written from the playground' })),
    );
    expect(create.status).toBe('201');
    expect(create.shown).toMatch(/x-gatehouse-workflow-id/i);
    const listed = json(await h.request({ method: 'GET', url: '/api/v1/tasks', token: acme.readWriteToken })).data;
    expect(listed.map((task: { title: string }) => task.title)).toContain('Written from the playground');

    // For a person to look at: PLAYGROUND_SCREENSHOT=/tmp/playground.png npx vitest run test/api/playground.test.ts
    const screenshot = process.env.PLAYGROUND_SCREENSHOT;
    if (screenshot) {
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: screenshot });
      await page.locator('#operations-me-me_get .live-responses-table').screenshot({ path: screenshot.replace(/(\.png)?$/, '-answer.png') });
    }
  });

  it('loads and calls nothing but its own origin, and the browser refused nothing', () => {
    const elsewhere = requested.filter((url) => /^(https?|wss?):/.test(url) && new URL(url).origin !== origin);
    expect(elsewhere).toEqual([]);
    expect(requested.filter((url) => url.startsWith(`${origin}/api/docs/static/`)).length).toBeGreaterThan(0);
    expect(consoleErrors).toEqual([]);
  });
});
