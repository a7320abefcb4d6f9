import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseToken } from '../../domain/identity/tokens';
import { accessibilityViolations, launchChromium, signedInConsole, chartDescription as descriptionOf, chartFigures as figures } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The Agent Command Center's pictures in Chromium against the real api, worker, Temporal and PostgreSQL: the calls
// over time (stacked by how they ended, for every key or one, by the hour or the day) and one key's recent run on a
// time line, each drawn from a known sequence of calls, each with its text equivalent (a name, a sentence, a table),
// each moving live as agents call.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let admin: TestPerson;
let adminApi: ConsoleSession;
let page: Page;
let narrowToken: string;
const pageErrors: string[] = [];

const agentLabel = 'test agent';
const narrowLabel = 'narrow tasks.read';

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  admin = await addPerson(h.db, acme.organization, 'admin');
  adminApi = await signIn(h.app, acme.organization, admin);
  narrowToken = await acme.keyWith(['tasks.read'], 'read');
  origin = await h.listen();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const keyIdOf = (token: string) => parseToken(token)!.id;
const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) => h.request({ method, url, token, payload });

/** Waits until the call log holds `count` calls of the organization's agents (it is written off the request path). */
async function logged(count: number) {
  await expect
    .poll(async () => (await h.db.query(`SELECT count(*)::int AS n FROM call_log WHERE org_id = $1 AND interface IN ('rest', 'mcp')`, [acme.organization.id])).rows[0].n)
    .toBe(count);
}

const outcomes = ['ok', 'applied', 'held', 'denied', 'refused', 'error'] as const;
type Bucket = { start: string; calls: number } & Record<(typeof outcomes)[number], number>;

async function activity(query: string): Promise<Bucket[]> {
  return json(await adminApi.request({ method: 'GET', url: `/console/api/v1/agents/activity?${query}` })).data.buckets;
}

/** The rows of a bar chart's table as numbers by outcome, summed over its bars. */
function summed(rows: string[][]): Record<string, number> {
  const [head, ...body] = rows;
  const names = head!.slice(1);
  return Object.fromEntries(names.map((name, index) => [name, body.reduce((sum, row) => sum + Number(row[index + 1]), 0)]));
}

/** Every outcome's count over the buckets the API answered, named as the chart's table names them. */
function apiTotals(buckets: Bucket[]): Record<string, number> {
  const names: Record<string, string> = { ok: 'OK (reads)', applied: 'Applied', held: 'Held', denied: 'Denied', refused: 'Refused', error: 'Error' };
  return Object.fromEntries(outcomes.map((outcome) => [names[outcome], buckets.reduce((sum, bucket) => sum + bucket[outcome], 0)]));
}

/** A picture for the README of the page's part from the first region's top to the last one's bottom. */
async function pictureOf(name: string, first: Locator, last: Locator) {
  const folder = process.env.SCREENSHOTS;
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  const box = (region: Locator) =>
    region.evaluate((element) => {
      const { left, top, right, bottom } = element.getBoundingClientRect();
      const { scrollX, scrollY } = globalThis as unknown as { scrollX: number; scrollY: number };
      return { left: left + scrollX, top: top + scrollY, right: right + scrollX, bottom: bottom + scrollY };
    });
  const [from, to] = [await box(first), await box(last)];
  const margin = 16;
  await first.page().screenshot({
    path: join(folder, `${name}.png`),
    fullPage: true,
    clip: { x: Math.max(0, from.left - margin), y: Math.max(0, from.top - margin), width: to.right - from.left + 2 * margin, height: to.bottom - from.top + 2 * margin },
  });
}

