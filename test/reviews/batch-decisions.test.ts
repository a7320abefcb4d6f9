import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { addPerson } from '../support/console';
import { json, quorumPolicy, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Batch decisions in the review queue, on the real api, worker, Temporal and PostgreSQL: one verdict on several
// held writes, each decided on its own (its own audit event, every rule checked for it), over the review API with
// a personal token and in the console in Chromium.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let browser: Browser | undefined;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.', policy: quorumPolicy });
  globex = await h.createOrganization({ name: 'Globex', policy: quorumPolicy });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function person(org: TestOrganization, role: 'reviewer' | 'admin' | 'owner' | 'member', name: string) {
  const user = await createUser(h.db, { orgId: org.organization.id, email: `${name}@${org.organization.slug}.test`, role });
  return { user, token: (await createPersonalToken(h.db, user)).token };
}

async function hold(token: string, title: string): Promise<string> {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id;
}

const batch = (token: string, payload: Record<string, unknown>) => h.request({ method: 'POST', url: '/api/v1/reviews/batch', token, payload });

async function tasksTitled(org: TestOrganization, prefix: string): Promise<string[]> {
  const { rows } = await h.db.query('SELECT title FROM tasks WHERE org_id = $1 AND title LIKE $2 ORDER BY title', [org.organization.id, `${prefix}%`]);
  return rows.map((row) => row.title);
}

describe('one verdict on several held writes', () => {
  it('approves ten held writes, refuses the one its approver may not approve, and audits each on its own', async () => {
    const maker = await person(acme, 'admin', 'maker');
    const makersKey = await createApiKey(h.db, { orgId: acme.organization.id, label: "maker's agent", access: 'read_write' }, { type: 'user', id: maker.user.id });
    const ids = [];
    for (let i = 0; i < 9; i++) ids.push(await hold(acme.readWriteToken, `review batch ${i}`));
    const own = await hold(makersKey.token, 'review batch own');
    ids.splice(4, 0, own);

    const answer = await batch(maker.token, { review_ids: ids, verdict: 'approved', comment: 'after the Acme call' });
    expect(answer.statusCode, answer.body).toBe(200);
    const { decided, refused } = json(answer).data;
    expect(refused).toEqual([{ id: own, code: 'self_approval', message: expect.stringContaining('created the API key') }]);
    expect(decided.map((review: any) => review.id)).toEqual(ids.filter((id) => id !== own));
    for (const review of decided) expect(review).toMatchObject({ status: 'approved', comment: 'after the Acme call', decided_via: 'api_token' });

    // Each approved write ran once; the refused one waits for another reviewer.
    await expect.poll(() => tasksTitled(acme, 'review batch'), { timeout: 20_000 }).toEqual([...Array(9).keys()].map((i) => `review batch ${i}`));
    const ownReview = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${own}`, token: acme.reviewerToken })).data;
    expect(ownReview.status).toBe('pending');

    const { rows: audited } = await h.db.query(
      `SELECT review_id, actor_id FROM audit_events WHERE org_id = $1 AND type = 'review.approved' AND review_id = ANY($2) ORDER BY review_id`,
      [acme.organization.id, ids],
    );
    expect(audited.map((row) => row.review_id)).toEqual(ids.filter((id) => id !== own).sort());
    expect(new Set(audited.map((row) => row.actor_id))).toEqual(new Set([maker.user.id]));
  });

  it('counts one approval per write where the policy asks for two, and denies a selection', async () => {
    const first = await person(acme, 'reviewer', 'first');
    const second = await person(acme, 'reviewer', 'second');
    const big = [await hold(acme.readWriteToken, 'big one'), await hold(acme.readWriteToken, 'big two')];

    const once = json(await batch(first.token, { review_ids: big, verdict: 'approved' })).data;
    expect(once.decided.map((review: any) => [review.status, review.approvals.given.length])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ]);
    // The same person's second batch counts nothing more.
    const again = json(await batch(first.token, { review_ids: big, verdict: 'approved' })).data;
    expect(again.decided).toEqual([]);
    expect(again.refused.map((refusal: any) => refusal.code)).toEqual(['conflict', 'conflict']);
    const twice = json(await batch(second.token, { review_ids: big, verdict: 'approved' })).data;
    expect(twice.decided.map((review: any) => review.status)).toEqual(['approved', 'approved']);
    await expect.poll(() => tasksTitled(acme, 'big'), { timeout: 20_000 }).toEqual(['big one', 'big two']);

    // Denying: each denied write is never applied; writes not named stay pending, and a name given twice counts once.
    const kept = await hold(acme.readWriteToken, 'review stays');
    const gone = [await hold(acme.readWriteToken, 'review deny a'), await hold(acme.readWriteToken, 'review deny b')];
    const denied = json(await batch(first.token, { review_ids: [...gone, gone[0]], verdict: 'denied', comment: 'not this week' })).data;
    expect(denied.decided.map((review: any) => [review.id, review.status, review.comment])).toEqual(gone.map((id) => [id, 'denied', 'not this week']));
    expect(denied.refused).toEqual([]);
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${kept}`, token: acme.reviewerToken })).data.status).toBe('pending');
    expect(await tasksTitled(acme, 'review deny')).toEqual([]);
  });

  it('refuses bad selections with a clear error and changes nothing; another organization’s reviews are not found', async () => {
    const reviewer = await person(acme, 'reviewer', 'picky');
    const pending = await hold(acme.readWriteToken, 'review untouched');
    const theirs = await hold(globex.readWriteToken, 'review theirs');

    for (const payload of [
      { verdict: 'approved' },
      { verdict: 'approved', review_ids: [pending], matching: {} },
      { verdict: 'approved', review_ids: [] },
      { verdict: 'approved', review_ids: pending },
      { verdict: 'maybe', review_ids: [pending] },
      { verdict: 'approved', review_ids: Array.from({ length: 101 }, (_, i) => `rev_${i}`) },
      { verdict: 'approved', review_ids: ['rev_\u0000'] },
    ]) {
      const refused = await batch(reviewer.token, payload);
      expect(refused.statusCode, JSON.stringify(payload)).toBe(422);
      expect(json(refused).error.code).toBe('validation_failed');
    }

    // Naming a review the organization does not have is bad input: nothing is decided, not even the others.
    const across = await batch(reviewer.token, { review_ids: [pending, theirs, 'rev_nothing'], verdict: 'denied' });
    expect(across.statusCode).toBe(422);
    expect(json(across).error.details.fields.map((problem: any) => problem.field)).toEqual(['review_ids.1', 'review_ids.2']);
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${theirs}`, token: globex.reviewerToken })).data.status).toBe('pending');
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${pending}`, token: acme.reviewerToken })).data.status).toBe('pending');

    // Members see the queue and decide nothing; an API key never decides.
    const member = await person(acme, 'member', 'watcher');
    expect(json(await batch(member.token, { review_ids: [pending], verdict: 'denied' })).error.code).toBe('insufficient_role');
    expect(json(await batch(acme.readWriteToken, { review_ids: [pending], verdict: 'denied' })).error.code).toBe('person_required');
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${pending}`, token: acme.reviewerToken })).data.status).toBe('pending');
  });
});

describe('the review queue in Chromium', () => {
  it('selects held writes by hand or all shown, approves them in one action, and lists what was refused', async () => {
    const org = await h.createOrganization({ name: 'Initech', policy: quorumPolicy });
    const admin = await addPerson(h.db, org.organization, 'admin');
    const adminsKey = await createApiKey(h.db, { orgId: org.organization.id, label: "admin's own agent", access: 'read_write' }, { type: 'user', id: admin.user.id });
    for (const title of ['review invoice follow-up', 'review supplier call', 'review move the standup']) await hold(org.readWriteToken, title);
    await hold(adminsKey.token, 'review my own agent’s task');

    const origin = await h.listen();
    browser = await launchChromium();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${origin}/reviews`);
    await page.getByLabel('Organization').fill(org.organization.slug);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('article.review').nth(3).waitFor();

    await page.getByLabel('Select tasks.create by “test agent”').first().check();
    expect(await page.getByRole('button', { name: 'Approve 1 selected' }).isEnabled()).toBe(true);
    await page.getByLabel('Select all 4 pending shown').check();
    await page.getByLabel('Comment for each (optional)').fill('Checked against the call notes');
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'review-queue-batch');
    await page.getByRole('button', { name: 'Approve 4 selected' }).click();

    const outcome = page.locator('.batch-outcome');
    await outcome.getByText('3 approved; 1 refused:').waitFor({ timeout: 20_000 });
    expect(await outcome.innerText()).toContain('you created the API key that made this write');
    await page.locator('article.review').first().waitFor();
    expect(await page.locator('article.review').count()).toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'review-queue-batch-outcome');
    await expect.poll(() => tasksTitled(org, 'review'), { timeout: 20_000 }).toEqual(['review invoice follow-up', 'review move the standup', 'review supplier call']);

    // At phone width the selection and the batch's buttons still fit.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Select all 1 pending shown').check();
    await page.getByRole('button', { name: 'Deny 1 selected' }).click();
    await page.getByText('Nothing waits for a decision.').waitFor({ timeout: 20_000 });
    expect(await accessibilityViolations(page)).toEqual([]);
  });
});
