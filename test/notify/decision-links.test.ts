import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decisionLinkLimits } from '../../api/decision-links/routes';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { json, publicUrl, quorumPolicy, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { approvalChallenge } from '../../domain/gate/reviews/signing';
import { addPerson, signIn } from '../support/console';
import { linksIn, startMailCatcher, unfolded, type MailCatcher } from '../support/mail-catcher';
import { SoftwareAuthenticator } from '../support/software-authenticator';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// Decision links on the real Temporal dev server and PostgreSQL, from the email a held write sends (a local SMTP
// server) to the write applied: each told reviewer's email carries an Approve and a Deny link of their own, the
// token in the link's fragment and in the body of each call (never in a URL path or query); opening one changes
// nothing; confirming it decides once, as that person, under the console's rules; and a link is refused once used,
// expired, decided elsewhere, or when the write it was sent for has changed. These organizations let anyone with an
// Approve link confirm it (approve_links: anyone_with_link); approve-links.test.ts covers "signed in as that person".

let h: Harness;
let catcher: MailCatcher;
/** Each test calls from an address of its own, so that the routes' per-address limits count one test's calls. */
let address = 0;

beforeAll(async () => {
  catcher = await startMailCatcher();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url } });
});

afterAll(async () => {
  await h?.close();
  await catcher?.close();
});

beforeEach(() => {
  address += 1;
});

const remoteAddress = () => `10.0.${Math.floor(address / 250)}.${(address % 250) + 1}`;

const hold = async (token: string, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id as string;
};

/** An organization whose Approve links work by the link alone, as every organization's did before the setting. */
const linkOrganization = (settings: Parameters<Harness['createOrganization']>[0] = {}) => h.createOrganization({ approveLinks: 'anyone_with_link', ...settings });

/** The Approve and Deny tokens in the email to `email` about the review: each in its link's fragment. */
async function linksTo(email: string, reviewId: string) {
  const mail = await catcher.mailTo(email, reviewId);
  const [approve, deny, ...rest] = linksIn(mail, `${publicUrl}/decide#`).map((link) => link.slice(`${publicUrl}/decide#`.length));
  expect(rest).toEqual([]);
  expect(approve).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(deny).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { approve: approve!, deny: deny!, mail };
}