/** A day of an agent's work before the test, for the README's picture: calls in each of the last 23 hours. */
async function earlierDay() {
  const keys = [keyIdOf(acme.readWriteToken), keyIdOf(narrowToken)];
  for (let hoursAgo = 23; hoursAgo >= 1; hoursAgo--) {
    // A working day's shape: busy in the middle, quiet at the ends.
    const busy = Math.round(12 * Math.sin((Math.PI * (24 - hoursAgo)) / 24) ** 2) + 1;
    const at = new Date(Date.now() - hoursAgo * 3600_000);
    const plan: [string, number, string][] = [
      ['ok', 200, 'tasks.list'],
      ...(hoursAgo % 3 === 0 ? [['applied', 201, 'tasks.create'] as [string, number, string]] : []),
      ...(hoursAgo % 4 === 1 ? [['pending_review', 202, 'tasks.update'] as [string, number, string]] : []),
      ...(hoursAgo % 7 === 2 ? [['policy_denied', 403, 'tasks.create'] as [string, number, string]] : []),
      ...(hoursAgo % 9 === 4 ? [['not_found', 404, 'tasks.get'] as [string, number, string]] : []),
    ];
    for (const [index, [outcome, status, operation]] of plan.entries()) {
      const count = index === 0 ? busy : 1 + (hoursAgo % 2);
      for (let n = 0; n < count; n++) {
        await h.db.query(
          `INSERT INTO call_log (id, org_id, api_key_id, user_id, interface, operation, tool, status, outcome, latency_ms, created_at)
           VALUES ($1, $2, $3, NULL, 'rest', $4, NULL, $5, $6, 12, $7)`,
          [`call_earlier_${hoursAgo}_${index}_${n}`, acme.organization.id, keys[n % 2], operation, status, outcome, new Date(at.getTime() - n * 60_000)],
        );
      }
    }
  }
}

const activityFigure = () => page.getByRole('region', { name: 'Calls over time' }).getByRole('figure');
const runFigure = () => page.getByRole('region', { name: "One agent's run" }).getByRole('figure');

