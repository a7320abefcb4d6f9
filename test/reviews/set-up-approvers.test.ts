import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { cliManager, createPersonalToken, createUser, updatePerson } from '../../domain/identity/people';
import { updateOrganization } from '../../domain/identity/organizations';
import { runCli } from '../support/cli';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, publicUrl, quorumPolicy, startHarness, type Harness, type TestOrganization } from '../support/harness';

// One admin cannot make an approver they control, with no email configured (no SMTP_URL): the set-password link of
// a person they invite or reset is answered to them, so the person is recorded as set up by them, cannot approve
// writes of keys that admin created, and counts as one with them toward a quorum. The operator's CLI is exempt. And a
// quorum counts, when it is reached, only people who may still decide. On the real Temporal dev server and PostgreSQL.

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

interface Admin {
  id: string;
  email: string;
  session: ConsoleSession;
}

/** An admin of the organization, signed in to the console. */
async function adminOf(org: TestOrganization): Promise<Admin> {
  const admin = await addPerson(h.db, org.organization, 'admin');
  return { id: admin.user.id, email: admin.email, session: await signIn(h.app, org.organization, admin) };
}

/** A person the admin invites from the console: the link is answered to the admin, who sets the password with it. */
async function inviteAndSetUp(org: TestOrganization, admin: Admin, role: 'reviewer' | 'admin', name: string) {
  const email = `${name}@${org.organization.slug}.test`;
  const invited = await admin.session.request({ method: 'POST', url: '/console/api/v1/people', payload: { email, role } });
  expect(invited.statusCode, invited.body).toBe(200);
  const { person, set_password_link: link, set_password_email: emailed } = json(invited).data;
  expect(emailed).toBeUndefined();
  const password = `${name} has a long password`;
  const token = (link.url as string).split('#')[1];
  expect((await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password } })).statusCode).toBe(200);
  return { id: person.id as string, email, password, person, link, session: await signIn(h.app, org.organization, { email, password }) };
}

const hold = async (token: string, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id as string;
};

const approveAs = (session: ConsoleSession, reviewId: string) => session.request({ method: 'POST', url: `/console/api/v1/reviews/${reviewId}/approve`, payload: {} });
const approveWithToken = (token: string, reviewId: string) => h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token, payload: {} });

const statusOf = async (reviewId: string) => (await h.db.query('SELECT status FROM reviews WHERE id = $1', [reviewId])).rows[0].status as string;
const setUpByOf = async (userId: string) => (await h.db.query('SELECT set_up_by FROM users WHERE id = $1', [userId])).rows[0].set_up_by as string | null;

/** A reviewer with a personal token (made as the CLI makes them: set up by nobody of the organization). */
async function reviewer(org: TestOrganization, name: string) {
  const user = await createUser(h.db, { orgId: org.organization.id, email: `${name}@${org.organization.slug}.test`, role: 'reviewer' });
  return { user, token: (await createPersonalToken(h.db, user)).token };
}

