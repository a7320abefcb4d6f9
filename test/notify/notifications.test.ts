import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliManager, createPersonalToken, createUser, updatePerson } from '../../domain/identity/people';
import { newId } from '../../domain/kit/ids';
import { updateReviewNotificationSettings } from '../../domain/notify/settings';
import { emitAuditHeads } from '../../domain/notify/witness';
import { sealAuditChain } from '../../domain/audit/ledger';
import { createApiKey } from '../../domain/identity/api-keys';
import { issueDecisionLinks, readDecisionLink } from '../../domain/notify/decision-links';
import { connectAppDirectly } from '../support/connected-app';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { readMail, startMailCatcher, unfolded, type MailCatcher } from '../support/mail-catcher';
import { startReceiver, type Receiver } from '../support/receiver';

// Reviewer notifications on the real Temporal dev server and PostgreSQL: a held write's reviewers get an email
// (a local SMTP server) and a Slack-compatible message (a loopback receiver) with the review's page; a review that
// waits escalates to admins, then owners, on Temporal timers, skipping people who are inactive or out of office;
// and the ledger's head goes to a witnessing endpoint.

let h: Harness;
let catcher: MailCatcher;
let slack: Receiver;
const policy = { allowLoopback: true, allowPrivate: false };
const system = { type: 'system' as const, id: 'test' };
const mails = () => catcher.mails;
const mailTo = (address: string, marker: string, waitMs?: number) => catcher.mailTo(address, marker, waitMs);

async function person(org: TestOrganization, role: 'reviewer' | 'admin' | 'owner', name: string) {
  return createUser(h.db, { orgId: org.organization.id, email: `${name}@${org.organization.slug}.test`, role });
}

const hold = async (org: TestOrganization, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect(response.statusCode).toBe(202);
  return json(response).review.id as string;
};

beforeAll(async () => {
  catcher = await startMailCatcher();
  slack = await startReceiver();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url, disableAfter: 1 }, reviewExpiryMs: 60_000 });
});

afterAll(async () => {
  await h?.close();
  await slack?.close();
  await catcher?.close();
});

describe('a held write', () => {
  it("tells the organization's reviewers by email and Slack, with the review's page", async () => {
    const org = await h.createOrganization();
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { slackWebhookUrl: `${slack.url}/slack` }, policy, system);
    const reviewId = await hold(org, 'review the quarterly numbers');
    const reviewer = `reviewer@${org.organization.slug}.test`;
    const mail = await mailTo(reviewer, reviewId);
    expect(unfolded(mail.raw)).toContain(`http://gatehouse.test/reviews/${reviewId}`);
    expect(mail.raw).toMatch(/Subject: Review needed: test agent wants to run tasks\.create/);
    expect(unfolded(mail.raw)).toContain('The title asks for a review');
    const [message] = await slack.waitFor(1, (request) => request.body.includes(reviewId));
    expect(JSON.parse(message!.body).text).toContain(`<http://gatehouse.test/reviews/${reviewId}|Open the review>`);
    // The member is not a reviewer: nothing for them.
    expect(mails().filter((m) => m.to.includes(`member@${org.organization.slug}.test`))).toEqual([]);
  });

  it('sends no email to a reviewer who turned it off', async () => {
    const org = await h.createOrganization();
    const quiet = await person(org, 'reviewer', 'quiet');
    await h.db.query("UPDATE users SET notifications = '{}' WHERE id = $1", [quiet.id]);
    const reviewId = await hold(org, 'review this quietly');
    await mailTo(`reviewer@${org.organization.slug}.test`, reviewId);
    expect(mails().filter((m) => m.to.includes(quiet.email))).toEqual([]);
  });
});

