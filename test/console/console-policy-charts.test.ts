import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, signedInConsole, chartDescription as descriptionOf, chartFigures as figures } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The Policy page's pictures in Chromium against the real api, worker, Temporal and PostgreSQL: how often each rule
// decided a known sequence of writes (moving live as agents write), and how a draft would change the decisions,
// beside the table of them (a dry run, and a draft in shadow); each with its text equivalent.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let owner: TestPerson;
let ownerApi: ConsoleSession;
let page: Page;
const pageErrors: string[] = [];

/** The test policy with the roles changed: "plain…" titles held for review, "review…" titles allowed. */
const plainDraft = `@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("review-plain") @decision("review") @reason("Plain titles now need a look")
permit (principal, action, resource) when { resource has title && resource.title like "plain*" };

@id("deny-when-asked") @reason("The title asks to be denied")
forbid (principal, action, resource) when { resource has title && resource.title like "deny*" };
`;

/** A draft for the shadow: "plain…" titles denied outright. */
const denyPlainDraft = `@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("deny-plain") @reason("Plain titles are not wanted")
forbid (principal, action, resource) when { resource has title && resource.title like "plain*" };
`;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner', 'olivia@acme.test');
  ownerApi = await signIn(h.app, acme.organization, owner);
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const agentWrite = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title } });

/** Each bar's drawn parts: its key, and the value of each series in it. */
async function bars(figure: Locator): Promise<Record<string, Record<string, number>>> {
  const groups = await figure.locator('g[data-key]').evaluateAll((found) =>
    found.map((group) => [
      group.getAttribute('data-key'),
      Object.fromEntries([...group.querySelectorAll('rect[data-series]')].map((bar) => [bar.getAttribute('data-series'), Number(bar.getAttribute('data-value'))])),
    ]),
  );
  return Object.fromEntries(groups);
}

const ruleFigure = () => page.getByRole('region', { name: 'How often each rule decided' }).getByRole('figure');

