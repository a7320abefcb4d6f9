import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, invitePerson, type RosterManager } from '../../domain/identity/people';
import { connectAppDirectly } from '../support/connected-app';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, readMail, startMailCatcher, unfolded, type MailCatcher } from '../support/mail-catcher';

// With email configured (SMTP_URL: a local SMTP server here), a set-password link goes to its person alone: the api
// sends it and answers the admin that it went, to whom and until when, never the link; one that cannot be sent is
// voided and the admin told. A person an admin set up before (when no email was configured) still cannot approve
// that admin's key's writes from a decision link. And the owners are emailed, through the worker, when someone's
// password reset by another is followed by their approval within a day. On the real stack.

let h: Harness;
let catcher: MailCatcher;
let address = 0;

beforeAll(async () => {
  catcher = await startMailCatcher();
  h = await startHarness({ webhooks: { smtpUrl: catcher.url } });
});

afterAll(async () => {
  await h?.close();
  await catcher?.close();
});

/** A person of the organization signed in to the console (an owner or admin, to manage people). */
async function signedIn(org: TestOrganization, role: 'owner' | 'admin' | 'reviewer'): Promise<TestPerson & { session: ConsoleSession }> {
  const person = await addPerson(h.db, org.organization, role);
  return { ...person, session: await signIn(h.app, org.organization, person) };
}

/** The set-password token in the newest mail to `email` about `marker`. */
async function emailedToken(email: string, marker: string): Promise<string> {
  const mail = await catcher.mailTo(email, marker);
  const [link, ...rest] = linksIn(mail, `${publicUrl}/set-password#`);
  expect(rest).toEqual([]);
  return link!.split('#')[1]!;
}

const setPassword = (token: string, password: string) => h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password } });

const hold = async (token: string, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id as string;
};

const setUpByOf = async (userId: string) => (await h.db.query('SELECT set_up_by FROM users WHERE id = $1', [userId])).rows[0].set_up_by as string | null;