describe("a connected app's held write", () => {
  it('names the app as its own, unverified name, numbered when a key of the organization already has it: in the email, in Slack and on decision links', async () => {
    const org = await h.createOrganization();
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { slackWebhookUrl: `${slack.url}/slack` }, policy, system);
    const owner = await person(org, 'owner', 'owner');
    // A key people made, and an app that calls itself by that key's name (and tries to slip a link into Slack).
    await createApiKey(h.db, { orgId: org.organization.id, label: 'Claude <https://evil.example|approve>', access: 'read_write' });
    const app = await connectAppDirectly(h.db, { orgId: org.organization.id, personId: owner.id, name: 'Claude <https://evil.example|approve>', publicUrl });
    expect(app.key.label).toBe('Claude <https://evil.example|approve> (2)');
    const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: app.token, payload: { title: 'review the app' } });
    expect(response.statusCode, response.body).toBe(202);
    const reviewId = json(response).review.id as string;

    const agent = '“Claude <https://evil.example|approve> (2)” (unverified app name)';
    const mail = readMail(await mailTo(`reviewer@${org.organization.slug}.test`, reviewId));
    expect(mail.subject).toBe(`Review needed: ${agent} wants to run tasks.create`);
    expect(mail.text).toContain('“Claude <https://evil.example|approve> (2)” is the name a connected app (OAuth) gave itself; nobody verified it');

    const [message] = await slack.waitFor(1, (request) => request.body.includes(reviewId));
    const sent = JSON.parse(message!.body);
    expect(sent.blocks[0].text.text).toBe(`Review needed: ${agent} wants to run tasks.create`);
    expect(JSON.stringify(sent.blocks)).toContain('nobody verified it');
    // Slack's markup (the message's text, mrkdwn blocks) never reads the app's name as a link; plain text shows it as it is.
    expect(sent.text).toContain('Claude &lt;https://evil.example|approve&gt; (2)');
    const marked = [sent.text, ...JSON.stringify(sent.blocks).match(/"type":"mrkdwn","text":"(?:[^"\\]|\\.)*"/g)!];
    for (const text of marked) expect(text).not.toContain('<https://evil.example');

    const links = await issueDecisionLinks(h.db, org.organization.id, reviewId, [owner.id]);
    const view = await readDecisionLink(h.db, links.get(owner.id)!.approve);
    expect(view.review).toMatchObject({ agent: 'Claude <https://evil.example|approve> (2)', agent_label_verified: false });
  });

  it('a key people made is named as it was written, marked verified', async () => {
    const org = await h.createOrganization();
    const reviewId = await hold(org, 'review the key');
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.reviewerToken })).data;
    expect(review.submitted_by).toMatchObject({ api_key_label: 'test agent', api_key_label_verified: true });
    const mail = readMail(await mailTo(`reviewer@${org.organization.slug}.test`, reviewId));
    expect(mail.subject).toBe('Review needed: test agent wants to run tasks.create');
    expect(mail.text).not.toContain('nobody verified');
  });
});

describe('a held changeset', () => {
  /** A changeset of five writes, one held: a project, a task in it for review, and three tasks moved to done. */
  async function holdChangeset(org: TestOrganization, mode: 'all_or_nothing' | 'divisible' = 'all_or_nothing') {
    const ids: string[] = [];
    for (const title of ['Call Acme', 'Send the quote', 'Book the demo']) {
      ids.push(json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } })).data.id);
    }
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/changesets',
      token: org.readWriteToken,
      payload: {
        mode,
        items: [
          { ref: 'proj', operation: 'projects.create', input: { name: 'Acme rollout' } },
          { operation: 'tasks.create', input: { title: 'review the Acme contract', project_id: '$ref:proj' } },
          ...ids.map((id) => ({ operation: 'tasks.update', input: { id, status: 'done' } })),
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(202);
    return json(response).review.id as string;
  }
  const headline = 'test agent wants to run a changeset of 5 writes: tasks.update ×3, projects.create, tasks.create';

  it('is told as what it holds: how many writes and which, each with its decision; the links and buttons decide it whole', async () => {
    const org = await h.createOrganization();
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { slackWebhookUrl: `${slack.url}/slack` }, policy, system);
    const reviewId = await holdChangeset(org);
    const mail = readMail(await mailTo(`reviewer@${org.organization.slug}.test`, reviewId));
    expect(mail.subject).toBe(`Review needed: ${headline}`);
    expect(mail.text).toContain(
      [
        `Review needed: ${headline}`,
        '',
        'Why it was held: item 2 (tasks.create): The title asks for a review',
        '',
        'The 5 writes, in order:',
        '1. projects.create (ref proj): allowed — Ordinary writes are allowed',
        '2. tasks.create: held — The title asks for a review',
        '3. tasks.update: allowed — Ordinary writes are allowed',
        '4. tasks.update: allowed — Ordinary writes are allowed',
        '5. tasks.update: allowed — Ordinary writes are allowed',
        'All or nothing: approving applies all 5 together in one transaction, denying writes none.',
        '',
        'Approve all 5: http://gatehouse.test/decide#',
      ].join('\n'),
    );
    expect(mail.text).toMatch(/\nDeny all 5: http:\/\/gatehouse\.test\/decide#[A-Za-z0-9_-]{43}\n/);
    expect(mail.text).not.toContain('changesets.submit');

    const [message] = await slack.waitFor(1, (request) => request.body.includes(reviewId));
    const sent = JSON.parse(message!.body);
    expect(sent.text).toContain(`Review needed: ${headline}`);
    expect(sent.blocks[0].text.text).toBe(`Review needed: ${headline}`);
    const blockText = JSON.stringify(sent.blocks);
    expect(blockText).toContain('*The 5 writes:*\\n1. projects.create (ref proj): allowed');
    expect(blockText).toContain('2. tasks.create: held — The title asks for a review');
    const buttons = sent.blocks.find((block: { type: string }) => block.type === 'actions').elements.map((button: { text: { text: string } }) => button.text.text);
    expect(buttons).toEqual(['Approve all 5', 'Deny all 5', 'Open the review']);
  });

  it('divisible: the email and Slack say that rejecting some items is done on the review’s page; escalation names the writes too', async () => {
    const org = await h.createOrganization();
    const admin = await person(org, 'admin', 'admin');
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { slackWebhookUrl: `${slack.url}/slack`, reviewEscalationMs: 1500 }, policy, system);
    const reviewId = await holdChangeset(org, 'divisible');
    const mode = 'Divisible: approving applies all 5 together, denying writes none; to reject some items and approve the rest, open the review in the console.';
    const mail = readMail(await mailTo(`reviewer@${org.organization.slug}.test`, reviewId));
    expect(mail.text).toContain(mode);
    expect(mail.text).toContain(`Or open the review in the console: http://gatehouse.test/reviews/${reviewId}`);
    const [message] = await slack.waitFor(1, (request) => request.body.includes(reviewId));
    expect(JSON.parse(message!.body).blocks).toContainEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: mode }] });

    const escalated = readMail(await mailTo(admin.email, reviewId));
    expect(escalated.subject).toMatch(
      /^Escalated to admins: test agent's changeset of 5 writes \(tasks\.update ×3, projects\.create, tasks\.create\) has waited \d+ min for a review$/,
    );
  });
});

