import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadDigest } from '../../domain/gate/reviews/signing';
import { revokeApiKey } from '../../domain/identity/api-keys';
import { cliManager, updatePerson } from '../../domain/identity/people';
import { publicOnly } from '../../domain/notify/outbound';
import { updateReviewNotificationSettings } from '../../domain/notify/settings';
import { answerThroughResponseUrl, responseUrlRefusal, slackNotice } from '../../domain/notify/slack';
import { offerSlackLink } from '../../domain/notify/slack-links';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { startReceiver, type Receiver } from '../support/receiver';
import { digestOf, settledDigestOf } from '../support/tenant-estate';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// Slack's Approve and Deny buttons on the real Temporal dev server and PostgreSQL: presses signed exactly as Slack
// signs them (a form whose payload is the press as JSON; v0= HMAC-SHA256 of v0:timestamp:body), a loopback receiver
// standing in for both the incoming webhook and each press's response_url, and Slack users linked through the
// console as a person would link theirs.

let h: Harness;
let slack: Receiver;
const policy = { allowLoopback: true, allowPrivate: false };
const system = { type: 'system' as const, id: 'test' };
const secret = '8f742231b10e8888abcd99yyyzzz85a5';
let sequence = 0;

/** Big tasks need two people's approval; titles starting with "review" one. */
const quorumPolicy = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("two-people-for-big-tasks") @decision("review") @approvals("2") @reason("A big task needs two people's approval")
permit (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "big*" };
`;

interface Org {
  test: TestOrganization;
  id: string;
  reviewer: TestPerson & { session: ConsoleSession };
}

beforeAll(async () => {
  slack = await startReceiver();
  h = await startHarness({ webhooks: {} });
});

afterAll(async () => {
  await h?.close();
  await slack?.close();
});

/** An organization posting to the receiver, its Slack app's signing secret set through the console, and a signed-in reviewer. */
async function slackOrganization(cedar?: string): Promise<Org> {
  const test = await h.createOrganization(cedar ? { policy: cedar } : {});
  const id = test.organization.id;
  await updateReviewNotificationSettings(h.db, h.secrets, id, { slackWebhookUrl: `${slack.url}/webhook/${id}` }, policy, system);
  const owner = await addPerson(h.db, test.organization, 'owner');
  const ownerSession = await signIn(h.app, test.organization, owner);
  const set = await ownerSession.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { signing_secret: secret } });
  expect(set.statusCode, set.body).toBe(200);
  const person = await addPerson(h.db, test.organization, 'reviewer');
  return { test, id, reviewer: { ...person, session: await signIn(h.app, test.organization, person) } };
}

/** Holds a write, and answers its Slack message once the receiver has it. */
async function hold(org: Org, title: string) {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.test.readWriteToken, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  const reviewId = json(response).review.id as string;
  const [message] = await slack.waitFor(1, (request) => request.path.startsWith('/webhook/') && request.body.includes(reviewId));
  return { reviewId, message: JSON.parse(message!.body) };
}

interface Press {
  action: 'gatehouse.approve' | 'gatehouse.deny' | 'gatehouse.open' | string;
  value: string;
  user?: string;
  team?: string;
  /** The workspace the Slack user belongs to, when not the one they pressed in (Slack Connect). */
  userTeam?: string;
  /** The Slack user's name (their handle), as Slack's press carries it. */
  userName?: string;
  responseUrl?: string;
}

/** A press as Slack sends it: form-encoded payload, signed with the app's secret at `timestamp`. */
function signedPress(orgRef: string, press: Press, { signWith = secret, timestamp = Math.floor(Date.now() / 1000), type = 'block_actions' } = {}) {
  const team = press.team ?? 'T0GATEHOUSE';
  const n = sequence++;
  const payload = {
    type,
    user: { id: press.user ?? 'U0REVIEWER', username: press.userName ?? 'rev.iewer', name: press.userName ?? 'rev.iewer', team_id: press.userTeam ?? team },
    api_app_id: 'A0GATEHOUSE',
    token: 'deprecated-verification-token',
    container: { type: 'message', message_ts: '1732150000.000100', channel_id: 'C0REVIEWS', is_ephemeral: false },
    trigger_id: `${n}.1732150000.abcdef`,
    team: { id: team, domain: 'gatehouse-test' },
    channel: { id: 'C0REVIEWS', name: 'reviews' },
    response_url: press.responseUrl ?? `${slack.url}/respond/${n}`,
    actions: [{ action_id: press.action, block_id: 'gatehouse.review', text: { type: 'plain_text', text: 'Approve' }, value: press.value, type: 'button', action_ts: `${timestamp}.${n}` }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', signWith).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature };
  const send = (extra: Record<string, string> = {}) => h.app.inject({ method: 'POST', url: `/slack/interactions/${orgRef}`, headers: { ...headers, ...extra }, payload: body });
  return { send, responseUrlPath: `/respond/${n}`, body, headers };
}

const answeredAt = async (path: string) => JSON.parse((await slack.waitFor(1, (request) => request.path === path))[0]!.body);

const buttonOf = (message: { blocks: { type: string; elements?: { action_id?: string; value?: string; style?: string; url?: string }[] }[] }, action: string) =>
  message.blocks.find((block) => block.type === 'actions')!.elements!.find((element) => element.action_id === action)!;

/** The one-time link's secret in a press's answer: the link's fragment. */
const offerIn = (text: string) => /\/slack\/link#([A-Za-z0-9_-]+)/.exec(text)![1]!;

/** Links a Slack user to the person as a person does: a first press answers with a one-time link they confirm signed in. */
async function link(org: Org, value: string, person: { session: ConsoleSession }, user = 'U0REVIEWER') {
  const press = signedPress(org.id, { action: 'gatehouse.approve', value, user });
  const pressed = await press.send();
  expect(pressed.statusCode, pressed.body).toBe(200);
  const token = offerIn(json(pressed).text);
  const confirmed = await person.session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: user } });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  return token;
}

const reviewOf = async (org: Org, reviewId: string) => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.test.reviewerToken })).data;
const tasksTitled = async (org: Org, title: string) => (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [org.id, title])).rows.length;

describe("a held write's Slack message", () => {
  it('carries Approve and Deny bound to the review and the digest of the payload it holds, and a link to its page', async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review the slack message');
    const { rows } = await h.db.query('SELECT d.operation, d.input FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.id = $1', [reviewId]);
    const digest = payloadDigest({ review_id: reviewId, operation: rows[0].operation, input: rows[0].input, edit: null, proposed_edit: null });
    expect(message.text).toContain(`<http://gatehouse.test/reviews/${reviewId}|Open the review>`);
    expect(buttonOf(message, 'gatehouse.approve')).toMatchObject({ value: `${reviewId}:${digest}`, style: 'primary' });
    expect(buttonOf(message, 'gatehouse.deny')).toMatchObject({ value: `${reviewId}:${digest}`, style: 'danger' });
    expect(buttonOf(message, 'gatehouse.open').url).toBe(`http://gatehouse.test/reviews/${reviewId}`);
    expect(JSON.stringify(message.blocks)).toContain('The title asks for a review');
  });
});