describe('with email configured, a set-password link goes to the person alone', () => {
  it('an invite answers that a link was sent, to whom and until when, never the link; the mailbox has it and it works', async () => {
    const org = await h.createOrganization({ name: 'Mailed Inc.' });
    const admin = await signedIn(org, 'admin');
    const email = `newcomer-${(address += 1)}@${org.organization.slug}.test`;
    const invited = await admin.session.request({ method: 'POST', url: '/console/api/v1/people', payload: { email, role: 'reviewer' } });
    expect(invited.statusCode, invited.body).toBe(200);
    const data = json(invited).data;
    expect(data.set_password_link).toBeUndefined();
    expect(data.set_password_email).toEqual({ to: email, sent: true, expires_at: expect.any(String), problem: null });
    expect(invited.body).not.toContain('gate_l_');
    expect(data.person).toMatchObject({ email, set_up_by: null, has_password: false });

    const token = await emailedToken(email, 'set-password#');
    const mail = readMail(await catcher.mailTo(email, token));
    expect(mail.subject).toBe('You are invited to Mailed Inc. on Gatehouse');
    expect(mail.text).toContain(`${admin.email} invited you to Mailed Inc. on Gatehouse, as reviewer.`);
    expect(mail.text).toContain(`until ${data.set_password_email.expires_at}`);
    // Nobody but the person was sent it.
    expect(catcher.mails.filter((sent) => unfolded(sent.raw).includes(token)).flatMap((sent) => sent.to)).toEqual([email]);

    expect((await setPassword(token, 'the newcomer chose this')).statusCode).toBe(200);
    const session = await signIn(h.app, org.organization, { email, password: 'the newcomer chose this' });
    expect(session.csrfToken).toBeTruthy();
    expect(await setUpByOf(data.person.id)).toBeNull();
    const audit = (await h.db.query("SELECT data FROM audit_events WHERE type = 'person.invited' AND resource_id = $1", [data.person.id])).rows[0];
    expect(audit.data).toMatchObject({ link: 'emailed', set_up_by: null });
  });

  it("a reset is emailed too, and ends an earlier admin's hold on the account: their set-up, and the passkeys added since, go", async () => {
    const org = await h.createOrganization();
    const owner = await signedIn(org, 'owner');
    const admin = await signedIn(org, 'admin');
    // Set up by the admin (as when no email was configured): the admin had the link, and registered a passkey.
    const adminRef: RosterManager = { ref: { type: 'user', id: admin.user.id }, role: 'admin' };
    const email = `held-${(address += 1)}@${org.organization.slug}.test`;
    const { user, link } = await invitePerson(h.db, { orgId: org.organization.id, email, role: 'reviewer' }, adminRef);
    expect(await setUpByOf(user.id)).toBe(admin.user.id);
    expect((await setPassword(link.token, 'the admin chose this one')).statusCode).toBe(200);
    await h.db.query(
      "INSERT INTO passkeys (id, org_id, user_id, credential_id, public_key, name) VALUES ('pky_setup_test_' || $1, $2, $1, 'cred-' || $1, '\\x00', 'Added while held')",
      [user.id, org.organization.id],
    );

    const reset = await owner.session.request({ method: 'POST', url: `/console/api/v1/people/${user.id}/reset-password` });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(json(reset).data).toMatchObject({ person: { set_up_by: null, has_password: false }, set_password_email: { to: email, sent: true } });
    expect(json(reset).data.set_password_link).toBeUndefined();
    expect(reset.body).not.toContain('gate_l_');
    expect(await setUpByOf(user.id)).toBeNull();
    expect((await h.db.query('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [user.id])).rows[0].n).toBe(0);
    const audit = (await h.db.query("SELECT type, data FROM audit_events WHERE resource_id = $1 AND type IN ('person.password_reset', 'person.passkey_removed') ORDER BY id", [user.id])).rows;
    expect(audit).toEqual([
      { type: 'person.passkey_removed', data: { credential_id: `cred-${user.id}`, name: 'Added while held' } },
      { type: 'person.password_reset', data: expect.objectContaining({ link: 'emailed', set_up_by: null, passkeys_removed: 1 }) },
    ]);

    const token = await emailedToken(email, 'set-password#');
    const mail = readMail(await catcher.mailTo(email, token));
    expect(mail.subject).toContain('password for');
    expect(mail.text).toContain(`${owner.email} reset your password`);
    // The admin's old password is gone; the person's new one works.
    expect((await h.app.inject({ method: 'POST', url: '/console/api/session', payload: { organization: org.organization.slug, email, password: 'the admin chose this one' } })).statusCode).toBe(401);
    expect((await setPassword(token, 'only the person knows it')).statusCode).toBe(200);
    await signIn(h.app, org.organization, { email, password: 'only the person knows it' });
  });
});

describe('a person an admin set up cannot approve that admin’s key’s write from a decision link', () => {
  it('the Approve link is refused with why; the Deny link works (Approve links: anyone with the link)', async () => {
    const org = await h.createOrganization({ approveLinks: 'anyone_with_link' });
    const admin = await signedIn(org, 'admin');
    const adminRef: RosterManager = { ref: { type: 'user', id: admin.user.id }, role: 'admin' };
    const email = `linked-${(address += 1)}@${org.organization.slug}.test`;
    await invitePerson(h.db, { orgId: org.organization.id, email, role: 'reviewer' }, adminRef);
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: "the admin's agent", access: 'read_write' }, { type: 'user', id: admin.user.id });
    const reviewId = await hold(key.token, 'review the admin agent write');
    const mail = await catcher.mailTo(email, reviewId);
    const [approve, deny] = linksIn(mail, `${publicUrl}/decide#`).map((link) => link.slice(`${publicUrl}/decide#`.length));
    const confirm = (token: string) =>
      h.app.inject({ method: 'POST', url: '/console/api/decision-links/confirm', headers: { 'content-type': 'application/json' }, payload: { token }, remoteAddress: '10.9.0.1' });
    const refused = await confirm(approve!);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'set_up_by_key_creator', message: expect.stringContaining(admin.email) });
    expect((await h.db.query('SELECT status FROM reviews WHERE id = $1', [reviewId])).rows[0].status).toBe('pending');
    expect((await confirm(deny!)).statusCode).toBe(200);
    expect((await h.db.query('SELECT status FROM reviews WHERE id = $1', [reviewId])).rows[0].status).toBe('denied');
  });
});