describe('escalation', () => {
  it('tells admins, then owners, on durable timers; the review records it; inactive and out-of-office people are skipped', async () => {
    const org = await h.createOrganization();
    const orgId = org.organization.id;
    // An admin linked to an inactive team member, and another out of office now: both skipped.
    const away = await person(org, 'admin', 'away');
    const gone = await person(org, 'admin', 'gone');
    const present = await person(org, 'admin', 'present');
    const owner = await person(org, 'owner', 'boss');
    const [inactiveMember, travellingMember] = [newId('mem'), newId('mem')];
    await h.db.query(`INSERT INTO team_members (id, org_id, name, active) VALUES ($1, $3, 'Gone', false), ($2, $3, 'Away', true)`, [
      inactiveMember,
      travellingMember,
      orgId,
    ]);
    await updatePerson(h.db, { orgId, userId: gone.id }, { teamMemberId: inactiveMember }, cliManager);
    await updatePerson(h.db, { orgId, userId: away.id }, { teamMemberId: travellingMember }, cliManager);
    const booked = await h.request({
      method: 'POST',
      url: '/api/v1/calendar/events',
      token: org.readWriteToken,
      payload: {
        title: 'Holiday',
        kind: 'out_of_office',
        starts_at: new Date(Date.now() - 3_600_000).toISOString(),
        ends_at: new Date(Date.now() + 86_400_000).toISOString(),
        attendee_ids: [travellingMember],
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    expect(json(booked).data.kind).toBe('out_of_office');
    await updateReviewNotificationSettings(h.db, h.secrets, orgId, { reviewEscalationMs: 2000 }, policy, system);

    const reviewId = await hold(org, 'review and wait too long');
    await mailTo(`reviewer@${org.organization.slug}.test`, reviewId);
    const escalated = await mailTo(present.email, reviewId);
    expect(escalated.raw).toMatch(/Subject: Escalated to admins/);
    const review = async () => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.reviewerToken })).data;
    expect((await review()).escalation).toMatchObject({ to: 'admins' });
    await mailTo(owner.email, reviewId);
    await expect.poll(async () => (await review()).escalation?.to).toBe('owners');
    for (const skipped of [away, gone]) expect(mails().filter((m) => m.to.includes(skipped.email))).toEqual([]);

    const { rows } = await h.db.query("SELECT data FROM audit_events WHERE type = 'review.escalated' AND review_id = $1 ORDER BY id", [reviewId]);
    expect(rows.map((row) => row.data)).toEqual([
      { tier: 'admins', notified: [present.id] },
      { tier: 'owners', notified: [owner.id] },
    ]);
  }, 30_000);

  it('escalates on time across a restart of the worker (the wait is a Temporal timer)', async () => {
    const org = await h.createOrganization();
    const admin = await person(org, 'admin', 'later');
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { reviewEscalationMs: 3000 }, policy, system);
    const reviewId = await hold(org, 'review across a restart');
    await mailTo(`reviewer@${org.organization.slug}.test`, reviewId);
    await h.restartWorker();
    // The timer fires while no worker may poll: its task waits out the stopped worker's sticky queue, and a busy
    // machine's shutdown waits for the activities in flight. What is checked is that it fires, not how soon.
    const escalated = await mailTo(admin.email, reviewId, 40_000);
    expect(escalated.raw).toMatch(/Subject: Escalated to admins/);
  }, 60_000);

  it('a review decided before its wait is not escalated', async () => {
    const org = await h.createOrganization();
    await person(org, 'admin', 'admin');
    await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { reviewEscalationMs: 1500 }, policy, system);
    const reviewId = await hold(org, 'review and decide in time');
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken, payload: {} });
    expect(approved.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(mails().filter((m) => m.to.includes(`admin@${org.organization.slug}.test`))).toEqual([]);
    const { rows } = await h.db.query('SELECT escalated_to FROM reviews WHERE id = $1', [reviewId]);
    expect(rows[0].escalated_to).toBeNull();
  });

  it('with no reviewer available, the first tier with someone is told at once', async () => {
    const org = await h.createOrganization();
    await h.db.query("UPDATE users SET deactivated_at = now() WHERE org_id = $1 AND role = 'reviewer'", [org.organization.id]);
    const admin = await person(org, 'admin', 'first');
    const reviewId = await hold(org, 'review with nobody to review');
    const mail = await mailTo(admin.email, reviewId);
    expect(mail.raw).toMatch(/Subject: Review needed/);
  });
});