describe('a press by a linked reviewer', () => {
  it('decides: the write is applied once, the trail says Slack and who, and the message is replaced naming them; its replay is refused', async () => {
    const org = await slackOrganization();
    const title = 'review and approve from slack';
    const { reviewId, message } = await hold(org, title);
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    expect((await reviewOf(org, reviewId)).status).toBe('pending');

    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    const pressed = await press.send();
    expect(pressed.statusCode, pressed.body).toBe(200);
    const update = await answeredAt(press.responseUrlPath);
    expect(update.replace_original).toBe(true);
    expect(update.text).toMatch(new RegExp(`^Approved by ${org.reviewer.email.replace(/[.]/g, '\\.')} — tasks\\.create (applied|is being applied)`));
    expect(JSON.stringify(update.blocks)).not.toContain('gatehouse.approve');

    await expect.poll(async () => (await reviewOf(org, reviewId)).applied_at, { timeout: 10_000 }).not.toBeNull();
    const review = await reviewOf(org, reviewId);
    expect(review).toMatchObject({ status: 'approved', decided_via: 'slack', decided_by: { user_id: org.reviewer.user.id } });
    expect(await tasksTitled(org, title)).toBe(1);
    const { rows } = await h.db.query("SELECT actor_type, actor_id, data FROM audit_events WHERE review_id = $1 AND type = 'review.approved'", [reviewId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_type: 'user', actor_id: org.reviewer.user.id, data: { via: 'slack', payload_digest: value.split(':')[1] } });

    // The very same request again (as an attacker who saw it would send it, within the window): refused, nothing changes.
    const before = await settledDigestOf(h.db, org.id);
    const replayed = await press.send();
    expect(replayed.statusCode).toBe(401);
    expect(json(replayed).error.message).toMatch(/received before/);
    expect(await digestOf(h.db, org.id)).toEqual(before);
    expect(await tasksTitled(org, title)).toBe(1);
  }, 30_000);

  it('a Deny denies, and nothing is written', async () => {
    const org = await slackOrganization();
    const title = 'review and deny from slack';
    const { reviewId, message } = await hold(org, title);
    const value = buttonOf(message, 'gatehouse.deny').value!;
    await link(org, value, org.reviewer);
    const press = signedPress(org.id, { action: 'gatehouse.deny', value });
    expect((await press.send()).statusCode).toBe(200);
    expect((await answeredAt(press.responseUrlPath)).text).toBe(`Denied by ${org.reviewer.email} — nothing was written (tasks.create).`);
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'denied', decided_via: 'slack' });
    expect(await tasksTitled(org, title)).toBe(0);
  }, 30_000);

  it('a write withdrawn while it waited (its key revoked) is refused, saying so, and its buttons go', async () => {
    const org = await slackOrganization();
    const title = 'review what Slack cannot approve';
    const { reviewId, message } = await hold(org, title);
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    const { rows } = await h.db.query('SELECT d.api_key_id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.id = $1', [reviewId]);
    await revokeApiKey(h.db, withdrawReviewsOfKey, org.id, rows[0].api_key_id);

    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    expect((await press.send()).statusCode).toBe(200);
    const answer = await answeredAt(press.responseUrlPath);
    expect(answer.replace_original).toBe(true);
    expect(answer.text).toContain(`Nothing was decided: review ${reviewId} was withdrawn (the API key that made the write was revoked)`);
    expect(JSON.stringify(answer.blocks)).not.toContain('gatehouse.approve');
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'withdrawn', decided_by: null, approvals: { given: [] } });
    expect(await tasksTitled(org, title)).toBe(0);
  }, 30_000);

  it('a Slack user linked to a person who is a member now is refused: only reviewers and above decide; a member cannot link at all', async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review by a member from slack');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    await updatePerson(h.db, { orgId: org.id, userId: org.reviewer.user.id }, { role: 'member' }, cliManager);
    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    const pressed = await press.send();
    expect(pressed.statusCode).toBe(200);
    expect(json(pressed).text).toMatch(/is a member; only reviewers, admins and owners decide/);
    const answer = await answeredAt(press.responseUrlPath);
    expect(answer).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });

    const member = await addPerson(h.db, org.test.organization, 'member');
    const memberSession = await signIn(h.app, org.test.organization, member);
    const offered = await signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0MEMBER' }).send();
    const token = offerIn(json(offered).text);
    const refused = await memberSession.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: 'U0MEMBER' } });
    expect(refused.statusCode).toBe(403);
    expect((await h.db.query("SELECT 1 FROM slack_links WHERE org_id = $1 AND slack_user_id = 'U0MEMBER'", [org.id])).rows).toEqual([]);
  }, 30_000);

  it("in an organization that needs approvals signed with a passkey, it is refused with a link to finish on the review's page", async () => {
    const org = await slackOrganization();
    await h.db.query('UPDATE organizations SET approvals_need_passkey = true WHERE id = $1', [org.id]);
    const { reviewId, message } = await hold(org, 'review with a passkey only');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    const pressed = await press.send();
    expect(pressed.statusCode).toBe(200);
    expect(json(pressed).text).toContain(`needs every approval signed with a passkey`);
    expect(json(pressed).text).toContain(`http://gatehouse.test/reviews/${reviewId}`);
    expect(await answeredAt(press.responseUrlPath)).toMatchObject({ response_type: 'ephemeral' });
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });
  }, 30_000);
});