describe('owners are told when a reset by someone else is followed by an approval within a day', () => {
  const alertsAbout = (email: string) => catcher.mails.filter((mail) => readMail(mail).subject === `${email} approved a write within a day of a password reset`);

  it('an approval after an admin reset the approver’s password emails every owner once, and the audit trail records each', async () => {
    const org = await h.createOrganization();
    const owner = await signedIn(org, 'owner');
    const otherOwner = await addPerson(h.db, org.organization, 'owner');
    const admin = await signedIn(org, 'admin');
    const approver = await addPerson(h.db, org.organization, 'reviewer');
    const reset = await admin.session.request({ method: 'POST', url: `/console/api/v1/people/${approver.user.id}/reset-password` });
    expect(reset.statusCode, reset.body).toBe(200);
    const token = await emailedToken(approver.email, 'set-password#');
    expect((await setPassword(token, 'a new password, soon used')).statusCode).toBe(200);
    const session = await signIn(h.app, org.organization, { email: approver.email, password: 'a new password, soon used' });

    const first = await hold(org.readWriteToken, 'review right after a reset');
    expect((await session.request({ method: 'POST', url: `/console/api/v1/reviews/${first}/approve`, payload: {} })).statusCode).toBe(200);
    const alert = readMail(await catcher.mailTo(owner.email, `${approver.email} approved`, 30_000));
    expect(alert.subject).toBe(`${approver.email} approved a write within a day of a password reset`);
    expect(alert.text).toContain(`less than 24 hours after ${admin.email} reset their password`);
    expect(alert.text).toContain(`${approver.email} approved the tasks.create of `);
    expect(alert.text).toContain(`${publicUrl}/reviews/${first}`);
    await catcher.mailTo(otherOwner.email, `${approver.email} approved`, 30_000);
    expect(alertsAbout(approver.email).flatMap((mail) => mail.to).sort()).toEqual([owner.email, otherOwner.email].sort());

    // A second approval that day is recorded, and not emailed again.
    const personal = (await createPersonalToken(h.db, approver.user)).token;
    const second = await hold(org.readWriteToken, 'review again after a reset');
    expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${second}/approve`, token: personal, payload: {} })).statusCode).toBe(200);
    const recorded = (await h.db.query("SELECT actor_id, review_id, data FROM audit_events WHERE type = 'person.approved_after_reset' AND resource_id = $1 ORDER BY id", [approver.user.id])).rows;
    expect(recorded).toEqual([
      { actor_id: approver.user.id, review_id: first, data: { reset_by: admin.user.id, reset_at: expect.any(String), via: 'console' } },
      { actor_id: approver.user.id, review_id: second, data: { reset_by: admin.user.id, reset_at: expect.any(String), via: 'api_token' } },
    ]);
    await expect.poll(async () => (await h.db.query("SELECT count(*)::int AS n FROM webhook_events WHERE type = 'owners.approval_after_reset' AND org_id = $1 AND relayed_at IS NOT NULL", [org.organization.id])).rows[0].n, { timeout: 10_000 }).toBe(1);
    expect(alertsAbout(approver.email)).toHaveLength(2);
  }, 60_000);

  it('names a connected app by its own, unverified name, marked so', async () => {
    const org = await h.createOrganization();
    const owner = await addPerson(h.db, org.organization, 'owner');
    const admin = await signedIn(org, 'admin');
    const approver = await addPerson(h.db, org.organization, 'reviewer');
    expect((await admin.session.request({ method: 'POST', url: `/console/api/v1/people/${approver.user.id}/reset-password` })).statusCode).toBe(200);
    // A connected app's key, as the authorization server makes one: its label is the name the app gave itself.
    const app = await connectAppDirectly(h.db, { orgId: org.organization.id, personId: owner.user.id, name: 'Claude', publicUrl });
    const held = await hold(app.token, 'review the app’s write after a reset');
    const personal = (await createPersonalToken(h.db, approver.user)).token;
    expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${held}/approve`, token: personal, payload: {} })).statusCode).toBe(200);
    const alert = readMail(await catcher.mailTo(owner.email, `${approver.email} approved`, 30_000));
    expect(alert.text).toContain(`approved the tasks.create of “Claude” (unverified app name) (review ${held})`);
    expect(alert.text).toContain('“Claude” is the name a connected app (OAuth) gave itself; nobody verified it');
  }, 60_000);

  it('not after a day, nor after a reset of one’s own password', async () => {
    const org = await h.createOrganization();
    await addPerson(h.db, org.organization, 'owner');
    const admin = await signedIn(org, 'admin');
    const late = await addPerson(h.db, org.organization, 'reviewer');
    expect((await admin.session.request({ method: 'POST', url: `/console/api/v1/people/${late.user.id}/reset-password` })).statusCode).toBe(200);
    // The reset was a day and an hour ago.
    await h.db.query("UPDATE users SET password_reset_at = now() - interval '25 hours' WHERE id = $1", [late.user.id]);
    const lateReview = await hold(org.readWriteToken, 'review a day after a reset');
    const lateToken = (await createPersonalToken(h.db, late.user)).token;
    expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${lateReview}/approve`, token: lateToken, payload: {} })).statusCode).toBe(200);

    // The admin resets their own password and approves at once.
    expect((await admin.session.request({ method: 'POST', url: `/console/api/v1/people/${admin.user.id}/reset-password` })).statusCode).toBe(200);
    const own = await hold(org.readWriteToken, 'review after my own reset');
    const adminToken = (await createPersonalToken(h.db, admin.user)).token;
    expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${own}/approve`, token: adminToken, payload: {} })).statusCode).toBe(200);

    const recorded = await h.db.query("SELECT count(*)::int AS n FROM audit_events WHERE type = 'person.approved_after_reset' AND org_id = $1", [org.organization.id]);
    expect(recorded.rows[0].n).toBe(0);
    const outbox = await h.db.query("SELECT count(*)::int AS n FROM webhook_events WHERE type = 'owners.approval_after_reset' AND org_id = $1", [org.organization.id]);
    expect(outbox.rows[0].n).toBe(0);
  });
});

