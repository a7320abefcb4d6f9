import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';

// The console's Policy page in Chromium against the real api, worker, Temporal and PostgreSQL: an owner reads the
// policy in force, changes it in a draft checked by a dry run over a known history, sees Cedar refuse a draft that
// does not parse, saves a new version, runs a draft in shadow and sees where it disagrees, adds a rule suggested by
// the review history to the draft, and sets the organization's switches; a reviewer reads without an editor, and a
// member is not offered the page.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let owner: TestPerson;
let reviewer: TestPerson;
let member: TestPerson;
let ownerApi: ConsoleSession;
let page: Page;
const pageErrors: string[] = [];

/** The test policy with the roles changed: "plain…" titles held for review, "review…" titles allowed, "deny…" still denied. */
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

const brokenDraft = '@id("x") forbid (principal, action resource);';

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner', 'olivia@acme.test');
  reviewer = await addPerson(h.db, acme.organization, 'reviewer', 'rita@acme.test');
  member = await addPerson(h.db, acme.organization, 'member', 'max@acme.test');
  ownerApi = await signIn(h.app, acme.organization, owner);
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(acme, owner);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const signedInPage = (org: TestOrganization, person: TestPerson): Promise<Page> =>
  signedInConsole(browser, origin, { slug: org.organization.slug, ...person }, pageErrors);