describe('without email, the link goes to the admin, and the person is recorded as set up by them', () => {
  it("an invite answers the link and records the inviter; the People list says so; the audit trail too", async () => {
    const org = await h.createOrganization();
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'ria');
    expect(invited.link.url).toMatch(new RegExp(`^${publicUrl}/set-password#gate_l_pwl_`));
    expect(invited.person).toMatchObject({ email: invited.email, set_up_by: admin.id });
    expect(await setUpByOf(invited.id)).toBe(admin.id);
    const listed = json(await admin.session.request({ method: 'GET', url: '/console/api/v1/people' })).data;
    expect(listed.find((person: { id: string }) => person.id === invited.id).set_up_by).toBe(admin.id);
    const { rows } = await h.db.query("SELECT data FROM audit_events WHERE type = 'person.invited' AND resource_id = $1", [invited.id]);
    expect(rows[0].data).toMatchObject({ link: 'answered', set_up_by: admin.id });
  });

  it("that person cannot approve a write of the admin's key, in the console or with a personal token; they approve other keys' writes", async () => {
    const org = await h.createOrganization();
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'sam');
    const adminsKey = await createApiKey(h.db, { orgId: org.organization.id, label: "the admin's agent", access: 'read_write' }, { type: 'user', id: admin.id });

    const held = await hold(adminsKey.token, 'review the admin agent plan');
    const refused = await approveAs(invited.session, held);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'set_up_by_key_creator', message: expect.stringContaining(admin.email) });
    const personal = (await createPersonalToken(h.db, { id: invited.id, orgId: org.organization.id } as never)).token;
    const byToken = await approveWithToken(personal, held);
    expect(byToken.statusCode).toBe(403);
    expect(json(byToken).error.code).toBe('set_up_by_key_creator');
    expect(await statusOf(held)).toBe('pending');
    // The batch path refuses it the same way (every path goes through the one verdict).
    const batch = await invited.session.request({ method: 'POST', url: '/console/api/v1/reviews/batch', payload: { verdict: 'approved', review_ids: [held] } });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(json(batch).data.refused).toEqual([expect.objectContaining({ id: held, code: 'set_up_by_key_creator' })]);

    // A deny is fail-safe, and allowed; another key's write is theirs to approve.
    const other = await hold(org.readWriteToken, 'review an ordinary plan');
    expect((await approveAs(invited.session, other)).statusCode).toBe(200);
    expect(await statusOf(other)).toBe('approved');
    expect((await invited.session.request({ method: 'POST', url: `/console/api/v1/reviews/${held}/deny`, payload: {} })).statusCode).toBe(200);
  });

  it('an organization that allows self-approval lets them approve it, as it lets the admin', async () => {
    const org = await h.createOrganization();
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'tess');
    await updateOrganization(h.db, org.organization.slug, { selfApproval: true });
    const adminsKey = await createApiKey(h.db, { orgId: org.organization.id, label: 'self-approved agent', access: 'read_write' }, { type: 'user', id: admin.id });
    const held = await hold(adminsKey.token, 'review with self-approval on');
    expect((await approveAs(invited.session, held)).statusCode).toBe(200);
    expect(await statusOf(held)).toBe('approved');
  });

  it("a reset by another admin, without email, records that admin instead; the first admin's key's writes are then the person's to approve", async () => {
    const org = await h.createOrganization();
    const first = await adminOf(org);
    const second = await adminOf(org);
    const invited = await inviteAndSetUp(org, first, 'reviewer', 'uma');
    const reset = await second.session.request({ method: 'POST', url: `/console/api/v1/people/${invited.id}/reset-password` });
    expect(reset.statusCode, reset.body).toBe(200);
    expect(json(reset).data).toMatchObject({ person: { set_up_by: second.id }, set_password_link: { url: expect.stringContaining('#gate_l_') } });
    expect(await setUpByOf(invited.id)).toBe(second.id);
    const password = 'uma sets another password';
    const token = (json(reset).data.set_password_link.url as string).split('#')[1];
    expect((await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password } })).statusCode).toBe(200);
    const session = await signIn(h.app, org.organization, { email: invited.email, password });
    const firstsKey = await createApiKey(h.db, { orgId: org.organization.id, label: "the first admin's agent", access: 'read_write' }, { type: 'user', id: first.id });
    const secondsKey = await createApiKey(h.db, { orgId: org.organization.id, label: "the second admin's agent", access: 'read_write' }, { type: 'user', id: second.id });
    expect((await approveAs(session, await hold(firstsKey.token, 'review for the first admin'))).statusCode).toBe(200);
    expect(json(await approveAs(session, await hold(secondsKey.token, 'review for the second admin'))).error.code).toBe('set_up_by_key_creator');
  });
});