describe('a held changeset in Slack', () => {
  /** Holds a divisible changeset of three writes (a project, a task in it for review, another task), and answers its Slack message. */
  async function holdChangeset(org: Org, tag: string) {
    const response = await h.request({
      method: 'POST',
      url: '/api/v1/changesets',
      token: org.test.readWriteToken,
      payload: {
        mode: 'divisible',
        items: [
          { ref: 'proj', operation: 'projects.create', input: { name: `Project ${tag}` } },
          { operation: 'tasks.create', input: { title: `review ${tag}`, project_id: '$ref:proj' } },
          { operation: 'tasks.create', input: { title: `Follow up ${tag}` } },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(202);
    const reviewId = json(response).review.id as string;
    const [message] = await slack.waitFor(1, (request) => request.path.startsWith('/webhook/') && request.body.includes(reviewId));
    return { reviewId, message: JSON.parse(message!.body) };
  }
  const written = async (org: Org, tag: string) =>
    (await h.db.query("SELECT title AS name FROM tasks WHERE org_id = $1 AND title LIKE '%' || $2 UNION ALL SELECT name FROM projects WHERE org_id = $1 AND name LIKE '%' || $2", [org.id, tag])).rows.length;

  it('Approve all applies every item together, Deny all writes none; the answers name the changeset; rejecting items is left to the review’s page', async () => {
    const org = await slackOrganization();
    const approved = await holdChangeset(org, 'slack-approved');
    expect(approved.message.blocks[0].text.text).toBe('Review needed: test agent wants to run a changeset of 3 writes: tasks.create ×2, projects.create');
    expect(JSON.stringify(approved.message.blocks)).toContain('to reject some items and approve the rest, open the review in the console');
    expect(buttonOf(approved.message, 'gatehouse.approve')).toMatchObject({ text: { text: 'Approve all 3' } });
    expect(buttonOf(approved.message, 'gatehouse.open').url).toBe(`http://gatehouse.test/reviews/${approved.reviewId}`);
    const value = buttonOf(approved.message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);

    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    expect((await press.send()).statusCode).toBe(200);
    const update = await answeredAt(press.responseUrlPath);
    expect(update.replace_original).toBe(true);
    expect(update.text).toMatch(new RegExp(`^Approved by ${org.reviewer.email.replace(/[.]/g, '\\.')} — the changeset of 3 writes (applied|is being applied)\\.$`));
    await expect.poll(async () => (await reviewOf(org, approved.reviewId)).applied_at, { timeout: 10_000 }).not.toBeNull();
    expect((await reviewOf(org, approved.reviewId)).changeset.items.map((item: { verdict: string | null }) => item.verdict)).toEqual([null, null, null]);
    expect(await written(org, 'slack-approved')).toBe(3);

    const denied = await holdChangeset(org, 'slack-denied');
    const deny = signedPress(org.id, { action: 'gatehouse.deny', value: buttonOf(denied.message, 'gatehouse.deny').value! });
    expect((await deny.send()).statusCode).toBe(200);
    expect((await answeredAt(deny.responseUrlPath)).text).toBe(`Denied by ${org.reviewer.email} — nothing was written (the changeset of 3 writes).`);
    expect(await reviewOf(org, denied.reviewId)).toMatchObject({ status: 'denied', decided_via: 'slack' });
    expect(await written(org, 'slack-denied')).toBe(0);
  }, 30_000);
});

describe('the same rules as the console', () => {
  it("a press counts as one approval of a write that needs two; once a reviewer edits the write, the old message's buttons are refused and go", async () => {
    const org = await slackOrganization(quorumPolicy);
    const title = 'big plan from slack';
    const { reviewId, message } = await hold(org, title);
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    const press = signedPress(org.id, { action: 'gatehouse.approve', value });
    expect((await press.send()).statusCode).toBe(200);
    expect(await answeredAt(press.responseUrlPath)).toMatchObject({ text: expect.stringMatching(/^Your approval counts \(1 of 2\)/), response_type: 'ephemeral' });
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [{ user_id: org.reviewer.user.id, via: 'slack' }] } });
    // Pressed again by the same person: counted once.
    const twice = signedPress(org.id, { action: 'gatehouse.approve', value });
    expect(json(await twice.send()).text).toMatch(/you have approved review .* already/);

    // Another message's worth: a second reviewer edits the held write as they approve (their approval counts as the first of the edit).
    const second = await addPerson(h.db, org.test.organization, 'admin');
    const secondSession = await signIn(h.app, org.test.organization, second);
    const edited = await secondSession.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/approve`, payload: { edit: { title: 'big plan, edited' } } });
    expect(edited.statusCode, edited.body).toBe(200);
    const stale = signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0ADMIN' });
    await link(org, value, { session: secondSession }, 'U0ADMIN');
    const before = await settledDigestOf(h.db, org.id);
    const pressed = await stale.send();
    expect(json(pressed).text).toMatch(/^Nothing was decided: the write held in review .* has changed/);
    expect(await answeredAt(stale.responseUrlPath)).toMatchObject({ replace_original: true });
    expect(await digestOf(h.db, org.id)).toEqual({ ...before, slack_requests_seen: expect.any(Array) });
    expect(await tasksTitled(org, 'big plan, edited')).toBe(0);
  }, 40_000);
});

describe('presses that are refused and change nothing', () => {
  it('forged, signed with another secret, stale, unsigned, or for an organization without a secret', async () => {
    const org = await slackOrganization();
    const title = 'review and refuse forged presses';
    const { reviewId, message } = await hold(org, title);
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    const before = await settledDigestOf(h.db, org.id);

    const genuine = signedPress(org.id, { action: 'gatehouse.approve', value });
    const forged = await genuine.send({ 'x-slack-signature': `v0=${'0'.repeat(64)}` });
    const truncated = await genuine.send({ 'x-slack-signature': 'v0=abc' });
    const otherSecret = await signedPress(org.id, { action: 'gatehouse.approve', value }, { signWith: 'not-the-signing-secret-at-all' }).send();
    const stale = await signedPress(org.id, { action: 'gatehouse.approve', value }, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 }).send();
    const future = await signedPress(org.id, { action: 'gatehouse.approve', value }, { timestamp: Math.floor(Date.now() / 1000) + 6 * 60 }).send();
    const unsigned = await h.app.inject({ method: 'POST', url: `/slack/interactions/${org.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: genuine.body });
    // The body changed after signing (the value of another review, say).
    const tampered = await h.app.inject({ method: 'POST', url: `/slack/interactions/${org.id}`, headers: genuine.headers, payload: genuine.body.replace('gatehouse.approve', 'gatehouse.deny') });
    for (const [name, answer] of Object.entries({ forged, truncated, otherSecret, stale, future, unsigned, tampered })) {
      expect(answer.statusCode, `${name}: ${answer.body}`).toBe(401);
      expect(json(answer).error.code, name).toBe('unauthorized');
    }
    expect(json(stale).error.message).toMatch(/five minutes/);
    expect(json(forged).error.message).toMatch(/not signed with the signing secret of the organization its Request URL names/);

    // An unknown organization, one without a signing secret (by id or slug), and a bad signature: one answer, so that
    // the endpoint tells nobody which organizations exist or use Slack.
    const unknown = await signedPress('org_nosuchorganization', { action: 'gatehouse.approve', value }).send();
    const unconfigured = await h.createOrganization();
    const noSecret = await signedPress(unconfigured.organization.id, { action: 'gatehouse.approve', value }).send();
    const noSecretBySlug = await signedPress(unconfigured.organization.slug, { action: 'gatehouse.approve', value }).send();
    for (const answer of [unknown, noSecret, noSecretBySlug, otherSecret]) {
      expect(answer.statusCode, answer.body).toBe(401);
      expect(json(answer).error, answer.body).toEqual(json(forged).error);
    }

    expect(await digestOf(h.db, org.id)).toEqual(before);
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });
    expect(await tasksTitled(org, title)).toBe(0);
    // And the genuine one, sent once, still decides: the refusals spent nothing of it.
    expect((await genuine.send()).statusCode).toBe(200);
    await expect.poll(async () => (await reviewOf(org, reviewId)).status).toBe('approved');
  }, 30_000);

  it('signed but not a press Gatehouse can take: not a form, bad JSON, another type, an unknown action, a broken value (400); the link button asks nothing', async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review and refuse odd presses');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    const signRaw = (body: string, contentType = 'application/x-www-form-urlencoded') => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      return h.app.inject({ method: 'POST', url: `/slack/interactions/${org.id}`, headers: { 'content-type': contentType, 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature }, payload: body });
    };
    expect((await signRaw('payload=%7Bnot-json')).statusCode).toBe(400);
    expect((await signRaw('nothing=here')).statusCode).toBe(400);
    expect((await signRaw('{"payload":{}}', 'application/json')).statusCode).toBe(415);
    expect((await signedPress(org.id, { action: 'gatehouse.approve', value }, { type: 'view_submission' }).send()).statusCode).toBe(400);
    const unknownAction = await signedPress(org.id, { action: 'gatehouse.launch', value }).send();
    expect(unknownAction.statusCode).toBe(400);
    expect(json(unknownAction).error.message).toMatch(/Unknown action/);
    expect((await signedPress(org.id, { action: 'gatehouse.approve', value: `${reviewId}:nodigest` }).send()).statusCode).toBe(400);
    const opened = await signedPress(org.id, { action: 'gatehouse.open', value: '' }).send();
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toBe('');
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending' });
  }, 30_000);

  it('from another workspace than the one the app is bound to', async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review from the wrong workspace');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    // The first verified press binds the workspace.
    await link(org, value, org.reviewer);
    const bound = await org.reviewer.session.request({ method: 'GET', url: '/console/api/v1/notifications/slack-links' });
    expect(json(bound).data.links).toEqual([{ workspace: 'T0GATEHOUSE', workspace_name: 'gatehouse-test', slack_user: 'U0REVIEWER', slack_user_name: 'rev.iewer', linked_at: expect.any(String) }]);
    const before = await settledDigestOf(h.db, org.id);
    const elsewhere = await signedPress(org.id, { action: 'gatehouse.approve', value, team: 'T0ELSEWHERE' }).send();
    expect(elsewhere.statusCode).toBe(401);
    expect(json(elsewhere).error.message).toMatch(/bound to the workspace T0GATEHOUSE/);
    expect(await digestOf(h.db, org.id)).toEqual(before);
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending' });
  }, 30_000);

  it('by a Slack user of another workspace (Slack Connect) in a channel of the bound one, even when that user id is linked', async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review by a slack connect guest');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    const before = await settledDigestOf(h.db, org.id);
    // Not bound yet: the press names two workspaces, and binds neither.
    const unbound = await signedPress(org.id, { action: 'gatehouse.approve', value, userTeam: 'T0ELSEWHERE' }).send();
    expect(unbound.statusCode).toBe(401);
    expect(json(unbound).error.message).toMatch(/of the workspace T0ELSEWHERE, not T0GATEHOUSE/);
    expect(await digestOf(h.db, org.id)).toEqual(before);

    await link(org, value, org.reviewer);
    const guest = signedPress(org.id, { action: 'gatehouse.approve', value, userTeam: 'T0ELSEWHERE' });
    const pressed = await guest.send();
    expect(pressed.statusCode).toBe(401);
    expect(json(pressed).error).toEqual(json(await signedPress(org.id, { action: 'gatehouse.approve', value, team: 'T0ELSEWHERE' }).send()).error);
    expect(json(pressed).error.message).toMatch(/bound to the workspace T0GATEHOUSE, not T0ELSEWHERE/);
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });
  }, 30_000);

  it("whose response_url is not Slack's: the press is decided, and nothing is posted there", async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review with a strange response url');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer);
    // Under the production rules, the local receiver is not Slack: refused before anything is sent.
    const seen = slack.received.length;
    const notice = slackNotice('Approved');
    await expect(answerThroughResponseUrl(`${slack.url}/respond/elsewhere`, notice, true, publicOnly)).rejects.toThrow(/is not Slack's/);
    await expect(answerThroughResponseUrl('https://attacker.example/respond', notice, true, publicOnly)).rejects.toThrow(/is not Slack's/);
    expect(responseUrlRefusal('https://hooks.slack.com/actions/T0GATEHOUSE/1/abc', publicOnly)).toBeUndefined();
    for (const url of ['http://hooks.slack.com/actions/x', 'https://hooks.slack.com.attacker.example/x', 'https://hooks.slack.com:8443/x', 'https://user:pw@hooks.slack.com/x', 'https://10.0.0.7/x']) {
      expect(responseUrlRefusal(url, publicOnly), url).toBeDefined();
    }
    // Where the rules open private addresses, a private stand-in is taken, still never a public host other than Slack's.
    expect(responseUrlRefusal('https://10.0.0.7/x', { allowLoopback: false, allowPrivate: true })).toBeUndefined();
    expect(responseUrlRefusal('https://attacker.example/x', { allowLoopback: true, allowPrivate: true })).toBeDefined();
    expect(responseUrlRefusal('http://169.254.169.254/x', { allowLoopback: true, allowPrivate: true })).toBeDefined();
    // Through the endpoint (the harness allows loopback): a public host that is not Slack's gets nothing.
    const pressed = await signedPress(org.id, { action: 'gatehouse.approve', value, responseUrl: 'https://attacker.example/respond' }).send();
    expect(pressed.statusCode).toBe(200);
    await expect.poll(async () => (await reviewOf(org, reviewId)).status).toBe('approved');
    expect(slack.received.slice(seen).filter((request) => request.path.startsWith('/respond/'))).toEqual([]);
  }, 30_000);
});