const post = (path: string, payload: unknown, extra: Partial<InjectOptions> = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/console/api/decision-links/${path}`,
    headers: { 'content-type': 'application/json', ...(extra.headers ?? {}) },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    remoteAddress: remoteAddress(),
  });

/** The link's page reads it: the token in the body. */
const read = (token: unknown) => post('read', { token });

/** The link's one button: its token, and what the person adds (a comment, a passkey's signature). */
const confirm = (token: unknown, payload: Record<string, unknown> | string = {}, extra: Partial<InjectOptions> = {}) =>
  post('confirm', typeof payload === 'string' ? payload : { token, ...payload }, extra);

const tasksTitled = async (org: TestOrganization, title: string) =>
  (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [org.organization.id, title])).rowCount;

const reviewOf = async (reviewId: string) =>
  (await h.db.query("SELECT status, decided_by, decided_via, CASE WHEN expires_at > now() THEN 'live' ELSE 'past' END AS deadline FROM reviews WHERE id = $1", [reviewId])).rows[0];

const auditOf = async (reviewId: string) =>
  (await h.db.query('SELECT type, actor_id, data FROM audit_events WHERE review_id = $1 ORDER BY id', [reviewId])).rows;

async function person(org: TestOrganization, role: 'reviewer' | 'admin' | 'owner' | 'member', name: string) {
  const user = await createUser(h.db, { orgId: org.organization.id, email: `${name}@${org.organization.slug}.test`, role });
  return { user, token: (await createPersonalToken(h.db, user)).token };
}

const reviewerOf = async (org: TestOrganization) =>
  (await h.db.query<{ id: string; email: string }>("SELECT id, email FROM users WHERE org_id = $1 AND email LIKE 'reviewer@%'", [org.organization.id])).rows[0]!;

describe('an email’s decision links', () => {
  it('each told reviewer gets links of their own; opening one changes nothing; confirming applies the write once, as that person', async () => {
    const org = await linkOrganization();
    const second = await person(org, 'reviewer', 'second');
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'review the supplier contract');
    const mine = await linksTo(reviewer.email, reviewId);
    const theirs = await linksTo(second.user.email, reviewId);
    expect(new Set([mine.approve, mine.deny, theirs.approve, theirs.deny]).size).toBe(4);
    expect(unfolded(mine.mail.raw)).toMatch(/Approve it: http:\/\/gatehouse\.test\/decide#[A-Za-z0-9_-]{43}\r?\n/);
    expect(unfolded(mine.mail.raw)).not.toContain('/decide/');
    // The member decides nothing, and is sent nothing.
    expect(catcher.mails.filter((mail) => mail.to.includes(`member@${org.organization.slug}.test`))).toEqual([]);
    // Only digests are stored.
    const stored = await h.db.query("SELECT count(*)::int AS n FROM decision_links WHERE review_id = $1 AND encode(token_digest, 'escape') LIKE '%' || $2 || '%'", [reviewId, mine.approve]);
    expect(stored.rows[0].n).toBe(0);

    // Opening it (as a mail scanner would, twice) shows the write and changes nothing.
    for (let opened = 0; opened < 2; opened += 1) {
      const page = await read(mine.approve);
      expect(page.statusCode, page.body).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['referrer-policy']).toBe('same-origin');
      expect(json(page).data).toMatchObject({
        verdict: 'approved',
        state: 'usable',
        person: { email: reviewer.email },
        review: { id: reviewId, status: 'pending', operation: 'tasks.create', agent: 'test agent', reason: 'The title asks for a review', after: { title: 'review the supplier contract' } },
      });
    }
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending', decided_by: null });
    expect(await tasksTitled(org, 'review the supplier contract')).toBe(0);
    expect((await h.db.query('SELECT count(*)::int AS n FROM decision_links WHERE review_id = $1 AND used_at IS NOT NULL', [reviewId])).rows[0].n).toBe(0);

    const confirmed = await confirm(mine.approve, { comment: 'From my phone' });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(json(confirmed).data).toMatchObject({ review_id: reviewId, status: 'approved', applied: true, failure: null });
    expect(await tasksTitled(org, 'review the supplier contract')).toBe(1);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'approved', decided_by: reviewer.id, decided_via: 'link' });
    const approved = (await auditOf(reviewId)).filter((event) => event.type === 'review.approved');
    expect(approved).toHaveLength(1);
    expect(approved[0]).toMatchObject({ actor_id: reviewer.id, data: { via: 'link', comment: 'From my phone', passkey: null, payload_digest: expect.stringMatching(/^[0-9a-f]{64}$/) } });

    // Used: refused, and so is the same person's Deny link; another reviewer's link finds it decided.
    const again = await confirm(mine.approve);
    expect(again.statusCode).toBe(410);
    expect(json(again).error.code).toBe('link_invalid');
    expect((await confirm(mine.deny)).statusCode).toBe(410);
    expect(json(await read(mine.approve)).data).toMatchObject({ state: 'used', review: { status: 'approved', decided_by: reviewer.email, after: null } });
    const late = await confirm(theirs.deny);
    expect(late.statusCode).toBe(409);
    expect(json(late).error.code).toBe('conflict');
    expect(json(await read(theirs.approve)).data.state).toBe('decided');
    expect(await tasksTitled(org, 'review the supplier contract')).toBe(1);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'approved', decided_by: reviewer.id });
  });

  it('confirmed at once from two tabs (and the Deny link too), it decides once', async () => {
    const org = await linkOrganization();
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'review in a hurry');
    const { approve, deny } = await linksTo(reviewer.email, reviewId);
    const answers = await Promise.all([confirm(approve), confirm(approve), confirm(deny)]);
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses, answers.map((answer) => answer.body).join('\n')).toEqual([200, 410, 410]);
    const decided = await reviewOf(reviewId);
    expect(decided).toMatchObject({ decided_by: reviewer.id, decided_via: 'link' });
    expect(await tasksTitled(org, 'review in a hurry')).toBe(decided.status === 'approved' ? 1 : 0);
    expect((await auditOf(reviewId)).filter((event) => event.type === 'review.approved' || event.type === 'review.denied')).toHaveLength(1);
  });

  it('a Deny link denies: nothing is written', async () => {
    const org = await linkOrganization();
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'review and deny me');
    const { deny, approve } = await linksTo(reviewer.email, reviewId);
    expect(json(await read(deny)).data).toMatchObject({ verdict: 'denied', state: 'usable' });
    const denied = await confirm(deny, {});
    expect(denied.statusCode, denied.body).toBe(200);
    expect(json(denied).data).toMatchObject({ status: 'denied', applied: false });
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'denied', decided_by: reviewer.id, decided_via: 'link' });
    expect((await confirm(approve)).statusCode).toBe(410);
    expect(await tasksTitled(org, 'review and deny me')).toBe(0);
  });

  it('is refused after the review expired, and changes nothing', async () => {
    const org = await linkOrganization();
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'review before it expires');
    const { approve } = await linksTo(reviewer.email, reviewId);
    // The deadline passes (the link's is the review's).
    await h.db.query("UPDATE reviews SET expires_at = now() - interval '1 second' WHERE id = $1", [reviewId]);
    await h.db.query("UPDATE decision_links SET expires_at = now() - interval '1 second' WHERE review_id = $1", [reviewId]);
    expect(json(await read(approve)).data).toMatchObject({ state: 'expired', review: { status: 'expired', after: null } });
    const refused = await confirm(approve);
    expect(refused.statusCode).toBe(410);
    expect(json(refused).error).toMatchObject({ code: 'link_invalid', message: expect.stringContaining('expired') });
    expect(await tasksTitled(org, 'review before it expires')).toBe(0);
    expect((await reviewOf(reviewId)).decided_by).toBeNull();
  });

  it('is refused once the write it was sent for is withdrawn (its key revoked), saying so; the links stay unspent', async () => {
    const org = await linkOrganization();
    const reviewer = await reviewerOf(org);
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'Soon revoked', access: 'read_write' });
    const reviewId = await hold(key.token, 'review what no link can approve');
    const { approve, deny } = await linksTo(reviewer.email, reviewId);
    await revokeApiKey(h.db, withdrawReviewsOfKey, org.organization.id, key.key.id);
    expect(json(await read(approve)).data).toMatchObject({ state: 'withdrawn', review: { status: 'withdrawn', after: null, decided_by: null } });
    for (const token of [approve, deny]) {
      const refused = await confirm(token);
      expect(refused.statusCode, refused.body).toBe(409);
      expect(json(refused).error).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('was withdrawn (the API key that made the write was revoked)'),
        details: { status: 'withdrawn' },
      });
    }
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'withdrawn', decided_by: null, decided_via: null });
    expect((await h.db.query('SELECT count(*)::int AS n FROM decision_links WHERE review_id = $1 AND used_at IS NOT NULL', [reviewId])).rows[0].n).toBe(0);
    expect(await tasksTitled(org, 'review what no link can approve')).toBe(0);
  });

  it('is refused once the review was decided elsewhere (the console)', async () => {
    const org = await linkOrganization();
    const second = await person(org, 'reviewer', 'elsewhere');
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'review decided elsewhere');
    const { approve } = await linksTo(reviewer.email, reviewId);
    const denied = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/deny`, token: second.token, payload: {} });
    expect(denied.statusCode).toBe(200);
    expect(json(await read(approve)).data).toMatchObject({ state: 'decided', review: { status: 'denied', decided_by: second.user.email } });
    const refused = await confirm(approve);
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error).toMatchObject({ code: 'conflict', details: { status: 'denied' } });
    expect(await tasksTitled(org, 'review decided elsewhere')).toBe(0);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'denied', decided_by: second.user.id });
  });

  it('is refused, saying why, once the payload changed (another reviewer edited the held write)', async () => {
    const org = await linkOrganization({ policy: quorumPolicy });
    const second = await person(org, 'reviewer', 'later');
    const reviewId = await hold(org.readWriteToken, 'review a small plan');
    const { approve } = await linksTo(second.user.email, reviewId);
    // The first reviewer edits it; the edited write needs two approvals, theirs counts as the first.
    const edited = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken, payload: { edit: { title: 'big plan after all' } } });
    expect(json(edited).data).toMatchObject({ status: 'pending', approvals: { required: 2 } });
    const page = json(await read(approve)).data;
    expect(page).toMatchObject({ state: 'payload_changed', review: { edit: { fields: [{ field: 'title', agent: 'review a small plan', edited: 'big plan after all' }] } } });
    const refused = await confirm(approve);
    expect(refused.statusCode).toBe(409);
    expect(json(refused).error).toMatchObject({ code: 'payload_changed', message: expect.stringContaining('has changed') });
    expect(await tasksTitled(org, 'big plan after all')).toBe(0);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending' });
  });

  it('a link sent while an edit is held is bound to the edit, and approves it', async () => {
    const org = await linkOrganization({ policy: quorumPolicy });
    const admin = await person(org, 'admin', 'escalated');
    await h.db.query('UPDATE organizations SET review_escalation_ms = 1500 WHERE id = $1', [org.organization.id]);
    const reviewId = await hold(org.readWriteToken, 'review an edited plan');
    await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken, payload: { edit: { title: 'big edited plan' } } });
    // Escalated to the admins after the edit: their links carry the edit.
    const { approve } = await linksTo(admin.user.email, reviewId);
    expect(json(await read(approve)).data).toMatchObject({ state: 'usable', review: { after: { title: 'big edited plan' } } });
    const approved = await confirm(approve);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(json(approved).data).toMatchObject({ status: 'approved', applied: true });
    expect(await tasksTitled(org, 'big edited plan')).toBe(1);
  }, 30_000);
});