describe('a link that cannot be sent', () => {
  it('is voided, and the admin is told so, with why; the trail records it', async () => {
    const org = await h.createOrganization();
    const admin = await signedIn(org, 'admin');
    // The SMTP server goes away (the last test of the file: nothing is sent after it).
    await catcher.close();
    const email = `unsent-${(address += 1)}@${org.organization.slug}.test`;
    const invited = await admin.session.request({ method: 'POST', url: '/console/api/v1/people', payload: { email, role: 'member' } });
    expect(invited.statusCode, invited.body).toBe(200);
    const data = json(invited).data;
    expect(data.set_password_email).toEqual({ to: email, sent: false, expires_at: null, problem: 'the mail server could not be reached' });
    expect(data.set_password_link).toBeUndefined();
    expect(invited.body).not.toContain('gate_l_');
    const links = await h.db.query('SELECT used_at FROM password_links WHERE user_id = $1', [data.person.id]);
    expect(links.rows).toHaveLength(1);
    expect(links.rows[0].used_at).not.toBeNull();
    const audit = (await h.db.query("SELECT actor_id, data FROM audit_events WHERE type = 'person.password_link_unsent' AND resource_id = $1", [data.person.id])).rows;
    expect(audit).toEqual([{ actor_id: admin.user.id, data: { occasion: 'invited', problem: data.set_password_email.problem } }]);
  });
});