describe('linking a Slack user', () => {
  it("an unlinked press decides nothing and answers a one-time link; it links only when the person confirms it signed in, once, in the press's organization", async () => {
    const org = await slackOrganization();
    const other = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review by someone unlinked');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    const press = signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0NEWCOMER', userName: 'new.comer' });
    const pressed = await press.send();
    expect(pressed.statusCode).toBe(200);
    expect(json(pressed).text).toMatch(/not linked to a person of this organization yet, so nothing was decided/);
    const answer = await answeredAt(press.responseUrlPath);
    expect(answer).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    // The secret is in the link's fragment: it reaches Gatehouse in the bodies of the page's calls, never in an address.
    const token = /http:\/\/gatehouse\.test\/slack\/link#([A-Za-z0-9_-]{43}) /.exec(answer.text)![1]!;
    expect(answer.text).not.toContain('/slack/link/');
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });

    const offerOf = (session: ConsoleSession) => session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-link-offer', payload: { token } });
    const confirm = { method: 'POST' as const, url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: 'U0NEWCOMER' } };
    // Without a session, and by a person of another organization: refused, nothing linked.
    expect((await h.app.inject(confirm)).statusCode).toBe(401);
    const stranger = await other.reviewer.session.request(confirm);
    expect(stranger.statusCode).toBe(404);
    expect(json(stranger).error.message).toMatch(/another organization/);
    expect(json(await offerOf(other.reviewer.session)).data).toEqual({ offer: null });
    // Without the CSRF token: refused.
    const noCsrf = await org.reviewer.session.request({ ...confirm, headers: { 'x-csrf-token': 'wrong' } });
    expect(noCsrf.statusCode).toBe(403);
    expect((await h.db.query('SELECT 1 FROM slack_links WHERE org_id = ANY ($1)', [[org.id, other.id]])).rows).toEqual([]);
    // The token never travels in a query: the offer is read with it in the body.
    const inQuery = await org.reviewer.session.request({ method: 'GET', url: `/console/api/v1/notifications/slack-link-offer?token=${token}` });
    expect([404, 405]).toContain(inQuery.statusCode);

    // What it shows: who pressed, by Slack's ids and by the names Slack's signed press gave (the workspace's domain,
    // the user's handle), so that an offer forwarded from someone else's Slack user is visibly theirs.
    const shown = await offerOf(org.reviewer.session);
    expect(shown.statusCode, shown.body).toBe(200);
    expect(json(shown).data.offer).toEqual({
      workspace: 'T0GATEHOUSE',
      workspace_name: 'gatehouse-test',
      slack_user: 'U0NEWCOMER',
      slack_user_name: 'new.comer',
      expires_at: expect.any(String),
    });
    // Bound to the Slack user who pressed: the person confirms that user by name, and no other.
    const another = await org.reviewer.session.request({ ...confirm, payload: { token, slack_user: 'U0SOMEONE' } });
    expect(another.statusCode).toBe(422);
    expect(json(another).error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'slack_user', message: expect.stringContaining('U0NEWCOMER') }] } });
    const unnamed = await org.reviewer.session.request({ ...confirm, payload: { token } });
    expect(unnamed.statusCode).toBe(422);
    const extra = await org.reviewer.session.request({ ...confirm, payload: { token, slack_user: 'U0NEWCOMER', workspace: 'T0ELSEWHERE' } });
    expect(extra.statusCode).toBe(422);
    expect((await h.db.query('SELECT 1 FROM slack_links WHERE org_id = $1', [org.id])).rows).toEqual([]);
    const confirmed = await org.reviewer.session.request(confirm);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(json(confirmed).data).toMatchObject({ workspace: 'T0GATEHOUSE', workspace_name: 'gatehouse-test', slack_user: 'U0NEWCOMER', slack_user_name: 'new.comer' });
    expect(json(await offerOf(org.reviewer.session)).data).toEqual({ offer: null });
    const again = await org.reviewer.session.request(confirm);
    expect(again.statusCode).toBe(410);
    expect(json(again).error.code).toBe('link_invalid');
    const { rows } = await h.db.query("SELECT actor_id, resource_id, data FROM audit_events WHERE org_id = $1 AND type = 'slack.linked'", [org.id]);
    expect(rows).toEqual([
      {
        actor_id: org.reviewer.user.id,
        resource_id: org.reviewer.user.id,
        data: { slack_team_id: 'T0GATEHOUSE', slack_user_id: 'U0NEWCOMER', slack_team_domain: 'gatehouse-test', slack_user_name: 'new.comer' },
      },
    ]);
    expect(json(await org.reviewer.session.request({ method: 'GET', url: '/console/api/v1/notifications/slack-links' })).data.links).toEqual([
      { workspace: 'T0GATEHOUSE', workspace_name: 'gatehouse-test', slack_user: 'U0NEWCOMER', slack_user_name: 'new.comer', linked_at: expect.any(String) },
    ]);

    // Linked: the next press decides, as them.
    const decided = signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0NEWCOMER' });
    expect((await decided.send()).statusCode).toBe(200);
    expect((await answeredAt(decided.responseUrlPath)).text).toContain(`Approved by ${org.reviewer.email}`);

    // The person removes the link: the Slack user is a stranger again.
    const removeUrl = '/console/api/v1/notifications/slack-links?workspace=T0GATEHOUSE&slack_user=U0NEWCOMER';
    const removed = await org.reviewer.session.request({ method: 'DELETE', url: removeUrl });
    expect(json(removed).data).toEqual({ removed: true });
    expect(json(await org.reviewer.session.request({ method: 'DELETE', url: removeUrl })).data).toEqual({ removed: false });
    expect(json(await org.reviewer.session.request({ method: 'GET', url: '/console/api/v1/notifications/slack-links' })).data.links).toEqual([]);
    const afterwards = await hold(org, 'review after unlinking');
    const unlinked = await signedPress(org.id, { action: 'gatehouse.approve', value: buttonOf(afterwards.message, 'gatehouse.approve').value!, user: 'U0NEWCOMER' }).send();
    expect(json(unlinked).text).toMatch(/not linked/);
  }, 40_000);
  it("one Slack user per person and workspace: a newer link replaces the person's older one, and takes the Slack user from whoever had it", async () => {
    const org = await slackOrganization();
    const { reviewId, message } = await hold(org, 'review after linking twice');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    await link(org, value, org.reviewer, 'U0FIRST');
    await link(org, value, org.reviewer, 'U0SECOND');
    const linkedUsers = async () => (await h.db.query('SELECT user_id, slack_user_id FROM slack_links WHERE org_id = $1 ORDER BY slack_user_id', [org.id])).rows;
    expect(await linkedUsers()).toEqual([{ user_id: org.reviewer.user.id, slack_user_id: 'U0SECOND' }]);
    const first = await signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0FIRST' }).send();
    expect(json(first).text).toMatch(/not linked/);
    // U0SECOND is linked now, so its presses decide: the next offers are made as a press by it would have been.
    const confirmOffer = async (session: ConsoleSession) => {
      const { token } = await offerSlackLink(h.db, org.id, { teamId: 'T0GATEHOUSE', userId: 'U0SECOND' });
      const confirmed = await session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: 'U0SECOND' } });
      expect(confirmed.statusCode, confirmed.body).toBe(200);
    };
    // The same link confirmed again replaces nothing.
    await confirmOffer(org.reviewer.session);

    const colleague = await addPerson(h.db, org.test.organization, 'reviewer');
    await confirmOffer(await signIn(h.app, org.test.organization, colleague));
    expect(await linkedUsers()).toEqual([{ user_id: colleague.user.id, slack_user_id: 'U0SECOND' }]);
    const { rows } = await h.db.query("SELECT actor_id, resource_id, data FROM audit_events WHERE org_id = $1 AND type = 'slack.unlinked' ORDER BY id", [org.id]);
    expect(rows).toEqual([
      { actor_id: org.reviewer.user.id, resource_id: org.reviewer.user.id, data: { slack_team_id: 'T0GATEHOUSE', slack_user_id: 'U0FIRST', reason: 'replaced by a newer link' } },
      { actor_id: colleague.user.id, resource_id: org.reviewer.user.id, data: { slack_team_id: 'T0GATEHOUSE', slack_user_id: 'U0SECOND', reason: 'replaced by a newer link' } },
    ]);
    expect(await reviewOf(org, reviewId)).toMatchObject({ status: 'pending', approvals: { given: [] } });
  }, 30_000);

  it('an offer works for 15 minutes', async () => {
    const org = await slackOrganization();
    const { message } = await hold(org, 'review with an old offer');
    const pressed = await signedPress(org.id, { action: 'gatehouse.approve', value: buttonOf(message, 'gatehouse.approve').value!, user: 'U0LATE' }).send();
    const token = offerIn(json(pressed).text);
    const { rows } = await h.db.query("SELECT expires_at - created_at AS ttl FROM slack_link_offers WHERE org_id = $1 AND slack_user_id = 'U0LATE'", [org.id]);
    expect(rows[0].ttl).toMatchObject({ minutes: 15 });
    await h.db.query("UPDATE slack_link_offers SET expires_at = now() - interval '1 second' WHERE org_id = $1 AND slack_user_id = 'U0LATE'", [org.id]);
    const late = await org.reviewer.session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: 'U0LATE' } });
    expect(late.statusCode).toBe(410);
    expect((await h.db.query('SELECT 1 FROM slack_links WHERE org_id = $1', [org.id])).rows).toEqual([]);
  }, 30_000);
});