const navLink = (on: Page) => on.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Policy', exact: true });
const editor = (on = page) => on.getByLabel('Draft policy (Cedar)');
const dryRun = (on = page) => on.getByRole('region', { name: /^Dry run over/ });
const shadow = () => page.getByRole('region', { name: 'Shadow' });
const editorStatus = (on = page) => on.getByRole('region', { name: 'Change the policy' }).getByRole('status');
const focusedId = (on = page) => on.evaluate(() => (globalThis as any).document.activeElement?.id as string);
const agentWrite = (org: TestOrganization, title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
const policyInForce = async (session = ownerApi) => json(await session.request({ method: 'GET', url: '/console/api/v1/policy' })).data;

async function expectAccessible(on = page) {
  expect(await accessibilityViolations(on)).toEqual([]);
}

describe('the Policy page', () => {
  it('shows an owner the policy in force, and a draft that starts as it', async () => {
    // A known history for the dry run: two plain writes (allowed), one held, one denied.
    const statuses = [];
    for (const title of ['plain one', 'plain two', 'review one', 'deny one']) statuses.push((await agentWrite(acme, title)).statusCode);
    expect(statuses).toEqual([201, 201, 202, 403]);

    await navLink(page).click();
    await page.getByRole('heading', { level: 1, name: 'Policy' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'The policy in force: version 2' }).waitFor();
    expect(await page.getByRole('region', { name: 'The policy in force: version 2' }).innerText()).toMatch(/Saved by test on/);
    await expect.poll(() => editor().inputValue()).toBe(testPolicy);
    for (const name of ['Change the policy', 'Shadow', 'Suggested rules', 'Versions', 'Approvals and what agents see']) {
      await page.getByRole('heading', { level: 2, name }).waitFor();
    }
    await shadow().getByText('No draft runs in shadow.').waitFor();
    expect(await page.title()).toBe('Policy · Gatehouse');
    await expectAccessible();
  });

  it('dry-runs a draft over the recorded decisions and lists the decisions it would change', async () => {
    await editor().fill(plainDraft);
    await page.getByLabel('Dry run over the decisions of').selectOption('24h');
    await page.getByRole('button', { name: 'Check and dry-run' }).click();
    await dryRun().waitFor();
    await editorStatus().getByText('Dry run done: 3 of 4 decisions would change.').waitFor();
    expect(await dryRun().getByRole('heading').innerText()).toBe('Dry run over the last 24 hours');
    expect(await dryRun().innerText()).toContain('Replayed 4 recorded decisions: 3 would change.');
    const counts = dryRun().getByRole('list', { name: 'Changes, by what the policy in force decided and what the draft would' }).getByRole('listitem');
    expect(await counts.allInnerTexts()).toEqual(['allow → review: 2', 'review → allow: 1']);

    const table = dryRun().getByRole('table', { name: 'Decisions the draft would change, newest first' });
    for (const header of ['When', 'Operation', 'Key', 'Was → would be', 'Rules']) await table.getByRole('columnheader', { name: header }).waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows).toHaveLength(3);
    expect(rows.filter((row) => /tasks\.create\s+test agent[\s\S]*allow → review\s+review-plain[\s\S]*Plain titles now need a look/.test(row))).toHaveLength(2);
    expect(rows.filter((row) => /review → allow\s+allow-writes/.test(row))).toHaveLength(1);
    await expectAccessible();
    await screenshot(page, 'policy');

    // A dry run changes nothing.
    expect((await policyInForce()).version).toBe(2);
    await editor().press('End');
    await editor().pressSequentially(' ');
    await dryRun().getByText('The draft has changed since this dry run').waitFor();
  });

  it("refuses to save a draft that does not parse, with Cedar's message and the place by the editor; the old version stays", async () => {
    await editor().fill(brokenDraft);
    await page.getByRole('button', { name: 'Save as new version' }).click();
    const problem = page.locator('#policy-draft-problem');
    await problem.waitFor();
    expect(await problem.innerText()).toMatch(/Cedar could not read the draft: .+ at line 1, column \d+[\s\S]*Line 1, column \d+:\s+@id\("x"\) forbid \(principal, action resource\);/);
    expect(await editor().getAttribute('aria-invalid')).toBe('true');
    expect((await editor().getAttribute('aria-describedby'))?.split(' ')).toContain('policy-draft-problem');
    // The keyboard is put in the draft, at the place Cedar names.
    expect(await focusedId()).toBe('policy-draft');
    const column = Number(/column (\d+)/.exec(await problem.innerText())![1]);
    expect(await editor().evaluate((field) => (field as any).selectionStart)).toBe(column - 1);
    await expectAccessible();
    expect((await policyInForce()).version).toBe(2);

    // So does a dry run of it.
    await page.getByRole('button', { name: 'Check and dry-run' }).click();
    await problem.waitFor();
    expect(await page.getByRole('region', { name: 'The policy in force: version 2' }).count()).toBe(1);
  });

  it('saves a valid draft as version 3, which decides writes from then on and heads the versions', async () => {
    await editor().fill(plainDraft);
    expect(await page.locator('#policy-draft-problem').count()).toBe(1);
    await page.getByLabel('Comment (optional)').fill('Plain titles need a look');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await editorStatus().getByText('Saved as version 3: it decides every write from now on.').waitFor();
    await page.getByRole('heading', { level: 2, name: 'The policy in force: version 3' }).waitFor();
    expect(await page.locator('#policy-draft-problem').count()).toBe(0);
    expect(await editor().getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('Comment (optional)').inputValue()).toBe('');

    expect(await policyInForce()).toMatchObject({ version: 3, source: plainDraft, created_by: 'olivia@acme.test' });
    const { rows } = await h.db.query(`SELECT data FROM audit_events WHERE org_id = $1 AND type = 'policy.updated' ORDER BY id DESC LIMIT 1`, [acme.organization.id]);
    expect(rows[0].data).toMatchObject({ version: 3, comment: 'Plain titles need a look' });
    expect((await agentWrite(acme, 'plain held now')).statusCode).toBe(202);

    const versions = page.getByRole('region', { name: 'Versions' }).locator('summary');
    expect((await versions.allInnerTexts()).map((text) => text.replace(/\s+·.*$/, ''))).toEqual(['Version 3 In force', 'Version 2', 'Version 1']);
    expect(await versions.first().innerText()).toContain('by olivia@acme.test');
    await versions.nth(1).click();
    await page.getByRole('region', { name: 'Versions' }).getByText('review-when-asked').waitFor();

    // Saving the policy in force again is nothing to save.
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await editorStatus().getByText('The draft is version 3, the policy in force: there is nothing to save.').waitFor();
    expect((await policyInForce()).version).toBe(3);
    await expectAccessible();
  });

  it('runs a draft in shadow: a write decided by both shows where they disagree; then stops it', async () => {
    await editor().fill(denyPlainDraft);
    await page.getByRole('button', { name: 'Run in shadow' }).click();
    await editorStatus().getByText('The draft runs in shadow').waitFor();
    await shadow().getByText(/Running\s+since .*, started by you\. 0 writes decided by both since; they agreed on every one\./).waitFor();

    // The policy in force still decides: held, not denied.
    expect((await agentWrite(acme, 'plain three')).statusCode).toBe(202);
    await page.reload();
    await shadow().getByText(/1 write decided by both since; the draft would have decided 1 of them otherwise\./).waitFor();
    expect(await shadow().getByRole('list').getByRole('listitem').allInnerTexts()).toEqual(['review → deny: 1']);
    const rows = await shadow().getByRole('table', { name: 'Where the draft in shadow disagreed, newest first' }).locator('tbody tr').allInnerTexts();
    expect(rows).toEqual([expect.stringMatching(/tasks\.create\s+test agent[\s\S]*review → deny\s+deny-plain/)]);
    // The draft after a reload is the policy in force again; the shadow's draft is under its own heading.
    await expect.poll(() => editor().inputValue()).toBe(plainDraft);
    await shadow().getByText('The draft in shadow', { exact: true }).click();
    expect(await shadow().locator('details pre').textContent()).toBe(denyPlainDraft);
    await expectAccessible();

    await shadow().getByRole('button', { name: 'Stop the shadow' }).click();
    await shadow().getByRole('status').getByText('The shadow is stopped').waitFor();
    await shadow().getByText('No draft runs in shadow.').waitFor();
    expect(await focusedId()).toBe('shadow-heading');
    expect(json(await ownerApi.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow).toBeNull();
  });

  it("changes the organization's switches: self-approval and the policy text agents see", async () => {
    const region = page.getByRole('region', { name: 'Approvals and what agents see' });
    const selfApproval = region.getByRole('switch', { name: 'Let people approve writes made with API keys they created' });
    const shareText = region.getByRole('switch', { name: 'Show agents the Cedar text of the rules that decided' });
    const organization = async () => json(await ownerApi.request({ method: 'GET', url: '/console/api/v1/organization' })).data;
    expect(await selfApproval.getAttribute('aria-checked')).toBe('false');
    expect(await shareText.getAttribute('aria-checked')).toBe('false');
    expect(await organization()).toMatchObject({ self_approval: false, share_policy_text: false });

    await selfApproval.click();
    await region.getByText('On: a person may approve a held write made with an API key they created.').waitFor();
    expect(await selfApproval.getAttribute('aria-checked')).toBe('true');
    await shareText.focus();
    await page.keyboard.press('Space');
    await region.getByText('On: an agent told of a Deny or a Review also gets the Cedar text').waitFor();
    expect(await organization()).toMatchObject({ self_approval: true, share_policy_text: true });
    await expectAccessible();

    await selfApproval.click();
    await region.getByText('Off: nobody approves a write made with an API key they created').waitFor();
    expect(await organization()).toMatchObject({ self_approval: false, share_policy_text: true });
  });

  it('chooses what an Approve link needs: signed in as its person (a new organization’s choice) or the link alone', async () => {
    const region = page.getByRole('region', { name: 'Approvals and what agents see' });
    const choice = region.getByRole('radiogroup', { name: 'Approve links in emails' });
    const signedIn = choice.getByRole('radio', { name: 'Signed in as that person' });
    const anyone = choice.getByRole('radio', { name: 'Anyone with the link' });
    const organization = async () => json(await ownerApi.request({ method: 'GET', url: '/console/api/v1/organization' })).data;
    expect(await signedIn.isChecked()).toBe(true);
    expect(await organization()).toMatchObject({ approve_links: 'signed_in' });

    await anyone.check();
    await expect.poll(async () => (await organization()).approve_links).toBe('anyone_with_link');
    await choice.getByText('whoever can read the email can approve with it').waitFor();
    expect(await anyone.isChecked()).toBe(true);
    await expectAccessible();
    await screenshot(page, 'policy-approve-links');
    const { rows } = await h.db.query("SELECT data FROM audit_events WHERE org_id = $1 AND type = 'organization.updated' ORDER BY id DESC LIMIT 1", [acme.organization.id]);
    expect(rows[0].data).toEqual({ approveLinks: 'anyone_with_link' });

    // From the keyboard: the arrow moves the choice, and saves it.
    await anyone.focus();
    await page.keyboard.press('ArrowDown');
    await expect.poll(async () => (await organization()).approve_links).toBe('signed_in');
    expect(await signedIn.isChecked()).toBe(true);
  });

  it('shows a reviewer the policy and its versions, with no editor, no shadow controls and no switches', async () => {
    const reviewers = await signedInPage(acme, reviewer);
    await navLink(reviewers).click();
    await reviewers.getByRole('heading', { level: 1, name: 'Policy' }).waitFor();
    const inForce = reviewers.getByRole('region', { name: 'The policy in force: version 3' });
    await inForce.waitFor();
    expect(await inForce.locator('pre').textContent()).toBe(plainDraft);
    await reviewers.getByRole('region', { name: 'Shadow' }).getByText('No draft runs in shadow.').waitFor();
    await reviewers.getByRole('region', { name: 'Versions' }).getByText('Version 1').waitFor();
    expect(await editor(reviewers).count()).toBe(0);
    for (const name of ['Check and dry-run', 'Save as new version', 'Run in shadow', 'Stop the shadow']) {
      expect(await reviewers.getByRole('button', { name }).count()).toBe(0);
    }
    expect(await reviewers.getByRole('switch').count()).toBe(0);
    expect(await reviewers.getByRole('radiogroup').count()).toBe(0);
    expect(await reviewers.getByRole('heading', { name: 'Approvals and what agents see' }).count()).toBe(0);
    await expectAccessible(reviewers);
    await reviewers.context().close();
  });

  it('is not offered to a member, and says so at its address', async () => {
    const members = await signedInPage(acme, member);
    expect(await navLink(members).count()).toBe(0);
    await members.goto(`${origin}/policy`);
    await members.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
    await members.context().close();
  });
});

describe('suggested rules', () => {
  const statusReview = `@id("allow-writes") permit (principal, action, resource);

@id("review-updates") @decision("review") @reason("Updates need a person")
permit (principal, action == Action::"tasks.update", resource);
`;

  it('shows an allow rule for writes people approved every time, with its evidence; "Add to draft" puts it in the draft, unsaved', async () => {
    const lab = await h.createOrganization({ name: 'Lab', policy: statusReview });
    const labOwner = await addPerson(h.db, lab.organization, 'owner', 'otto@lab.test');
    for (let i = 0; i < 12; i++) {
      const task = json(await agentWrite(lab, `task ${i}`)).data;
      const held = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: lab.readWriteToken, payload: { status: i % 2 ? 'done' : 'in_progress' } });
      expect(held.statusCode).toBe(202);
      const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${json(held).review.id}/approve`, token: lab.reviewerToken });
      expect(approved.statusCode).toBe(200);
    }
    const labApi = await signIn(h.app, lab.organization, labOwner);
    const [suggestion] = json(await labApi.request({ method: 'GET', url: '/console/api/v1/policy/suggestions' })).data.suggestions;
    expect(suggestion).toMatchObject({ operation: 'tasks.update', changed_fields: ['status'] });

    const labPage = await signedInPage(lab, labOwner);
    await navLink(labPage).click();
    await expect.poll(() => editor(labPage).inputValue()).toBe(statusReview);
    const suggestions = labPage.getByRole('region', { name: 'Suggested rules' });
    const card = suggestions.getByRole('article', { name: 'Allow tasks.update changing only status' });
    await card.waitFor();
    expect(await card.innerText()).toMatch(
      /People approved all 12 tasks\.update changing only status (on|between) .+, all made with key key_\w+, none denied; held by review-updates\./,
    );
    expect(await card.locator('pre').innerText()).toBe(suggestion.rule);
    await expectAccessible(labPage);

    await card.getByRole('button', { name: 'Add to draft' }).click();
    await expect.poll(() => editor(labPage).inputValue()).toBe(`${statusReview.trimEnd()}\n\n${suggestion.rule}\n`);
    await editorStatus(labPage).getByText(/^Added suggested-tasks-update-status-[\w-]+ to the end of the draft: dry-run it, then save it to adopt it\.$/).waitFor();
    expect(await focusedId(labPage)).toBe('policy-draft');
    await card.getByText('In the draft: dry-run it, then save it to adopt it.').waitFor();
    expect(await card.getByRole('button', { name: 'Add to draft' }).count()).toBe(0);

    // The person dry-runs it: the twelve held updates would have run at once. Nothing is saved by itself.
    await labPage.getByRole('button', { name: 'Check and dry-run' }).click();
    await editorStatus(labPage).getByText(/^Dry run done: 12 of \d+ decisions would change\.$/).waitFor();
    expect(await dryRun(labPage).getByRole('listitem').allInnerTexts()).toEqual(['review → allow: 12']);
    await expectAccessible(labPage);
    expect((await policyInForce(labApi)).version).toBe(2);
    await labPage.context().close();
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
