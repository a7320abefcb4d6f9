import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// A held changeset in the console, in Chromium: one card listing every item; a reviewer rejects one item of a
// divisible changeset with a reason and approves the rest, which are applied together; a reviewer edits one item and
// approves, and the edited item is applied with the rest.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
const pageErrors: string[] = [];

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

async function submitChangeset(body: object) {
  const response = await fetch(`${origin}/api/v1/changesets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('a held changeset in the review queue', () => {
  it('is one card with every item; rejecting one item of a divisible changeset applies the others together', async () => {
    const held = await submitChangeset({
      mode: 'divisible',
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Acme rollout' } },
        { operation: 'tasks.create', input: { title: 'review the Acme contract', project_id: '$ref:proj' } },
        { operation: 'tasks.create', input: { title: 'Order the cake' } },
      ],
    });
    expect(held.status).toBe(202);
    const page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: reviewer.email, password: reviewer.password }, pageErrors);
    await page.goto(`${origin}/reviews`);
    const card = page.locator('article.review', { hasText: 'changesets.submit' });
    await card.waitFor();
    await expect.poll(() => card.locator('.changeset-items > li').count()).toBe(3);
    expect(await card.textContent()).toContain('A changeset of 3 writes, divisible');
    expect(await card.locator('[data-item-index="1"]').textContent()).toContain('Held: The title asks for a review');
    // Items are numbered from 1 on the card, and so is the reason naming the held one.
    expect(await card.textContent()).toContain('Why it was held: item 2 (tasks.create): The title asks for a review');
    // The task's project is the one item 1 makes: named so, not by the id it is only proposed under.
    const projectRow = card.locator('[data-item-index="1"] tr', { has: page.locator('th', { hasText: /^project_id$/ }) });
    expect(await projectRow.locator('td').textContent()).toBe('project made by item 1 (proj)');
    const proposedProjectId = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${held.body.review.id}`, token: acme.reviewerToken })).data.changeset.items[0].resource_id;
    expect(proposedProjectId).toMatch(/^prj_/);
    expect(await card.locator('[data-item-index="1"]').textContent()).not.toContain(proposedProjectId);

    await card.locator('[data-item-index="2"]').getByLabel('Reject this item').check();
    await card.locator('[data-item-index="2"]').getByPlaceholder('Why (required)').fill('No cake this time');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'review-changeset');
    await card.getByRole('button', { name: 'Approve the other 2' }).click();
    // Decided, the card leaves the pending queue; the review's page tells how it ended.
    await card.waitFor({ state: 'detached', timeout: 20_000 });
    await page.goto(`${origin}/reviews/${held.body.review.id}`);
    await page.getByText(`Approved by ${reviewer.email}`).waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-item-index="2"]').textContent()).toContain('Rejected: “No cake this time”');

    const { rows } = await h.db.query('SELECT title FROM tasks WHERE org_id = $1 ORDER BY id', [acme.organization.id]);
    expect(rows.map((row) => row.title)).toEqual(['review the Acme contract']);
    const { rows: items } = await h.db.query('SELECT idx, verdict, verdict_reason, applied_id IS NOT NULL AS applied FROM changeset_items WHERE changeset_id = (SELECT changeset_id FROM reviews WHERE id = $1) ORDER BY idx', [held.body.review.id]);
    expect(items).toEqual([
      { idx: 0, verdict: null, verdict_reason: null, applied: true },
      { idx: 1, verdict: null, verdict_reason: null, applied: true },
      { idx: 2, verdict: 'rejected', verdict_reason: 'No cake this time', applied: false },
    ]);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('approved whole in the console, applies every item in one transaction', async () => {
    const existing = (await submitChangeset({ items: [{ ref: 't', operation: 'tasks.create', input: { title: 'Draft the Globex quote' } }] })).body.data.items[0].resource_id;
    const held = await submitChangeset({
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Globex onboarding' } },
        { operation: 'tasks.create', input: { title: 'review the Globex kickoff agenda', project_id: '$ref:proj' } },
        { operation: 'tasks.update', input: { id: existing, status: 'done', project_id: '$ref:proj' } },
      ],
    });
    expect(held.status).toBe(202);
    const page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: reviewer.email, password: reviewer.password }, pageErrors);
    await page.goto(`${origin}/reviews`);
    const card = page.locator('article.review', { hasText: 'Globex onboarding' });
    await card.waitFor();
    expect(await card.textContent()).toContain('A changeset of 3 writes');
    await card.getByRole('button', { name: 'Approve all' }).click();
    await card.waitFor({ state: 'detached', timeout: 20_000 });

    // Every row the changeset wrote carries the id of the one transaction that wrote it (PostgreSQL's xmin).
    const { rows: written } = await h.db.query(
      `SELECT xmin::text AS tx, 'project' AS kind, name AS label, NULL AS status FROM projects WHERE org_id = $1 AND name = 'Globex onboarding'
       UNION ALL SELECT xmin::text, 'task', title, status FROM tasks WHERE org_id = $1 AND (title = 'review the Globex kickoff agenda' OR id = $2)`,
      [acme.organization.id, existing],
    );
    expect(written).toHaveLength(3);
    expect(new Set(written.map((row) => row.tx)).size).toBe(1);
    expect(written.find((row) => row.label === 'Draft the Globex quote')?.status).toBe('done');
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("a reviewer edits one item's fields, then approves: the edited item is applied with the rest, and the card shows what they changed", async () => {
    const held = await submitChangeset({
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Initech launch' } },
        { operation: 'tasks.create', input: { title: 'review the Initech launch plan draft', project_id: '$ref:proj', due_on: '2027-03-01' } },
        { operation: 'tasks.create', input: { title: 'Book the Initech venue' } },
      ],
    });
    expect(held.status).toBe(202);
    const reviewId = held.body.review.id as string;
    const page = await signedInConsole(browser, origin, { slug: acme.organization.slug, email: reviewer.email, password: reviewer.password }, pageErrors);
    await page.goto(`${origin}/reviews/${reviewId}`);
    const card = page.locator('article.review', { hasText: 'Initech launch' });
    await card.waitFor();
    // Only a create or update item offers an edit; the form opens in the item, prefilled with the agent's values.
    const item = card.locator('[data-item-index="1"]');
    await item.getByRole('button', { name: 'Edit item 2, then approve' }).click();
    const form = item.getByRole('form', { name: 'Edit item 2, then approve' });
    await form.waitFor();
    expect(await form.getByLabel('title', { exact: true }).inputValue()).toBe('review the Initech launch plan draft');
    expect(await form.getByLabel('due_on', { exact: true }).inputValue()).toBe('2027-03-01');

    // An edit the policy denies is refused with the item's reason; the review keeps waiting.
    await form.getByLabel('title', { exact: true }).fill('deny the launch');
    await form.getByRole('button', { name: 'Approve with changes' }).click();
    await form.getByRole('alert').getByText('item 1 (tasks.create): The title asks to be denied').waitFor({ timeout: 20_000 });

    await form.getByLabel('title', { exact: true }).fill('review the Initech launch checklist');
    await form.getByLabel('due_on', { exact: true }).fill('2027-02-15');
    await card.getByLabel('Comment (optional)').fill('A checklist, and two weeks sooner');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'review-changeset-edit');
    await form.getByRole('button', { name: 'Approve with changes' }).click();

    await card.getByText(`Approved by ${reviewer.email}`).waitFor({ timeout: 20_000 });
    await form.waitFor({ state: 'detached' });
    await expect.poll(async () => (await page.reload(), await card.innerText()), { timeout: 20_000 }).toContain('The write ran.');
    // The card shows what the reviewer changed in the item: who, each field the agent's way and theirs.
    const edited = card.locator('[data-item-index="1"] .edit-summary');
    expect(await edited.innerText()).toContain(`Edited by ${reviewer.email}`);
    const rows = await edited.locator('tr[data-edited="true"]').allInnerTexts();
    expect(rows).toEqual([expect.stringMatching(/due_on\s+2027-03-01\s+2027-02-15/), expect.stringMatching(/title\s+review the Initech launch plan draft\s+review the Initech launch checklist/)]);
    expect(await card.locator('[data-item-index="2"] .edit-summary').count()).toBe(0);

    const { rows: tasks } = await h.db.query(
      `SELECT t.title, t.due_on::text, p.name AS project, t.xmin::text AS tx, p.xmin::text AS project_tx FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
       WHERE t.org_id = $1 AND t.title LIKE '%Initech%' ORDER BY t.title`,
      [acme.organization.id],
    );
    expect(tasks.map((row) => [row.title, row.due_on, row.project])).toEqual([
      ['Book the Initech venue', null, null],
      ['review the Initech launch checklist', '2027-02-15', 'Initech launch'],
    ]);
    // One transaction wrote the project and both tasks.
    expect(new Set([...tasks.map((row) => row.tx), tasks[1].project_tx]).size).toBe(1);
    expect(pageErrors).toEqual([]);
  }, 90_000);
});