describe('the console’s rules hold', () => {
  it('no self-approval: the person who created the agent’s key cannot approve from a link (the link stays usable for a deny)', async () => {
    const org = await linkOrganization();
    const maker = await person(org, 'reviewer', 'maker');
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: "maker's agent", access: 'read_write' }, { type: 'user', id: maker.user.id });
    const reviewId = await hold(key.token, 'review my own agent');
    const { approve, deny } = await linksTo(maker.user.email, reviewId);
    const refused = await confirm(approve);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('self_approval');
    expect(await tasksTitled(org, 'review my own agent')).toBe(0);
    expect(json(await read(deny)).data.state).toBe('usable');
    expect((await confirm(deny)).statusCode).toBe(200);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'denied', decided_by: maker.user.id });
  });

  it('a person no longer a reviewer, or no longer active, cannot use their link', async () => {
    const org = await linkOrganization();
    const demoted = await person(org, 'reviewer', 'demoted');
    const gone = await person(org, 'reviewer', 'gone');
    const reviewId = await hold(org.readWriteToken, 'review after a change of role');
    const demotedLinks = await linksTo(demoted.user.email, reviewId);
    const goneLinks = await linksTo(gone.user.email, reviewId);
    await h.db.query("UPDATE users SET role = 'member' WHERE id = $1", [demoted.user.id]);
    await h.db.query('UPDATE users SET deactivated_at = now() WHERE id = $1', [gone.user.id]);
    const refused = await confirm(demotedLinks.approve);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('insufficient_role');
    expect((await read(demotedLinks.approve)).statusCode).toBe(403);
    expect((await confirm(goneLinks.approve)).statusCode).toBe(410);
    expect((await read(goneLinks.approve)).statusCode).toBe(410);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending' });
    expect(await tasksTitled(org, 'review after a change of role')).toBe(0);
  });

  it('quorum: a link approval counts as one of two; the second person’s link applies the write once', async () => {
    const org = await linkOrganization({ policy: quorumPolicy });
    const second = await person(org, 'reviewer', 'cosigner');
    const reviewer = await reviewerOf(org);
    const reviewId = await hold(org.readWriteToken, 'big launch plan');
    const first = await linksTo(reviewer.email, reviewId);
    const other = await linksTo(second.user.email, reviewId);
    const one = await confirm(first.approve, { comment: 'first' });
    expect(one.statusCode, one.body).toBe(200);
    expect(json(one).data).toMatchObject({ status: 'pending', approvals: { required: 2, given: 1 }, applied: false });
    expect(await tasksTitled(org, 'big launch plan')).toBe(0);
    // The same person cannot count twice through their other link.
    expect((await confirm(first.approve)).statusCode).toBe(410);
    expect(json(await read(other.approve)).data).toMatchObject({ state: 'usable', review: { approvals: { required: 2, given: 1 } } });
    const two = await confirm(other.approve);
    expect(json(two).data).toMatchObject({ status: 'approved', approvals: { required: 2, given: 2 }, applied: true });
    expect(await tasksTitled(org, 'big launch plan')).toBe(1);
    const audit = await auditOf(reviewId);
    expect(audit.filter((event) => event.type === 'review.approval_added')).toMatchObject([{ actor_id: reviewer.id, data: { via: 'link', approvals: 1, required: 2 } }]);
    expect(audit.filter((event) => event.type === 'review.approved')).toMatchObject([{ actor_id: second.user.id, data: { via: 'link' } }]);
  });

  it('an organization that needs passkeys refuses a link approval without one, and the link is not spent', async () => {
    const org = await linkOrganization();
    const reviewer = await reviewerOf(org);
    await h.db.query('UPDATE organizations SET approvals_need_passkey = true WHERE id = $1', [org.organization.id]);
    const reviewId = await hold(org.readWriteToken, 'review with a passkey');
    const { approve, deny } = await linksTo(reviewer.email, reviewId);
    const refused = await confirm(approve);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'passkey_required', details: { finish_url: `${publicUrl}/reviews/${reviewId}` } });
    expect(json(await read(approve)).data.state).toBe('usable');
    expect(await tasksTitled(org, 'review with a passkey')).toBe(0);
    // Denying needs no passkey: the person's other link still works.
    expect((await confirm(deny)).statusCode).toBe(200);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'denied', decided_via: 'link' });
  });

  it('with a passkey, the link approves: the link’s challenge signed by the person’s authenticator, kept with the verdict', async () => {
    const org = await linkOrganization();
    const signer = await addPerson(h.db, org.organization, 'reviewer');
    const session = await signIn(h.app, org.organization, signer);
    const authenticator = new SoftwareAuthenticator({ rpId: new URL(publicUrl).hostname, origin: publicUrl });
    const options = json(await session.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
    const registered = await session.request({ method: 'POST', url: '/console/api/passkeys', payload: { password: signer.password, response: authenticator.register(options.challenge) } });
    expect(registered.statusCode, registered.body).toBe(201);
    await h.db.query('UPDATE organizations SET approvals_need_passkey = true WHERE id = $1', [org.organization.id]);
    const reviewId = await hold(org.readWriteToken, 'review signed from the email');
    const { approve } = await linksTo(signer.email, reviewId);

    const asked = await post('passkey-challenge', { token: approve });
    expect(asked.statusCode, asked.body).toBe(200);
    const { challenge, signed_at } = json(asked).data;
    // The link's holder is not told which passkeys its person has: the authenticator offers its own.
    expect(json(asked).data.allow_credentials).toEqual([]);
    // Signed over another verdict's challenge: refused, nothing spent or written.
    const otherChallenge = approvalChallenge(reviewId, json(asked).data.payload_digest, 'denied', signed_at);
    const wrong = await confirm(approve, { passkey: { ...authenticator.assert(otherChallenge), signed_at } });
    expect(wrong.statusCode).toBe(403);
    expect(json(wrong).error.code).toBe('passkey_failed');
    expect(json(await read(approve)).data.state).toBe('usable');

    const confirmed = await confirm(approve, { passkey: { ...authenticator.assert(challenge), signed_at } });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    await expect.poll(() => tasksTitled(org, 'review signed from the email'), { timeout: 20_000 }).toBe(1);
    const approved = (await auditOf(reviewId)).filter((event) => event.type === 'review.approved');
    expect(approved).toMatchObject([{ actor_id: signer.user.id, data: { via: 'link', passkey: { credential_id: authenticator.id, signed_at } } }]);
  });

  it('a link of one organization shows and decides only its own review', async () => {
    const acme = await linkOrganization();
    const globex = await linkOrganization();
    const acmeReview = await hold(acme.readWriteToken, 'review acme only');
    const globexReview = await hold(globex.readWriteToken, 'review globex only');
    const acmeLinks = await linksTo((await reviewerOf(acme)).email, acmeReview);
    await linksTo((await reviewerOf(globex)).email, globexReview);
    const page = json(await read(acmeLinks.approve)).data;
    expect(page.review.id).toBe(acmeReview);
    expect(JSON.stringify(page)).not.toContain(globex.organization.slug);
    expect((await confirm(acmeLinks.approve)).statusCode).toBe(200);
    expect(await reviewOf(acmeReview)).toMatchObject({ status: 'approved' });
    expect(await reviewOf(globexReview)).toMatchObject({ status: 'pending', decided_by: null });
    expect(await tasksTitled(globex, 'review globex only')).toBe(0);
  });
});

