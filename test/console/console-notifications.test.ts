import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../domain/kit/ids';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, signIn, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The console's Settings → Notifications page in Chromium against the real api and PostgreSQL: an owner sets how
// held writes escalate and which Slack-compatible webhook hears of them, and sees the API's refusals by their
// fields; a reviewer picks their own email; a member is not offered the page. And on the People page, an owner
// links a person to their team member, whom escalation consults.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let owner: TestPerson;
let reviewer: TestPerson;
let member: TestPerson;
let page: Page;
const slackUrl = 'http://127.0.0.1:9/slack';
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner', 'olivia@acme.test');
  reviewer = await addPerson(h.db, acme.organization, 'reviewer', 'rita@acme.test');
  member = await addPerson(h.db, acme.organization, 'member', 'max@acme.test');
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(owner);
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const signedInPage = (person: TestPerson): Promise<Page> =>
  signedInConsole(browser, origin, { slug: acme.organization.slug, ...person }, pageErrors);

const navLink = (on: Page, name: string) => on.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
const escalation = () => page.getByRole('region', { name: 'Review escalation and Slack' });
const waitField = () => page.getByLabel('Wait before the next tier');
const urlField = () => page.getByLabel('Incoming webhook URL');
const focusedId = (on: Page) => on.evaluate(() => (globalThis as any).document.activeElement?.id as string);
/** The row, its Slack webhook URL opened (it is kept sealed). */
const settingsInDatabase = async () => {
  const row = (await h.db.query('SELECT review_escalation_ms, slack_webhook_url FROM organizations WHERE id = $1', [acme.organization.id])).rows[0];
  if (row.slack_webhook_url !== null) expect(row.slack_webhook_url).toMatch(/^sealed:v1:test:/);
  return { ...row, slack_webhook_url: row.slack_webhook_url && h.secrets.open(row.slack_webhook_url, `organizations.slack_webhook_url:${acme.organization.id}`) };
};
const notificationsOf = async (person: TestPerson) => (await h.db.query('SELECT notifications FROM users WHERE id = $1', [person.user.id])).rows[0].notifications;

describe('Settings → Notifications', () => {
  it('lets an owner set the escalation wait and a Slack webhook, kept across a reload', async () => {
    await navLink(page, 'Notifications').click();
    await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
    await page.getByRole('heading', { level: 2, name: 'Your email notifications' }).waitFor();
    await escalation().waitFor();
    // A new organization never escalates and posts to no Slack.
    await expect.poll(() => page.getByRole('radio', { name: 'Never escalate: only reviewers are told' }).isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: 'None: no Slack messages' }).isChecked()).toBe(true);
    expect(await waitField().isDisabled()).toBe(true);
    expect(await escalation().innerText()).toMatch(/Reviewers, at once[\s\S]*Admins, if it still waits[\s\S]*Owners[\s\S]*deactivated, linked to an inactive team member, or out of office/);
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.getByRole('radio', { name: 'Escalate after a wait' }).check();
    await waitField().fill('30m');
    await page.getByRole('radio', { name: 'Post each held write and escalation to an incoming webhook' }).check();
    await urlField().fill(slackUrl);
    await page.getByRole('button', { name: 'Save escalation and Slack' }).click();
    await escalation().getByRole('status').getByText('Saved: reviews escalate every 30m (admins, then owners); Slack messages go to the webhook.').waitFor();
    expect(await settingsInDatabase()).toEqual({ review_escalation_ms: 30 * 60_000, slack_webhook_url: slackUrl });

    await page.reload();
    await escalation().waitFor();
    await expect.poll(() => waitField().inputValue()).toBe('30m');
    expect(await urlField().inputValue()).toBe(slackUrl);
    expect(await page.getByRole('radio', { name: 'Escalate after a wait' }).isChecked()).toBe(true);
    const session = await signIn(h.app, acme.organization, owner);
    expect(json(await session.request({ method: 'GET', url: '/console/api/v1/notifications/settings' })).data).toEqual({
      review_escalation: '30m',
      slack_webhook_url: slackUrl,
    });
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'notifications');
  });

  it("shows the API's refusals of a wait and of a private address by their fields, and changes nothing", async () => {
    await waitField().fill('soon');
    await page.getByRole('button', { name: 'Save escalation and Slack' }).click();
    const waitProblem = page.locator('#escalation-wait-problem');
    await waitProblem.waitFor();
    expect(await waitProblem.innerText()).toMatch(/a wait such as 30m, 2h or 45s/);
    expect(await waitField().getAttribute('aria-invalid')).toBe('true');
    expect((await waitField().getAttribute('aria-describedby'))?.split(' ')).toContain('escalation-wait-problem');
    expect(await focusedId(page)).toBe('escalation-wait');
    expect(await accessibilityViolations(page)).toEqual([]);

    await waitField().fill('2h');
    await urlField().fill('https://10.0.0.1/hook');
    await page.getByRole('button', { name: 'Save escalation and Slack' }).click();
    const urlProblem = page.locator('#slack-url-problem');
    await urlProblem.waitFor();
    expect(await urlProblem.innerText()).toMatch(/10\.0\.0\.1 is a private address, not a public one/);
    expect(await urlField().getAttribute('aria-invalid')).toBe('true');
    expect(await waitField().getAttribute('aria-invalid')).toBeNull();
    expect(await focusedId(page)).toBe('slack-url');
    expect(await escalation().getByRole('status').innerText()).toBe('');
    expect(await accessibilityViolations(page)).toEqual([]);

    expect(await settingsInDatabase()).toEqual({ review_escalation_ms: 30 * 60_000, slack_webhook_url: slackUrl });
    await page.reload();
    await expect.poll(() => waitField().inputValue()).toBe('30m');
    expect(await urlField().inputValue()).toBe(slackUrl);
  });

  it('saves "never escalate" and "no Slack" as nothing', async () => {
    await page.getByRole('radio', { name: 'Never escalate: only reviewers are told' }).check();
    await page.getByRole('radio', { name: 'None: no Slack messages' }).check();
    await page.getByRole('button', { name: 'Save escalation and Slack' }).click();
    await escalation().getByRole('status').getByText('Saved: reviews never escalate; no Slack messages.').waitFor();
    expect(await settingsInDatabase()).toEqual({ review_escalation_ms: null, slack_webhook_url: null });
  });

  it('shows a reviewer only their own email notifications; one turned off is no longer theirs', async () => {
    const reviewers = await signedInPage(reviewer);
    await navLink(reviewers, 'Notifications').click();
    await reviewers.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
    const escalated = reviewers.getByRole('checkbox', { name: /A review waited too long and was escalated to you/ });
    await escalated.waitFor();
    expect(await reviewers.getByRole('checkbox').count()).toBe(3);
    expect(await escalated.isChecked()).toBe(true);
    expect(await reviewers.getByRole('heading', { name: 'Review escalation and Slack' }).count()).toBe(0);
    expect(await reviewers.getByLabel('Wait before the next tier').count()).toBe(0);
    expect(await accessibilityViolations(reviewers)).toEqual([]);

    await escalated.uncheck();
    await reviewers.getByRole('button', { name: 'Save email notifications' }).click();
    await reviewers.getByRole('status').getByText('Saved: you get 2 of 3 notifications by email.').waitFor();
    const kept = await notificationsOf(reviewer);
    expect(kept).not.toContain('review.escalated');
    expect(kept).toEqual(expect.arrayContaining(['review.held', 'webhook.disabled']));

    await reviewers.reload();
    await escalated.waitFor();
    expect(await escalated.isChecked()).toBe(false);
    expect(await reviewers.getByRole('checkbox', { name: /A write was held for review/ }).isChecked()).toBe(true);
    // The owner's choices are their own.
    expect(await notificationsOf(owner)).toContain('review.escalated');
    await reviewers.context().close();
  });

  it('is not offered to a member, and says so at its address', async () => {
    const members = await signedInPage(member);
    expect(await navLink(members, 'Notifications').count()).toBe(0);
    await members.goto(`${origin}/settings/notifications`);
    await members.getByRole('heading', { level: 1, name: 'Not for your role' }).waitFor();
    expect(await members.getByRole('checkbox').count()).toBe(0);
    expect(await accessibilityViolations(members)).toEqual([]);
    await members.context().close();
  });
});