describe('owners told, and nobody left unseen', () => {
  it("tells the owners when an endpoint is switched off after its deliveries kept failing", async () => {
    const org = await h.createOrganization();
    const owner = await person(org, 'owner', 'keeper');
    const token = (await createPersonalToken(h.db, owner)).token;
    const receiver = await startReceiver();
    try {
      receiver.answerWith(...Array(3).fill(500));
      const created = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token, payload: { url: `${receiver.url}/down`, event_types: ['write.applied'] } });
      const endpointId = json(created).data.endpoint.id;
      expect((await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'never accepted' } })).statusCode).toBe(201);
      const mail = await mailTo(owner.email, endpointId);
      expect(mail.raw).toMatch(/Subject: Webhook switched off/);
      // Marked told once the email went.
      const state = async () => (await h.db.query('SELECT enabled, owners_to_tell FROM webhook_endpoints WHERE id = $1', [endpointId])).rows[0];
      await expect.poll(state).toEqual({ enabled: false, owners_to_tell: false });
    } finally {
      await receiver.close();
    }
  });

  it('when every reviewer, admin and owner is away, the owners are told all the same', async () => {
    const org = await h.createOrganization();
    const orgId = org.organization.id;
    await h.db.query("UPDATE users SET deactivated_at = now() WHERE org_id = $1 AND role = 'reviewer'", [orgId]);
    const owner = await person(org, 'owner', 'away-owner');
    const member = newId('mem');
    await h.db.query(`INSERT INTO team_members (id, org_id, name) VALUES ($1, $2, 'Owner on leave')`, [member, orgId]);
    await updatePerson(h.db, { orgId, userId: owner.id }, { teamMemberId: member }, cliManager);
    await h.db.query(
      `INSERT INTO events (id, org_id, title, kind, starts_at, ends_at, attendee_ids) VALUES ($1, $2, 'Leave', 'out_of_office', now() - interval '1 hour', now() + interval '1 day', $3)`,
      [newId('cal'), orgId, [member]],
    );
    const reviewId = await hold(org, 'review with everyone away');
    await mailTo(owner.email, reviewId);
  });

  it('takes an escalation wait up to 30 days', async () => {
    const org = await h.createOrganization();
    const settings = await updateReviewNotificationSettings(h.db, h.secrets, org.organization.id, { reviewEscalationMs: 30 * 86_400_000 }, policy, system);
    expect(settings.reviewEscalationMs).toBe(30 * 86_400_000);
  });
});

describe('the audit ledger witness', () => {
  it("sends each day's head to the endpoints that witness it, once a day", async () => {
    const org = await h.createOrganization();
    const receiver = await startReceiver();
    try {
      const owner = await person(org, 'owner', 'witness');
      const token = (await createPersonalToken(h.db, owner)).token;
      const created = await h.request({
        method: 'POST',
        url: '/api/v1/webhook-endpoints',
        token,
        payload: { url: `${receiver.url}/witness`, event_types: ['audit.head'] },
      });
      const { secret } = json(created).data;
      await sealAuditChain(h.db, org.organization.id, { lagMs: 0 });
      const { rows } = await h.db.query('SELECT seq, encode(chain, $2) AS chain, last_event_id FROM audit_chain_heads WHERE org_id = $1', [
        org.organization.id,
        'hex',
      ]);
      expect(await emitAuditHeads(h.db)).toBeGreaterThanOrEqual(1);
      await emitAuditHeads(h.db);
      const [request] = await receiver.waitFor(1);
      const event = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
      expect(event).toMatchObject({ type: 'audit.head', data: { seq: Number(rows[0].seq), chain: rows[0].chain, last_event_id: rows[0].last_event_id } });
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