describe("the Policy page's charts", () => {
  it('draw how often each rule decided a known sequence of writes, with a name, a sentence and a table', async () => {
    const statuses = [];
    for (const title of ['plain one', 'plain two', 'plain three', 'review one', 'review two', 'deny one']) statuses.push((await agentWrite(title)).statusCode);
    expect(statuses).toEqual([201, 201, 201, 202, 202, 403]);

    page = await signedInConsole(browser, origin, { slug: acme.organization.slug, ...owner }, pageErrors);
    await page.goto(`${origin}/policy`);
    await page.getByRole('figure', { name: 'Decisions by rule, the last 7 days' }).waitFor();
    expect(await descriptionOf(ruleFigure())).toBe('6 writes decided in the last 7 days by 3 rules. The busiest, allow-writes, decided 3: 3 allowed.');

    const answer = json(await ownerApi.request({ method: 'GET', url: '/console/api/v1/policy/rule-counts?range=7d' })).data;
    const rows = await figures(ruleFigure());
    expect(rows).toEqual([
      ['Rule', 'Allowed', 'Held for review', 'Denied'],
      ['allow-writes', '3', '0', '0'],
      ['review-when-asked', '0', '2', '0'],
      ['deny-when-asked', '0', '0', '1'],
    ]);
    expect(rows.slice(1)).toEqual(answer.rules.map((rule: { policy_id: string; allow: number; review: number; deny: number }) => [rule.policy_id, String(rule.allow), String(rule.review), String(rule.deny)]));
    expect(await bars(ruleFigure())).toEqual({ 'allow-writes': { allow: 3 }, 'review-when-asked': { review: 2 }, 'deny-when-asked': { deny: 1 } });
    expect(await ruleFigure().locator('.chart-canvas > svg').getAttribute('aria-hidden')).toBe('true');
  });

  it('moves live when a write is decided, and reads another period when asked', async () => {
    expect((await agentWrite('deny two')).statusCode).toBe(403);
    await expect.poll(async () => (await bars(ruleFigure()))['deny-when-asked'], { timeout: 10_000 }).toEqual({ deny: 2 });
    expect(await descriptionOf(ruleFigure())).toMatch(/^7 writes decided in the last 7 days by 3 rules\./);

    // A decision of ten days ago: in the last 30 days, not the last 7.
    await h.db.query(`UPDATE gate_decisions SET created_at = now() - interval '10 days' WHERE id = (SELECT min(id) FROM gate_decisions WHERE org_id = $1)`, [
      acme.organization.id,
    ]);
    await page.getByRole('region', { name: 'How often each rule decided' }).getByLabel('Period', { exact: true }).selectOption('30d');
    await page.getByRole('figure', { name: 'Decisions by rule, the last 30 days' }).waitFor();
    expect((await bars(ruleFigure()))['allow-writes']).toEqual({ allow: 3 });
    await page.getByRole('region', { name: 'How often each rule decided' }).getByLabel('Period', { exact: true }).selectOption('7d');
    await page.getByRole('figure', { name: 'Decisions by rule, the last 7 days' }).waitFor();
    await expect.poll(async () => (await bars(ruleFigure()))['allow-writes']).toEqual({ allow: 2 });
    await page.getByRole('region', { name: 'How often each rule decided' }).getByLabel('Period', { exact: true }).selectOption('30d');
    await page.getByRole('figure', { name: 'Decisions by rule, the last 30 days' }).waitFor();
  });

  it("draws a dry run's changes beside the table of them, as the dry run counts them", async () => {
    const simulated = json(await ownerApi.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: plainDraft, since: '30d' } })).data;
    expect(simulated.changed).toEqual({ 'allow→review': 3, 'review→allow': 2 });

    await page.getByLabel('Draft policy (Cedar)').fill(plainDraft);
    await page.getByLabel('Dry run over the decisions of').selectOption('30d');
    await page.getByRole('button', { name: 'Check and dry-run' }).click();
    const dryRun = page.getByRole('region', { name: /^Dry run over/ });
    const chart = dryRun.getByRole('figure', { name: 'What the draft would change' });
    await chart.waitFor();
    expect(await descriptionOf(chart)).toBe('5 decisions would change: 3 allowed → held, 2 held → allowed.');
    expect(await figures(chart)).toEqual([
      ['Was → would be', 'Would be allowed', 'Would be held for review'],
      ['Allowed → held', '0', '3'],
      ['Held → allowed', '2', '0'],
    ]);
    expect(await bars(chart)).toEqual({ 'allow→review': { review: 3 }, 'review→allow': { allow: 2 } });
    await dryRun.getByRole('table', { name: 'Decisions the draft would change, newest first' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it("draws where a draft in shadow disagreed, and is accessible at desktop and phone width", async () => {
    const started = await ownerApi.request({ method: 'POST', url: '/console/api/v1/policy/shadow', payload: { source: denyPlainDraft } });
    expect(started.statusCode).toBe(200);
    for (const title of ['plain in shadow', 'plain again', 'review in shadow']) await agentWrite(title);
    await page.reload();
    const shadow = page.getByRole('region', { name: 'Shadow' });
    const chart = shadow.getByRole('figure', { name: 'Where the draft in shadow disagreed' });
    await chart.waitFor();
    const reported = json(await ownerApi.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow;
    expect(reported.disagreed).toEqual({ 'allow→deny': 2, 'review→allow': 1 });
    expect(await bars(chart)).toEqual({ 'allow→deny': { deny: 2 }, 'review→allow': { allow: 1 } });
    expect(await descriptionOf(chart)).toBe('3 decisions would change: 2 allowed → denied, 1 held → allowed.');

    await page.getByRole('figure', { name: 'Decisions by rule, the last 7 days' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await ruleFigure().locator('details.chart-table summary').click();
    await page.getByRole('region', { name: 'How often each rule decided' }).scrollIntoViewIfNeeded();
    await screenshotOf(page.getByRole('region', { name: 'How often each rule decided' }), 'policy-rule-chart');
    await ruleFigure().locator('details.chart-table summary').click();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('figure', { name: 'Decisions by rule, the last 7 days' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 1000 });
    expect(pageErrors).toEqual([]);
  });
});

/** The README's picture of one part of the page. */
async function screenshotOf(region: Locator, name: string) {
  if (!process.env.SCREENSHOTS) return;
  mkdirSync(process.env.SCREENSHOTS, { recursive: true });
  await region.screenshot({ path: join(process.env.SCREENSHOTS, `${name}.png`) });
}