describe('what a client can send', () => {
  it('garbage tokens and bodies are refused in the envelope, never a 500', async () => {
    const org = await linkOrganization();
    const reviewId = await hold(org.readWriteToken, 'review against garbage');
    const { approve } = await linksTo((await reviewerOf(org)).email, reviewId);
    const unknown = 'A'.repeat(43);
    for (const token of [unknown, 'abc', `${approve}x`, approve.slice(0, 42), '%F0%9F%92%A9', '../../api', 'x'.repeat(99)]) {
      for (const answer of [await read(token), await confirm(token), await post('passkey-challenge', { token })]) {
        expect(answer.statusCode, `${token}: ${answer.body}`).toBe(410);
        expect(json(answer).error.code).toBe('link_invalid');
      }
    }
    // No token, or not a string, or far too long: the body is refused, naming the field.
    for (const token of [undefined, null, 42, ['a'], 'x'.repeat(5000)]) {
      for (const answer of [await read(token), await confirm(token), await post('passkey-challenge', { token })]) {
        expect(answer.statusCode, `${JSON.stringify(token)}: ${answer.body}`).toBe(422);
        expect(json(answer).error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'token' }] } });
      }
    }

    const badJson = await confirm(approve, '{"token":');
    expect(badJson.statusCode).toBe(400);
    expect(json(badJson).error.code).toBe('invalid_json');
    const unknownField = await confirm(approve, { verdict: 'approved' });
    expect(unknownField.statusCode).toBe(422);
    const form = await h.app.inject({
      method: 'POST',
      url: '/console/api/decision-links/confirm',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${approve}`,
      remoteAddress: remoteAddress(),
    });
    expect(form.statusCode).toBe(415);
    const noType = await h.app.inject({ method: 'POST', url: '/console/api/decision-links/confirm', remoteAddress: remoteAddress() });
    expect(noType.statusCode).toBe(415);
    const crossSite = await confirm(approve, {}, { headers: { origin: 'https://evil.example', 'content-type': 'application/json' } });
    expect(crossSite.statusCode).toBe(403);
    expect(json(crossSite).error.code).toBe('csrf_failed');
    // None of it decided anything.
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending' });
    expect(json(await read(approve)).data.state).toBe('usable');
  });

  it('takes the token in the body only: the routes with a token in the path are gone, and decide nothing', async () => {
    const org = await linkOrganization();
    const reviewId = await hold(org.readWriteToken, 'review by the old routes');
    const { approve } = await linksTo((await reviewerOf(org)).email, reviewId);
    const pathForms = [
      await h.app.inject({ method: 'GET', url: `/console/api/decision-links/${approve}`, remoteAddress: remoteAddress() }),
      await post(`${approve}/confirm`, {}),
      await post(`${approve}/passkey-challenge`, {}),
      await h.app.inject({ method: 'GET', url: `/console/api/decision-links/read?token=${approve}`, remoteAddress: remoteAddress() }),
    ];
    for (const answer of pathForms) {
      expect(answer.statusCode, answer.body).toBe(404);
      expect(json(answer).error.code).toBe('not_found');
    }
    // Nor does the token travel in the query of the new routes.
    const inQuery = await h.app.inject({
      method: 'POST',
      url: `/console/api/decision-links/confirm?token=${approve}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
      remoteAddress: remoteAddress(),
    });
    expect(inQuery.statusCode).toBe(422);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending', decided_by: null });
    expect(json(await read(approve)).data).toMatchObject({ state: 'usable', verdict: 'approved' });
  });

  it('each address may read links this often a minute', async () => {
    const token = 'B'.repeat(43);
    for (let call = 0; call < decisionLinkLimits.readsPerMinute; call += 1) expect((await read(token)).statusCode).toBe(410);
    const limited = await read(token);
    expect(limited.statusCode).toBe(429);
    expect(json(limited).error.code).toBe('rate_limited');
  });
});
