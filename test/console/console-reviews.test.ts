import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { createApiKey } from '../../domain/identity/api-keys';
import { addPerson, signIn, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The review queue in Chromium, live, against the real api (two processes' worth), worker, Temporal and
// PostgreSQL: agents' held writes over REST and MCP appear without a reload, people decide them, and the
// decisions hold in the database.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let browser: Browser;
let origin: string;
let reviewer: TestPerson;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  globex = await h.createOrganization({ name: 'Globex' });
  reviewer = await addPerson(h.db, acme.organization, 'reviewer');
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(acme, reviewer);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(org: TestOrganization, person: TestPerson, path = '/reviews', viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}${path}`);
  await opened.getByLabel('Organization').fill(org.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  return opened;
}

const focusedId = (on: Page) => on.evaluate(() => (globalThis as any).document.activeElement?.id as string);
const card = (on: Page, title: string) => on.locator('article.review', { hasText: title });

async function postTask(title: string, base = origin) {
  const response = await fetch(`${base}/api/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('the review queue', () => {
  it('shows an agent’s held write over REST without a reload, and its web_url opens it', async () => {
    await page.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
    await page.getByText('Nothing waits for a decision.').waitFor();
    const held = await postTask('review the supplier contract');
    expect(held.status).toBe(202);
    expect(held.body.review.web_url).toBe(`${publicUrl}/reviews/${held.body.review.id}`);
    expect(held.body.review.url).toBe(`${publicUrl}/api/v1/reviews/${held.body.review.id}`);

    const shown = card(page, 'review the supplier contract');
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.innerText()).toContain('by “test agent”');
    expect(await shown.innerText()).toContain('Over REST');
    expect(await shown.innerText()).toContain('The title asks for a review');
    expect(await shown.innerText()).toContain('review-when-asked');
    expect(await accessibilityViolations(page)).toEqual([]);

    const direct = await browser.newPage();
    await direct.goto(`${origin}/reviews/${held.body.review.id}`);
    await direct.waitForURL(/\/sign-in\?next=%2Freviews%2Frev_/);
  });

  it('shows one over MCP with the SDK client, and one that arrives through a second api process', async () => {
    const mcp = await h.mcp(acme.readWriteToken);
    const result: any = await mcp.callTool({ name: 'create_task', arguments: { title: 'review the MCP order' } });
    expect(result.structuredContent.review.web_url).toMatch(/\/reviews\/rev_/);
    const viaMcp = card(page, 'review the MCP order');
    await viaMcp.waitFor({ timeout: 10_000 });
    expect(await viaMcp.innerText()).toContain('Over MCP');

    const second = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', secrets: h.secrets });
    await second.listen({ port: 0, host: '127.0.0.1' });
    try {
      const other = `http://127.0.0.1:${(second.server.address() as { port: number }).port}`;
      expect((await postTask('review what the second process took', other)).status).toBe(202);
      await card(page, 'review what the second process took').waitFor({ timeout: 10_000 });
    } finally {
      await second.close();
    }
  });

  it('shows an update as a field-by-field diff of the real record', async () => {
    const created = await postTask('Pay the rent');
    expect(created.status).toBe(201);
    const update = await fetch(`${origin}/api/v1/tasks/${created.body.data.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'review the rent', priority: 'high' }),
    });
    expect(update.status).toBe(202);
    const shown = card(page, 'review the rent');
    await shown.waitFor({ timeout: 10_000 });
    const changed = await shown.locator('tr[data-changed="true"] th').allInnerTexts();
    expect(changed.map((field) => field.replace('(changed)', '').trim()).sort()).toEqual(['priority', 'title']);
    const titleRow = await shown.locator('tr[data-changed="true"]', { hasText: 'title' }).innerText();
    expect(titleRow).toContain('Pay the rent');
    expect(titleRow).toContain('review the rent');
    await screenshot(page, 'review-queue');
  });

  it('works at a phone’s width: the cards and the diff fit, nothing scrolls sideways, and it is accessible', async () => {
    const phone = await signedInPage(acme, reviewer, '/reviews', { width: 390, height: 844 });
    const shown = card(phone, 'review the rent');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByRole('button', { name: 'Approve', exact: true }).waitFor();
    const overflow = await phone.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await accessibilityViolations(phone)).toEqual([]);
    await screenshot(phone, 'review-queue-phone');
    await phone.context().close();
  });

  it('is decided at a phone’s width: the card’s Approve runs the write, and the trail says it was given in the console', async () => {
    const held = await postTask('review on the phone');
    expect(held.status).toBe(202);
    const phone = await signedInPage(acme, reviewer, '/reviews', { width: 390, height: 844 });
    const shown = card(phone, 'review on the phone');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByLabel('Comment (optional)').fill('Fine, from my phone');
    await shown.getByRole('button', { name: 'Approve', exact: true }).click();
    await shown.waitFor({ state: 'detached', timeout: 20_000 });
    const written = async () => (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'review on the phone'])).rows.length;
    await expect.poll(written, { timeout: 20_000 }).toBe(1);
    const { rows: events } = await h.db.query("SELECT actor_id, data FROM audit_events WHERE org_id = $1 AND type = 'review.approved' AND review_id = $2", [
      acme.organization.id,
      held.body.review.id,
    ]);
    expect(events).toEqual([{ actor_id: reviewer.user.id, data: expect.objectContaining({ via: 'console', passkey: null, payload_digest: expect.stringMatching(/^[0-9a-f]{64}$/) }) }]);
    await phone.context().close();
  });

  it('approve: the record exists; deny: nothing changed; both stay findable', async () => {
    const approve = card(page, 'review the supplier contract');
    await approve.getByLabel('Comment (optional)').fill('Checked with legal');
    await approve.getByRole('button', { name: 'Approve', exact: true }).click();
    await approve.waitFor({ state: 'detached', timeout: 20_000 });
    // The card leaves the open queue once the approval is recorded; the write follows as the workflow applies it.
    const written = async () =>
      (await h.db.query('SELECT title FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'review the supplier contract'])).rows.length;
    await expect.poll(written, { timeout: 20_000 }).toBe(1);

    const deny = card(page, 'review the rent');
    await deny.getByRole('button', { name: 'Deny' }).click();
    await deny.waitFor({ state: 'detached', timeout: 20_000 });
    const { rows: unchanged } = await h.db.query('SELECT title, priority FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, 'Pay the rent']);
    expect(unchanged).toEqual([{ title: 'Pay the rent', priority: 'normal' }]);

    await page.getByLabel('Status').selectOption('approved');
    const decided = card(page, 'review the supplier contract');
    await decided.waitFor();
    await decided.getByText(`Approved by ${reviewer.email}: “Checked with legal”. The write ran.`).waitFor({ timeout: 20_000 });
    await page.getByLabel('Status').selectOption('denied');
    await card(page, 'review the rent').waitFor();
    await page.getByLabel('Status').selectOption('pending');
  });

  it('a decision answered after the filter changed leaves the list of the filter shown', async () => {
    // The decision is recorded at once and the live feed takes the card out of the queue, but its answer waits
    // for the workflow (seconds on a busy machine); meanwhile the person looks at another filter.
    const held = await postTask('review the slow answer');
    expect(held.status).toBe(202);
    const shown = card(page, 'review the slow answer');
    await shown.waitFor({ timeout: 10_000 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const answered = new Promise<void>((resolve) => {
      void page.route('**/console/api/v1/reviews/*/deny', async (route) => {
        const response = await route.fetch();
        await released;
        await route.fulfill({ response });
        resolve();
      });
    });
    await shown.getByRole('button', { name: 'Deny' }).click();
    await shown.waitFor({ state: 'detached', timeout: 20_000 });
    await page.getByLabel('Status').selectOption('denied');
    await card(page, 'review the slow answer').waitFor();

    // The late answer reloads the list: the one of the filter shown, which keeps the card.
    const reloaded = page.waitForResponse((response) => response.url().includes('/console/api/v1/reviews?'));
    release();
    await answered;
    expect(new URL((await reloaded).url()).searchParams.get('status')).toBe('denied');
    await page.waitForTimeout(300);
    expect(await page.getByLabel('Status').inputValue()).toBe('denied');
    expect(await card(page, 'review the slow answer').innerText()).toContain(`Denied by ${reviewer.email}`);
    await page.unroute('**/console/api/v1/reviews/*/deny');
    await page.getByLabel('Status').selectOption('pending');
  });

  it('someone else’s decision leaves the open queue without a reload', async () => {
    // The open queue, whatever filter a failed test before left chosen (its failure is its own).
    await page.getByLabel('Status').selectOption('pending');
    const held = await postTask('review decided elsewhere');
    const shown = card(page, 'review decided elsewhere');
    await shown.waitFor({ timeout: 10_000 });
    const decided = await h.request({ method: 'POST', url: `/api/v1/reviews/${held.body.review.id}/deny`, token: acme.reviewerToken });
    expect(decided.statusCode).toBe(200);
    await shown.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('a page whose live stream was refused (an api stopping, a proxy between replicas) opens another and keeps up', async () => {
    await page.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
    let refused = 0;
    await page.route(
      '**/console/api/live',
      async (route) => {
        refused++;
        await route.fulfill({ status: 503, contentType: 'application/json', body: '{"success":false,"error":{"code":"unavailable","message":"stopping"}}' });
      },
      { times: 1 },
    );
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
    await page.locator('section[aria-label="Reviews"][aria-busy="false"]').waitFor();
    await expect.poll(() => refused).toBe(1);
    expect((await postTask('review after a refused stream')).status).toBe(202);
    await card(page, 'review after a refused stream').waitFor({ timeout: 10_000 });
  });

  it('a member sees the queue but cannot decide; another organization sees none of it', async () => {
    const member = await addPerson(h.db, acme.organization, 'member');
    const memberPage = await signedInPage(acme, member);
    const shown = card(memberPage, 'review the MCP order');
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    await shown.getByText('Reviewers, admins and owners decide held writes.').waitFor();
    expect(await accessibilityViolations(memberPage)).toEqual([]);

    const outsider = await addPerson(h.db, globex.organization, 'owner');
    const theirs = await signedInPage(globex, outsider);
    await theirs.getByText('Nothing waits for a decision.').waitFor();
    const reviewId = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending', token: acme.reviewerToken })).data[0].id;
    await theirs.goto(`${origin}/reviews/${reviewId}`);
    await theirs.getByRole('alert').waitFor();
    expect(await theirs.getByRole('main').innerText()).not.toContain('review the MCP order');
  });

  it('the web_url opens the review for a signed-in person, who decides it there', async () => {
    const held = await postTask('review from the link');
    const opened = await signedInPage(acme, reviewer, new URL(held.body.review.web_url).pathname);
    const shown = card(opened, 'review from the link');
    await shown.waitFor();
    expect(await accessibilityViolations(opened)).toEqual([]);
    await screenshot(opened, 'review');
    await shown.getByRole('button', { name: 'Approve', exact: true }).click();
    await shown.getByText('The write ran.').waitFor({ timeout: 20_000 });
  });

  it('an escalated review says so on its card (escalation itself: test/notify/notifications.test.ts)', async () => {
    const held = await postTask('review the escalated request');
    expect(held.status).toBe(202);
    // As the escalation step records it when the organization's wait runs out.
    await h.db.query("UPDATE reviews SET escalated_to = 'admins', escalated_at = now() WHERE id = $1", [held.body.review.id]);
    await page.goto(`${origin}/reviews/${held.body.review.id}`);
    const shown = card(page, 'review the escalated request');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByText('Escalated to admins').waitFor();
    expect(await shown.innerText()).toMatch(/Escalated to admins .*waited longer than the organization allows/);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('a held write withdrawn (its key revoked) leaves the queue live, and shows as withdrawn, by whom and why, with nothing to decide', async () => {
    const owner = await addPerson(h.db, acme.organization, 'owner');
    const ownerSession = await signIn(h.app, acme.organization, owner);
    const key = await createApiKey(h.db, { orgId: acme.organization.id, label: 'Agent about to be revoked', access: 'read_write' });
    const opened = await signedInPage(acme, reviewer);
    const held = await fetch(`${origin}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'review what will be withdrawn' }),
    });
    expect(held.status).toBe(202);
    const waiting = card(opened, 'review what will be withdrawn');
    await waiting.waitFor({ timeout: 10_000 });

    const revoked = await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.key.id}/revoke` });
    expect(revoked.statusCode).toBe(200);
    await waiting.waitFor({ state: 'detached', timeout: 10_000 });

    await opened.getByLabel('Status').selectOption('withdrawn');
    const withdrawn = card(opened, 'review what will be withdrawn');
    await withdrawn.waitFor({ timeout: 10_000 });
    expect(await withdrawn.locator('.state').innerText()).toBe('Withdrawn');
    const said = await withdrawn.getByRole('status').innerText();
    expect(said).toContain(`Withdrawn by ${owner.email}`);
    expect(said).toContain('the API key that made it was revoked. Nothing was written, and nobody can approve it.');
    expect(await withdrawn.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await withdrawn.getByRole('button', { name: 'Deny', exact: true }).count()).toBe(0);
    expect(await withdrawn.getByRole('checkbox').count()).toBe(0);
    expect(await accessibilityViolations(opened)).toEqual([]);
    await screenshot(opened, 'review-withdrawn');

    const phone = await signedInPage(acme, reviewer, '/reviews?status=withdrawn', { width: 390, height: 900 });
    const onPhone = card(phone, 'review what will be withdrawn');
    await onPhone.waitFor({ timeout: 10_000 });
    expect(await phone.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await accessibilityViolations(phone)).toEqual([]);
    await screenshot(phone, 'review-withdrawn-phone');
    await opened.context().close();
    await phone.context().close();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});

// A reviewer changes a held write before approving it, and a rule asks for two people: in Chromium, against the
// real api, worker, Temporal and PostgreSQL (the server's side of both: test/reviews/review-policy.test.ts).
const editPolicy = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("review-when-asked") @decision("review") @reason("The title asks for a review")
permit (principal, action, resource) when { resource has title && resource.title like "review*" };

@id("two-for-big") @decision("review") @approvals("2") @reason("Big tasks need two people")
permit (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "big*" };

@id("deny-when-asked") @reason("The title asks to be denied")
forbid (principal, action, resource) when { resource has title && resource.title like "deny*" };
`;

describe('editing a held write before approving it, and two people approving one', () => {
  let initech: TestOrganization;
  let editor: TestPerson;

  beforeAll(async () => {
    initech = await h.createOrganization({ name: 'Initech', policy: editPolicy });
    editor = await addPerson(h.db, initech.organization, 'reviewer');
  });

  async function hold(fields: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${origin}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${initech.readWriteToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(fields),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as any).review.id;
  }

  const reviewRow = async (id: string) =>
    (await h.db.query(`SELECT decided_at IS NOT NULL AS decided, edit_id FROM reviews WHERE id = $1`, [id])).rows[0] as { decided: boolean; edit_id: string | null };

  it('a reviewer edits the due date, tags and description, approves with changes, and the edited record is written', async () => {
    const reviewId = await hold({ title: 'review the quarterly plan', description: 'A long draft that says too much', due_on: '2026-12-24', priority: 'low' });
    const opened = await signedInPage(initech, editor, `/reviews/${reviewId}`);
    const shown = card(opened, 'review the quarterly plan');
    await shown.waitFor({ timeout: 10_000 });

    await shown.getByRole('button', { name: 'Edit, then approve' }).click();
    const form = shown.getByRole('form', { name: 'Edit, then approve' });
    await form.waitFor();
    // Every proposed field, labelled and prefilled with the agent's value; the record's id is not offered.
    expect(await form.getByLabel('title', { exact: true }).inputValue()).toBe('review the quarterly plan');
    expect(await form.getByLabel('description', { exact: true }).evaluate((element) => element.tagName)).toBe('TEXTAREA');
    expect(await form.getByLabel('due_on', { exact: true }).getAttribute('type')).toBe('date');
    expect(await form.getByLabel('due_on', { exact: true }).inputValue()).toBe('2026-12-24');
    expect(await form.getByLabel('priority', { exact: true }).inputValue()).toBe('low');
    expect(await form.getByLabel('tags', { exact: true }).inputValue()).toBe('[]');
    expect(await form.getByLabel('id', { exact: true }).count()).toBe(0);
    // The title went first: the keyboard starts there.
    expect(await focusedId(opened)).toBe(`edit-${reviewId}-field-title`);

    await form.getByLabel('due_on', { exact: true }).fill('2026-12-01');
    await form.getByLabel('description', { exact: true }).fill('Short');
    await form.getByLabel('tags', { exact: true }).fill('["planning"');
    await form.getByRole('button', { name: 'Approve with changes' }).click();
    // JSON that does not parse is refused where it was typed, before anything is sent.
    await form.getByText('This is not valid JSON').waitFor();
    expect(await form.getByLabel('tags', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await focusedId(opened)).toBe(`edit-${reviewId}-field-tags`);
    expect(await accessibilityViolations(opened)).toEqual([]);
    expect((await reviewRow(reviewId)).edit_id).toBeNull();

    await form.getByLabel('tags', { exact: true }).fill('["planning"]');
    await shown.getByLabel('Comment (optional)').fill('Earlier, and shorter');
    expect(await accessibilityViolations(opened)).toEqual([]);
    await screenshot(opened, 'review-edit');
    await form.getByRole('button', { name: 'Approve with changes' }).click();

    await shown.getByText('The write ran.').waitFor({ timeout: 20_000 });
    await form.waitFor({ state: 'detached' });
    const edited = shown.locator('.edit-summary');
    expect(await edited.innerText()).toContain(`Edited by ${editor.email}`);
    expect(await edited.innerText()).toContain('Review — The title asks for a review');
    const rows = await edited.locator('tbody tr').allInnerTexts();
    expect(rows.map((row) => row.split('\t').map((cell) => cell.trim()))).toEqual([
      ['description', 'A long draft that says too much', 'Short'],
      ['due_on', '2026-12-24', '2026-12-01'],
      ['tags', '[]', '["planning"]'],
    ]);
    expect(await shown.getByRole('status').innerText()).toContain(`Approved by ${editor.email}: “Earlier, and shorter”.`);
    expect(await accessibilityViolations(opened)).toEqual([]);
    await screenshot(opened, 'review-edited');

    const { rows: tasks } = await h.db.query('SELECT title, description, due_on::text, tags, priority FROM tasks WHERE org_id = $1', [initech.organization.id]);
    expect(tasks).toEqual([{ title: 'review the quarterly plan', description: 'Short', due_on: '2026-12-01', tags: ['planning'], priority: 'low' }]);
    await opened.context().close();
  });

  it('an edit the policy denies says why; nothing is written and the review still waits with the agent’s version', async () => {
    const reviewId = await hold({ title: 'review the budget' });
    const opened = await signedInPage(initech, editor, `/reviews/${reviewId}`);
    const shown = card(opened, 'review the budget');
    await shown.waitFor({ timeout: 10_000 });
    await shown.getByRole('button', { name: 'Edit, then approve' }).click();
    const form = shown.getByRole('form', { name: 'Edit, then approve' });

    // Approving with nothing changed is not an edit.
    await form.getByRole('button', { name: 'Approve with changes' }).click();
    await form.getByText('You have not changed anything').waitFor();

    // A field the agent did not send, which the write does not accept as it is: the server's problem, under it.
    await form.getByLabel('Field name').fill('due_on');
    await form.getByLabel('Value').fill('next week');
    await form.getByRole('button', { name: 'Approve with changes' }).click();
    await expect.poll(() => form.getByLabel('Value').getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    const problem = await form.getByLabel('Value').getAttribute('aria-describedby');
    expect(await opened.locator(`[id="${problem!.split(' ')[0]}"]`).innerText()).not.toBe('');
    expect(await focusedId(opened)).toBe(`edit-${reviewId}-added-value`);
    expect(await accessibilityViolations(opened)).toEqual([]);
    await form.getByLabel('Field name').fill('');
    await form.getByLabel('Value').fill('');

    await form.getByLabel('title', { exact: true }).fill('deny the budget');
    await form.getByRole('button', { name: 'Approve with changes' }).click();
    const refused = form.getByRole('alert');
    await refused.getByText('The policy refused this edit:').waitFor({ timeout: 10_000 });
    expect(await refused.innerText()).toContain('The title asks to be denied');
    expect(await refused.innerText()).toContain('deny-when-asked');
    expect(await refused.innerText()).toContain('the review still waits');
    expect(await shown.locator('.review-head .state').innerText()).toBe('Pending');
    expect(await accessibilityViolations(opened)).toEqual([]);
    expect(await reviewRow(reviewId)).toEqual({ decided: false, edit_id: null });
    expect((await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title LIKE $2', [initech.organization.id, '%budget']).then((result) => result.rowCount))).toBe(0);

    // Cancel closes the form and gives the keyboard back to the button that opened it.
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    const reopen = shown.getByRole('button', { name: 'Edit, then approve' });
    await expect.poll(() => reopen.evaluate((element) => element === (globalThis as any).document.activeElement)).toBe(true);
    // The agent's version is still there to decide.
    await shown.getByRole('button', { name: 'Deny' }).click();
    await shown.getByText(`Denied by ${editor.email}`).waitFor({ timeout: 20_000 });
    await opened.context().close();
  });

  it('a review that needs two people shows 1 of 2 after the first approval, also on the second person’s open page; their approval runs it', async () => {
    const reviewId = await hold({ title: 'big launch plan' });
    const first = await signedInPage(initech, editor, `/reviews/${reviewId}`);
    const shown = card(first, 'big launch plan');
    await shown.waitFor({ timeout: 10_000 });
    // The second person has the review open already: the first approval reaches their page without a reload.
    const cosigner = await addPerson(h.db, initech.organization, 'admin');
    const second = await signedInPage(initech, cosigner, `/reviews/${reviewId}`);
    const theirs = card(second, 'big launch plan');
    await theirs.getByText('Approvals: 0 of 2').waitFor({ timeout: 10_000 });
    expect(await shown.innerText()).toContain('Approvals: 0 of 2');
    expect(await shown.innerText()).toContain('Big tasks need two people');
    await shown.getByRole('button', { name: 'Approve (1 of 2)' }).click();
    await shown.getByText('Approvals: 1 of 2').waitFor({ timeout: 10_000 });
    expect(await shown.innerText()).toContain(`${editor.email} approved`);
    await shown.getByText('You have approved; it waits for 1 more.').waitFor();
    expect(await shown.getByRole('button', { name: /^Approve/ }).isDisabled()).toBe(true);
    expect(await shown.locator('.review-head .state').innerText()).toBe('Pending');
    expect(await accessibilityViolations(first)).toEqual([]);
    expect((await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title = $2', [initech.organization.id, 'big launch plan'])).rowCount).toBe(0);

    await theirs.getByText('Approvals: 1 of 2').waitFor({ timeout: 10_000 });
    expect(await theirs.innerText()).toContain(`${editor.email} approved`);
    await theirs.getByRole('button', { name: 'Approve (2 of 2)' }).click();
    await theirs.getByText('The write ran.').waitFor({ timeout: 20_000 });
    expect(await theirs.innerText()).toContain('Approvals: 2 of 2');
    expect(await theirs.getByRole('status').innerText()).toContain(`Approved by ${cosigner.email}`);
    // The first reviewer's page follows without a reload.
    await shown.getByText('The write ran.').waitFor({ timeout: 10_000 });
    expect((await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title = $2', [initech.organization.id, 'big launch plan'])).rowCount).toBe(1);
    await first.context().close();
    await second.context().close();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