describe("the organization's Slack app in the console", () => {
  it('owners set the signing secret, which is never shown again, and see the Request URL; reviewers may not', async () => {
    const org = await slackOrganization();
    const owner = await addPerson(h.db, org.test.organization, 'owner');
    const session = await signIn(h.app, org.test.organization, owner);
    const read = await session.request({ method: 'GET', url: '/console/api/v1/notifications/slack-app' });
    expect(json(read).data).toEqual({ request_url: `http://gatehouse.test/slack/interactions/${org.id}`, signing_secret: 'set', workspace: null });
    expect(read.body).not.toContain(secret);
    const bad = await session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { workspace: 'not a team' } });
    expect(bad.statusCode).toBe(422);
    const bound = await session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { workspace: 'T0BOUND' } });
    expect(json(bound).data).toMatchObject({ signing_secret: 'set', workspace: 'T0BOUND' });
    const { rows } = await h.db.query("SELECT data FROM audit_events WHERE org_id = $1 AND type = 'organization.updated' ORDER BY id", [org.id]);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.map((row) => row.data)).toContainEqual({ slack_signing_secret: 'set' });
    const byReviewer = await org.reviewer.session.request({ method: 'GET', url: '/console/api/v1/notifications/slack-app' });
    expect(byReviewer.statusCode).toBe(403);
    const removed = await session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { signing_secret: null } });
    expect(json(removed).data.signing_secret).toBeNull();
  });
  it("changing or removing the signing secret unlinks every Slack user of the organization and voids open offers; setting the same one changes nothing", async () => {
    const org = await slackOrganization();
    const owner = await addPerson(h.db, org.test.organization, 'owner');
    const session = await signIn(h.app, org.test.organization, owner);
    const patch = (payload: Record<string, unknown>) => session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload });
    const { message } = await hold(org, 'review before the secret changes');
    const value = buttonOf(message, 'gatehouse.approve').value!;
    const colleague = await addPerson(h.db, org.test.organization, 'admin');
    await link(org, value, org.reviewer);
    await link(org, value, { session: await signIn(h.app, org.test.organization, colleague) }, 'U0COLLEAGUE');
    const open = await signedPress(org.id, { action: 'gatehouse.approve', value, user: 'U0PENDING' }).send();
    const openToken = offerIn(json(open).text);
    const links = async () => (await h.db.query('SELECT slack_user_id FROM slack_links WHERE org_id = $1 ORDER BY slack_user_id', [org.id])).rows;
    const unlinkedAudit = async () =>
      (await h.db.query("SELECT actor_id, resource_id, data FROM audit_events WHERE org_id = $1 AND type = 'slack.unlinked' ORDER BY id", [org.id])).rows;

    expect((await patch({ signing_secret: secret })).statusCode).toBe(200);
    expect(await links()).toHaveLength(2);

    const changed = 'a-new-signing-secret-0123456789';
    expect((await patch({ signing_secret: changed })).statusCode).toBe(200);
    expect(await links()).toEqual([]);
    expect(await unlinkedAudit()).toEqual(
      expect.arrayContaining([
        { actor_id: owner.user.id, resource_id: org.reviewer.user.id, data: { slack_team_id: 'T0GATEHOUSE', slack_user_id: 'U0REVIEWER', reason: 'signing secret changed' } },
        { actor_id: owner.user.id, resource_id: colleague.user.id, data: { slack_team_id: 'T0GATEHOUSE', slack_user_id: 'U0COLLEAGUE', reason: 'signing secret changed' } },
      ]),
    );
    expect(await unlinkedAudit()).toHaveLength(2);
    const stale = await org.reviewer.session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token: openToken, slack_user: 'U0PENDING' } });
    expect(stale.statusCode).toBe(410);
    // Signed with the new secret, the reviewer's Slack user is a stranger until they link it again.
    const pressed = await signedPress(org.id, { action: 'gatehouse.approve', value }, { signWith: changed }).send();
    expect(pressed.statusCode, pressed.body).toBe(200);
    expect(json(pressed).text).toMatch(/not linked/);

    const relinked = await signedPress(org.id, { action: 'gatehouse.approve', value }, { signWith: changed }).send();
    const token = offerIn(json(relinked).text);
    expect((await org.reviewer.session.request({ method: 'POST', url: '/console/api/v1/notifications/slack-links', payload: { token, slack_user: 'U0REVIEWER' } })).statusCode).toBe(200);
    expect((await patch({ signing_secret: null })).statusCode).toBe(200);
    expect(await links()).toEqual([]);
    expect(await unlinkedAudit()).toHaveLength(3);
  }, 40_000);
});