describe("the Agent Command Center's charts", () => {
  it('draw the calls of a known sequence over the last 24 hours, stacked by how they ended, with a name, a sentence and a table', async () => {
    // The known sequence: the test agent reads twice, writes once (applied), once held, once denied; the narrow key reads once.
    expect((await call(acme.readWriteToken, 'GET', '/api/v1/customers')).statusCode).toBe(200);
    expect((await call(acme.readWriteToken, 'GET', '/api/v1/tasks')).statusCode).toBe(200);
    expect((await call(acme.readWriteToken, 'POST', '/api/v1/tasks', { title: 'plain task' })).statusCode).toBe(201);
    expect((await call(acme.readWriteToken, 'POST', '/api/v1/tasks', { title: 'review this task' })).statusCode).toBe(202);
    expect((await call(acme.readWriteToken, 'POST', '/api/v1/tasks', { title: 'deny this task' })).statusCode).toBe(403);
    expect((await call(narrowToken, 'GET', '/api/v1/tasks')).statusCode).toBe(200);
    await logged(6);

    page = await signedInConsole(browser, origin, { slug: acme.organization.slug, ...admin }, pageErrors);
    await page.goto(`${origin}/agents`);
    const figure = activityFigure();
    await figure.waitFor();
    expect(await figure.getAttribute('aria-labelledby')).toBeTruthy();
    await page.getByRole('figure', { name: 'Calls by all keys, the last 24 hours, by the hour' }).waitFor();
    expect(await descriptionOf(figure)).toMatch(/^6 calls by all keys in the last 24 hours: 3 ok, 1 applied, 1 held, 1 denied\. The busiest hour was \S+, with 6\.$/);

    const rows = await figures(figure);
    expect(rows[0]).toEqual(['Hour', 'OK (reads)', 'Applied', 'Held', 'Denied', 'Refused', 'Error']);
    expect(rows).toHaveLength(25);
    const buckets = await activity('range=24h');
    expect(summed(rows)).toEqual(apiTotals(buckets));
    expect(summed(rows)).toEqual({ 'OK (reads)': 3, Applied: 1, Held: 1, Denied: 1, Refused: 0, Error: 0 });
    // Row by row, the table is the API's answer.
    expect(rows.slice(1).map((row) => row.slice(1).map(Number))).toEqual(buckets.map((bucket) => outcomes.map((outcome) => bucket[outcome])));

    // The bars: the busy hour's stack holds each outcome's count, the quiet hours none.
    const busy = buckets.find((bucket) => bucket.calls > 0)!;
    const stack = figure.locator(`g[data-key="${busy.start}"]`);
    expect(await stack.getAttribute('data-total')).toBe(String(busy.calls));
    const drawn = await stack.locator('rect[data-series]').evaluateAll((bars) => bars.map((bar) => [bar.getAttribute('data-series'), Number(bar.getAttribute('data-value'))]));
    expect(Object.fromEntries(drawn)).toEqual(Object.fromEntries(outcomes.filter((outcome) => busy[outcome] > 0).map((outcome) => [outcome, busy[outcome]])));
    expect(await figure.locator('g[data-total="0"] rect').count()).toBe(0);
    expect(await figure.locator('.chart-canvas > svg').getAttribute('aria-hidden')).toBe('true');
  });

  it("shows one key's calls when asked, and the last 7 days by the day", async () => {
    const region = page.getByRole('region', { name: 'Calls over time' });
    await region.getByLabel('Calls of').selectOption({ label: narrowLabel });
    await page.getByRole('figure', { name: `Calls by “${narrowLabel}”, the last 24 hours, by the hour` }).waitFor();
    const narrowRows = await figures(activityFigure());
    expect(summed(narrowRows)).toEqual(apiTotals(await activity(`range=24h&api_key_id=${keyIdOf(narrowToken)}`)));
    expect(summed(narrowRows)['OK (reads)']).toBe(1);
    expect(await descriptionOf(activityFigure())).toMatch(/^1 call by “narrow tasks\.read” in the last 24 hours: 1 ok\./);

    await region.getByLabel('Calls of').selectOption('');
    await region.getByLabel('Period').selectOption('7d');
    await page.getByRole('figure', { name: 'Calls by all keys, the last 7 days, by the day' }).waitFor();
    const week = await figures(activityFigure());
    expect(week[0]![0]).toBe('Day');
    expect(week).toHaveLength(8);
    expect(summed(week)).toEqual(apiTotals(await activity('range=7d')));
  });

  it('moves live when an agent calls', async () => {
    const before = summed(await figures(activityFigure()));
    expect((await call(acme.readWriteToken, 'POST', '/api/v1/tasks', { title: 'deny this one too' })).statusCode).toBe(403);
    await expect.poll(async () => summed(await figures(activityFigure())).Denied, { timeout: 10_000 }).toBe(before.Denied! + 1);
    expect(await descriptionOf(activityFigure())).toMatch(/^7 calls by all keys in the last 7 days: 3 ok, 1 applied, 1 held, 2 denied\./);
  });

  it("draws a chosen key's recent run on a time line, lane by operation, and not another key's", async () => {
    const run = page.getByRole('region', { name: "One agent's run" });
    await page.getByRole('button', { name: `Show run of ${agentLabel}` }).click();
    await page.getByRole('figure', { name: `The last 6 calls of “${agentLabel}”` }).waitFor();
    expect(await page.getByRole('button', { name: `Show run of ${agentLabel}` }).getAttribute('aria-pressed')).toBe('true');
    expect(await run.getByLabel('Run of').inputValue()).toBe(keyIdOf(acme.readWriteToken));

    const agentCalls: { id: string; operation: string; outcome: string }[] = json(
      await adminApi.request({ method: 'GET', url: `/console/api/v1/agents/calls?api_key_id=${keyIdOf(acme.readWriteToken)}` }),
    ).data;
    const narrowCalls: { id: string }[] = json(await adminApi.request({ method: 'GET', url: `/console/api/v1/agents/calls?api_key_id=${keyIdOf(narrowToken)}` })).data;
    expect(agentCalls).toHaveLength(6);
    const marks = await runFigure().locator('rect[data-event]').evaluateAll((bars) => bars.map((bar) => [bar.getAttribute('data-event'), bar.getAttribute('data-series')]));
    expect(Object.fromEntries(marks)).toEqual(Object.fromEntries(agentCalls.map((known) => [known.id, known.outcome])));
    for (const other of narrowCalls) expect(await runFigure().locator(`rect[data-event="${other.id}"]`).count()).toBe(0);

    // The table: oldest first, the operation as the lane, the outcome in words.
    const rows = await figures(runFigure());
    expect(rows[0]).toEqual(['When', 'Operation', 'What', 'Outcome']);
    expect(rows.slice(1).map((row) => [row[1], row[3]])).toEqual(
      [...agentCalls].reverse().map((known) => [known.operation, { ok: 'OK (reads)', applied: 'Applied', held: 'Held', denied: 'Denied' }[known.outcome]]),
    );
    expect(await descriptionOf(runFigure())).toMatch(/^6 calls from .+, over 3 operations: 2 ok, 1 applied, 1 held, 2 denied\.$/);
    const lanes = await runFigure().locator('svg .visx-axis-left text').allTextContents();
    expect(new Set(lanes)).toEqual(new Set(['customers.list', 'tasks.list', 'tasks.create']));

    // Live: the key's next call joins its run.
    expect((await call(acme.readWriteToken, 'GET', '/api/v1/projects')).statusCode).toBe(200);
    await page.getByRole('figure', { name: `The last 7 calls of “${agentLabel}”` }).waitFor({ timeout: 10_000 });
    // Another key's call does not.
    expect((await call(narrowToken, 'GET', '/api/v1/tasks')).statusCode).toBe(200);
    await expect.poll(async () => summed(await figures(activityFigure()))['OK (reads)'], { timeout: 10_000 }).toBe(5);
    expect(await runFigure().locator('rect[data-event]').count()).toBe(7);

    await run.getByLabel('Run of').selectOption({ label: narrowLabel });
    await page.getByRole('figure', { name: `The last 2 calls of “${narrowLabel}”` }).waitFor();
    const narrowNow: { id: string }[] = json(await adminApi.request({ method: 'GET', url: `/console/api/v1/agents/calls?api_key_id=${keyIdOf(narrowToken)}` })).data;
    // A chart draws once its width is measured, a frame after its figure (and its name) is there.
    await expect.poll(() => runFigure().locator('rect[data-event]').count(), { timeout: 10_000 }).toBe(narrowNow.length);
    const narrowMarks = await runFigure().locator('rect[data-event]').evaluateAll((bars) => bars.map((bar) => bar.getAttribute('data-event')));
    expect(narrowMarks.sort()).toEqual(narrowNow.map((known) => known.id).sort());
    for (const known of agentCalls) expect(narrowMarks).not.toContain(known.id);
  });

  it('has no serious or critical accessibility violation at desktop and phone width', async () => {
    await earlierDay();
    await page.reload();
    await page.getByRole('button', { name: `Show run of ${agentLabel}` }).click();
    await page.getByRole('figure', { name: new RegExp(`^The last \\d+ calls of “${agentLabel}”`) }).waitFor();
    await page.getByRole('region', { name: 'Calls over time' }).getByLabel('Period').selectOption('24h');
    await page.getByRole('figure', { name: 'Calls by all keys, the last 24 hours, by the hour' }).waitFor();
    // The tables closed again, as a person first meets them.
    for (const details of await page.locator('details.chart-table[open] summary').all()) await details.click();
    await page.setViewportSize({ width: 1280, height: 1000 });
    expect(await accessibilityViolations(page)).toEqual([]);
    await pictureOf('agent-command-center-charts', page.getByRole('region', { name: 'Calls over time' }), page.getByRole('region', { name: "One agent's run" }));

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('figure', { name: 'Calls by all keys, the last 24 hours, by the hour' }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    // On a phone, the hours are named as often as they fit.
    await expect.poll(async () => activityFigure().locator('svg .visx-axis-bottom text').count()).toBeLessThan(24);
    await page.setViewportSize({ width: 1280, height: 1000 });
    expect(pageErrors).toEqual([]);
  });
});