describe('Settings → People: team members', () => {
  it('lets an owner link a person to a team member picked from the roster, and unlink; an unknown one is refused', async () => {
    const teamMemberId = newId('mem');
    await h.db.query('INSERT INTO team_members (id, org_id, name) VALUES ($1, $2, $3)', [teamMemberId, acme.organization.id, 'Rita Reviewer']);
    await navLink(page, 'People').click();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    await page.getByRole('columnheader', { name: 'Team member' }).waitFor();
    const rita = page.getByRole('row', { name: /rita@acme\.test/ });
    await rita.getByText('Not linked').waitFor();

    await rita.getByRole('button', { name: 'Link team member of rita@acme.test' }).click();
    const field = rita.getByLabel('Team member of rita@acme.test', { exact: true });
    expect(await focusedId(page)).toBe(await field.getAttribute('id'));
    expect(await accessibilityViolations(page)).toEqual([]);
    await field.selectOption({ label: 'Rita Reviewer' });
    await rita.getByRole('button', { name: 'Save team member of rita@acme.test' }).click();
    await page.getByRole('status').getByText('rita@acme.test is linked to team member Rita Reviewer.').waitFor();
    expect(await rita.getByRole('cell', { name: /Rita Reviewer/ }).count()).toBe(1);
    // The keyboard is back on the button that now changes the link.
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label'))).toBe('Change team member of rita@acme.test');
    const linked = async () => (await h.db.query('SELECT team_member_id FROM users WHERE id = $1', [reviewer.user.id])).rows[0].team_member_id;
    expect(await linked()).toBe(teamMemberId);
    const session = await signIn(h.app, acme.organization, owner);
    // A team member of no one here (or of another organization) is refused, and nothing changes.
    const unknown = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${reviewer.user.id}`, payload: { team_member_id: 'mem_nobody' } });
    expect(unknown.statusCode).toBe(422);
    expect(json(unknown).error.message).toContain('no team member mem_nobody in this organization');
    expect(await linked()).toBe(teamMemberId);
    const listed = json(await session.request({ method: 'GET', url: '/console/api/v1/people' })).data as { email: string; team_member_id: string | null }[];
    expect(listed.find((person) => person.email === 'rita@acme.test')?.team_member_id).toBe(teamMemberId);
    expect(await accessibilityViolations(page)).toEqual([]);

    await rita.getByRole('button', { name: 'Unlink team member of rita@acme.test' }).click();
    await page.getByRole('status').getByText('rita@acme.test is no longer linked to a team member.').waitFor();
    await rita.getByText('Not linked').waitFor();
    expect(await linked()).toBeNull();

    await rita.getByRole('button', { name: 'Link team member of rita@acme.test' }).click();
    await field.selectOption(teamMemberId);
    await rita.getByRole('button', { name: 'Save team member of rita@acme.test' }).press('Enter');
    await rita.getByRole('button', { name: 'Change team member of rita@acme.test' }).waitFor();
    expect(await linked()).toBe(teamMemberId);
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