describe('a set-up ties both people, either way, and outlasts a change of hands for what was made during it', () => {
  it("the admin cannot approve a write of a key the person they set up created; nor can another person that admin set up", async () => {
    const org = await h.createOrganization();
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'abe');
    const sibling = await inviteAndSetUp(org, admin, 'reviewer', 'bea');
    // A key made from the person's account: the admin, who holds it, may have made it.
    const personsKey = await createApiKey(h.db, { orgId: org.organization.id, label: "the person's agent", access: 'read_write' }, { type: 'user', id: invited.id });
    const held = await hold(personsKey.token, 'review the person agent plan');
    for (const session of [admin.session, sibling.session]) {
      const refused = await approveAs(session, held);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(json(refused).error).toMatchObject({ code: 'set_up_by_key_creator', message: expect.stringContaining(invited.email) });
    }
    expect(await statusOf(held)).toBe('pending');
    // Someone outside the set-up approves it.
    expect(json(await approveWithToken((await reviewer(org, 'cy')).token, held)).data).toMatchObject({ status: 'approved' });
  });

  it('a key made while an admin held the account stays tied to that admin after another reset hands the account on', async () => {
    const org = await h.createOrganization();
    const owner = await addPerson(h.db, org.organization, 'owner');
    const ownerSession = await signIn(h.app, org.organization, owner);
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'dot');
    const madeWhileHeld = await createApiKey(h.db, { orgId: org.organization.id, label: 'made while held', access: 'read_write' }, { type: 'user', id: invited.id });
    // The owner resets the person's password (answered to the owner): the admin no longer holds the account.
    expect((await ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${invited.id}/reset-password` })).statusCode).toBe(200);
    expect(await setUpByOf(invited.id)).toBe(owner.user.id);
    const madeAfter = await createApiKey(h.db, { orgId: org.organization.id, label: 'made after', access: 'read_write' }, { type: 'user', id: invited.id });

    const refused = await approveAs(admin.session, await hold(madeWhileHeld.token, 'review the key made while held'));
    expect(json(refused).error).toMatchObject({ code: 'set_up_by_key_creator' });
    expect((await approveAs(admin.session, await hold(madeAfter.token, 'review the key made after'))).statusCode).toBe(200);
  });

  it('a reset a person asks for themselves keeps who set them up, and who last reset their password', async () => {
    const org = await h.createOrganization();
    const owner = await addPerson(h.db, org.organization, 'owner');
    const ownerAsAdmin: Admin = { id: owner.user.id, email: owner.email, session: await signIn(h.app, org.organization, owner) };
    const invited = await inviteAndSetUp(org, ownerAsAdmin, 'admin', 'eve');
    expect((await ownerAsAdmin.session.request({ method: 'POST', url: `/console/api/v1/people/${invited.id}/reset-password` })).statusCode).toBe(200);
    const marks = async () => (await h.db.query('SELECT set_up_by, password_reset_by FROM users WHERE id = $1', [invited.id])).rows[0];
    expect(await marks()).toEqual({ set_up_by: owner.user.id, password_reset_by: owner.user.id });
    // Signed in as the person (whoever holds the account could be), a reset of "their own" password.
    const token = (json(await ownerAsAdmin.session.request({ method: 'POST', url: `/console/api/v1/people/${invited.id}/reset-password` })).data.set_password_link.url as string).split('#')[1];
    expect((await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'eve has a long password' } })).statusCode).toBe(200);
    const session = await signIn(h.app, org.organization, { email: invited.email, password: 'eve has a long password' });
    const own = await session.request({ method: 'POST', url: `/console/api/v1/people/${invited.id}/reset-password` });
    expect(own.statusCode, own.body).toBe(200);
    expect(json(own).data.person.set_up_by).toBe(owner.user.id);
    expect(await marks()).toEqual({ set_up_by: owner.user.id, password_reset_by: owner.user.id });
  });
});

describe('a person set up by an admin and that admin count as one toward a quorum', () => {
  it('@approvals("2"): their two approvals leave it pending; a third, independent person approves it', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const admin = await adminOf(org);
    const invited = await inviteAndSetUp(org, admin, 'reviewer', 'vic');
    const held = await hold(org.readWriteToken, 'big launch plan');
    expect((await approveAs(invited.session, held)).statusCode).toBe(200);
    const second = await approveAs(admin.session, held);
    expect(second.statusCode, second.body).toBe(200);
    expect(json(second).data).toMatchObject({ status: 'pending' });
    expect(await statusOf(held)).toBe('pending');
    const added = (await h.db.query("SELECT data FROM audit_events WHERE review_id = $1 AND type = 'review.approval_added' ORDER BY id", [held])).rows;
    expect(added.map((event) => event.data.approvals)).toEqual([1, 1]);

    const independent = await reviewer(org, 'walt');
    const done = await approveWithToken(independent.token, held);
    expect(json(done).data).toMatchObject({ status: 'approved', result: { title: 'big launch plan' } });
  });

  it('people set up by the same admin count as one with each other too, and with whoever set that admin up', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const owner = await addPerson(h.db, org.organization, 'owner');
    const ownerSession = await signIn(h.app, org.organization, owner);
    const ownerAsAdmin: Admin = { id: owner.user.id, email: owner.email, session: ownerSession };
    // The owner sets up an admin, who sets up a reviewer: owner, admin and reviewer are one.
    const admin = await inviteAndSetUp(org, ownerAsAdmin, 'admin', 'xena');
    const chained = await inviteAndSetUp(org, { id: admin.id, email: admin.email, session: admin.session }, 'reviewer', 'yuri');
    const held = await hold(org.readWriteToken, 'big chained plan');
    for (const session of [chained.session, ownerSession]) expect((await approveAs(session, held)).statusCode).toBe(200);
    expect(await statusOf(held)).toBe('pending');
    const twin = await inviteAndSetUp(org, ownerAsAdmin, 'reviewer', 'zoe');
    expect((await approveAs(twin.session, held)).statusCode).toBe(200);
    expect(await statusOf(held)).toBe('pending');
    // Nor does the end of the chain approve the owner's key's write.
    const ownersKey = await createApiKey(h.db, { orgId: org.organization.id, label: "the owner's agent", access: 'read_write' }, { type: 'user', id: owner.user.id });
    const refused = await approveAs(chained.session, await hold(ownersKey.token, 'review for the owner'));
    expect(json(refused).error).toMatchObject({ code: 'set_up_by_key_creator', message: expect.stringContaining(owner.email) });
  });
});

describe('a quorum counts people who may still decide', () => {
  it('an approval of a person deactivated since does not count when the next one comes', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const leaving = await reviewer(org, 'leaving');
    const staying = await reviewer(org, 'staying');
    const held = await hold(org.readWriteToken, 'big plan before a departure');
    expect((await approveWithToken(leaving.token, held)).statusCode).toBe(200);
    await updatePerson(h.db, { orgId: org.organization.id, userId: leaving.user.id }, { active: false }, cliManager);
    const second = await approveWithToken(staying.token, held);
    expect(second.statusCode, second.body).toBe(200);
    expect(await statusOf(held)).toBe('pending');
    const third = await reviewer(org, 'third');
    expect(json(await approveWithToken(third.token, held)).data).toMatchObject({ status: 'approved' });
    const approved = (await h.db.query("SELECT data FROM audit_events WHERE review_id = $1 AND type = 'review.approved'", [held])).rows[0];
    expect(approved.data.approvals).toEqual([staying.user.id, third.user.id]);
  });

  it('an approval of a person demoted below reviewer since does not count either', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const demoted = await reviewer(org, 'demoted');
    const other = await reviewer(org, 'other');
    const held = await hold(org.readWriteToken, 'big plan before a demotion');
    expect((await approveWithToken(demoted.token, held)).statusCode).toBe(200);
    await updatePerson(h.db, { orgId: org.organization.id, userId: demoted.user.id }, { role: 'member' }, cliManager);
    expect((await approveWithToken(other.token, held)).statusCode).toBe(200);
    expect(await statusOf(held)).toBe('pending');
  });
});

describe("the operator's CLI is exempt", () => {
  const cliEnv = () => ({ ...process.env, DATABASE_URL: inject('databaseUrl'), PUBLIC_URL: publicUrl, SMTP_URL: 'smtp://127.0.0.1:9' });

  it('`user create` and `user password-link` print the link, even with email configured, and record nobody as having set the person up', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const admin = await adminOf(org);
    const created = await runCli(['user', 'create', '--org', org.organization.slug, '--email', `cli@${org.organization.slug}.test`, '--role', 'reviewer', '--json'], cliEnv());
    expect(created.code, created.stderr).toBe(0);
    expect(created.json.set_password_url).toMatch(/\/set-password#gate_l_pwl_/);
    expect(created.json.setUpBy).toBeNull();
    expect(await setUpByOf(created.json.id)).toBeNull();

    // An admin's answered reset records them; the operator's reset after it clears it.
    expect((await admin.session.request({ method: 'POST', url: `/console/api/v1/people/${created.json.id}/reset-password` })).statusCode).toBe(200);
    expect(await setUpByOf(created.json.id)).toBe(admin.id);
    const reset = await runCli(['user', 'password-link', '--org', org.organization.slug, '--email', `cli@${org.organization.slug}.test`, '--json'], cliEnv());
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.json.set_password_url).toMatch(/\/set-password#gate_l_pwl_/);
    expect(await setUpByOf(created.json.id)).toBeNull();

    // The person the CLI set up and the admin are two people toward a quorum.
    const token = (await runCli(['user', 'token', '--org', org.organization.slug, '--email', `cli@${org.organization.slug}.test`, '--json'], cliEnv())).json.token as string;
    const held = await hold(org.readWriteToken, 'big plan of the operator');
    expect((await approveWithToken(token, held)).statusCode).toBe(200);
    expect(json(await approveAs(admin.session, held)).data).toMatchObject({ status: 'approved' });
  });
});
