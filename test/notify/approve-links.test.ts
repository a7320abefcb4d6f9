import type { InjectOptions } from 'fastify';
import { runner } from 'node-pg-migrate';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { linksIn, startMailCatcher, type MailCatcher } from '../support/mail-catcher';
import { SoftwareAuthenticator } from '../support/software-authenticator';

// The organization's "Approve links" setting on the real Temporal dev server and PostgreSQL: "anyone with the link"
// (what every organization had) or "signed in as that person" (what new organizations get). Signed in, an Approve
// link needs the console session of its own person: nobody signed in is refused, so is anyone else, saying whom
// the link is for; the person signed in decides in one tap. Deny links work by the link alone. An organization
// whose approvals need a passkey asks for the person's passkey instead, which proves more, and no session.

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

beforeEach(() => {
  address += 1;
});

/** Each test calls from an address of its own, under the routes' per-address limits. */
const remoteAddress = () => `10.1.${Math.floor(address / 250)}.${(address % 250) + 1}`;

const hold = async (org: TestOrganization, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id as string;
};

async function linksTo(email: string, reviewId: string) {
  const [approve, deny] = linksIn(await catcher.mailTo(email, reviewId), `${publicUrl}/decide#`).map((link) => link.slice(`${publicUrl}/decide#`.length));
  return { approve: approve!, deny: deny! };
}

/** A decision link call with the token in the body, from a browser that may hold a console session. */
const call = (path: 'read' | 'confirm' | 'passkey-challenge', body: Record<string, unknown>, session?: ConsoleSession, headers: InjectOptions['headers'] = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/console/api/decision-links/${path}`,
    headers: { 'content-type': 'application/json', ...(session ? { cookie: session.cookie, 'x-csrf-token': session.csrfToken } : {}), ...headers },
    payload: JSON.stringify(body),
    remoteAddress: remoteAddress(),
  });

const reviewOf = async (reviewId: string) => (await h.db.query('SELECT status, decided_by, decided_via FROM reviews WHERE id = $1', [reviewId])).rows[0];
const tasksTitled = async (org: TestOrganization, title: string) =>
  (await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title = $2', [org.organization.id, title])).rowCount;

interface SignedInOrganization {
  org: TestOrganization;
  /** The person the links are read for, signed in to the console. */
  rita: TestPerson & { session: ConsoleSession };
  /** Another reviewer of the organization, signed in. */
  sam: TestPerson & { session: ConsoleSession };
}

async function organizationWithPeople(settings: Parameters<Harness['createOrganization']>[0] = {}): Promise<SignedInOrganization> {
  const org = await h.createOrganization(settings);
  const rita = await addPerson(h.db, org.organization, 'reviewer');
  const sam = await addPerson(h.db, org.organization, 'reviewer');
  return {
    org,
    rita: { ...rita, session: await signIn(h.app, org.organization, rita) },
    sam: { ...sam, session: await signIn(h.app, org.organization, sam) },
  };
}

describe('the Approve links setting', () => {
  it('is "signed in as that person" for a new organization; owners and admins change it, audited; reviewers may not; nothing else is taken', async () => {
    const { org, rita } = await organizationWithPeople();
    const owner = await addPerson(h.db, org.organization, 'owner');
    const ownerSession = await signIn(h.app, org.organization, owner);
    const read = async () => json(await ownerSession.request({ method: 'GET', url: '/console/api/v1/organization' })).data;
    expect(await read()).toMatchObject({ approve_links: 'signed_in' });

    const changed = await ownerSession.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { approve_links: 'anyone_with_link' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(json(changed).data).toMatchObject({ approve_links: 'anyone_with_link' });
    const { rows } = await h.db.query("SELECT actor_id, data FROM audit_events WHERE org_id = $1 AND type = 'organization.updated' ORDER BY id", [org.organization.id]);
    expect(rows).toEqual([{ actor_id: owner.user.id, data: { approveLinks: 'anyone_with_link' } }]);

    const byReviewer = await rita.session.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { approve_links: 'signed_in' } });
    expect(byReviewer.statusCode).toBe(403);
    expect(json(byReviewer).error.code).toBe('insufficient_role');
    for (const value of ['passkey', 'SIGNED_IN', '', null, true]) {
      const refused = await ownerSession.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { approve_links: value } });
      expect(refused.statusCode, `${JSON.stringify(value)}: ${refused.body}`).toBe(422);
      expect(json(refused).error).toMatchObject({ code: 'validation_failed', details: { fields: [{ field: 'approve_links' }] } });
    }
    expect(await read()).toMatchObject({ approve_links: 'anyone_with_link' });
  });

  it('the migration keeps every existing organization at "anyone with the link"; organizations made after it start signed in', async () => {
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
    await admin.connect();
    const name = `gatehouse_approve_links_${Date.now()}_${process.pid}`;
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(inject('databaseUrl'));
      url.pathname = `/${name}`;
      const dir = fileURLToPath(new URL('../../db/migrations', import.meta.url));
      const before = readdirSync(dir)
        .filter((file) => file.endsWith('.sql'))
        .sort()
        .findIndex((file) => file.includes('_approve_links'));
      const migrate = (count: number) =>
        runner({ databaseUrl: url.toString(), dir, direction: 'up', count, migrationsTable: 'gatehouse_migrations', log: () => {}, verbose: false });
      await migrate(before);
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      try {
        await db.query("INSERT INTO organizations (id, slug, name) VALUES ('org_before', 'before', 'Made before the setting')");
        await migrate(Infinity);
        await db.query("INSERT INTO organizations (id, slug, name) VALUES ('org_after', 'after', 'Made after it')");
        const { rows } = await db.query('SELECT slug, approve_links FROM organizations ORDER BY slug');
        expect(rows).toEqual([
          { slug: 'after', approve_links: 'signed_in' },
          { slug: 'before', approve_links: 'anyone_with_link' },
        ]);
      } finally {
        await db.end();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe('an Approve link, signed in as that person', () => {
  it('nobody signed in: refused, saying so; the link stays usable; the Deny link works by the link alone', async () => {
    const { org, rita } = await organizationWithPeople({ approveLinks: 'signed_in' });
    const reviewId = await hold(org, 'review without a session');
    const { approve, deny } = await linksTo(rita.email, reviewId);

    const page = json(await call('read', { token: approve })).data;
    expect(page).toMatchObject({ verdict: 'approved', state: 'usable', confirm_needs: 'signed_in', session: 'none', person: { email: rita.email }, organization: { slug: org.organization.slug } });
    const refused = await call('confirm', { token: approve });
    expect(refused.statusCode, refused.body).toBe(401);
    expect(json(refused).error).toMatchObject({ code: 'sign_in_required', message: expect.stringContaining(rita.email) });
    expect(json(await call('read', { token: approve })).data.state).toBe('usable');
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending', decided_by: null });

    expect(json(await call('read', { token: deny })).data).toMatchObject({ verdict: 'denied', confirm_needs: 'link' });
    const denied = await call('confirm', { token: deny });
    expect(denied.statusCode, denied.body).toBe(200);
    expect(json(denied).data).toMatchObject({ status: 'denied', applied: false });
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'denied', decided_by: rita.user.id, decided_via: 'link' });
    expect(await tasksTitled(org, 'review without a session')).toBe(0);
  });

  it('signed in as someone else: refused, naming whom the link is for; signed in as the person: one tap applies it', async () => {
    const { org, rita, sam } = await organizationWithPeople({ approveLinks: 'signed_in' });
    const reviewId = await hold(org, 'review as the right person');
    const { approve } = await linksTo(rita.email, reviewId);

    expect(json(await call('read', { token: approve }, sam.session)).data).toMatchObject({ session: 'someone_else', person: { email: rita.email } });
    const wrong = await call('confirm', { token: approve }, sam.session);
    expect(wrong.statusCode, wrong.body).toBe(403);
    expect(json(wrong).error).toMatchObject({ code: 'wrong_person', message: expect.stringContaining(`This link is for ${rita.email}`) });
    expect(json(wrong).error.message).toContain(sam.email);
    // A session of another organization is someone else too.
    const elsewhere = await organizationWithPeople();
    expect((await call('confirm', { token: approve }, elsewhere.rita.session)).statusCode).toBe(403);
    // The person's session without its CSRF token is no session's word.
    const forged = await call('confirm', { token: approve }, rita.session, { 'x-csrf-token': 'not the token' });
    expect(forged.statusCode).toBe(403);
    expect(json(forged).error.code).toBe('csrf_failed');
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'pending' });

    expect(json(await call('read', { token: approve }, rita.session)).data).toMatchObject({ session: 'this_person', state: 'usable' });
    const approved = await call('confirm', { token: approve, comment: 'signed in on my phone' }, rita.session);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(json(approved).data).toMatchObject({ status: 'approved', applied: true });
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'approved', decided_by: rita.user.id, decided_via: 'link' });
    expect(await tasksTitled(org, 'review as the right person')).toBe(1);
  });

  it('anyone with the link: the link alone approves, as before the setting', async () => {
    const { org, rita } = await organizationWithPeople({ approveLinks: 'anyone_with_link' });
    const reviewId = await hold(org, 'review with the link alone');
    const { approve } = await linksTo(rita.email, reviewId);
    expect(json(await call('read', { token: approve })).data).toMatchObject({ confirm_needs: 'link', session: 'none' });
    const approved = await call('confirm', { token: approve });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'approved', decided_by: rita.user.id });
  });

  it('where approvals need a passkey, the stricter wins: the link’s person’s passkey approves, with no session', async () => {
    const { org, rita } = await organizationWithPeople({ approveLinks: 'signed_in' });
    const authenticator = new SoftwareAuthenticator({ rpId: new URL(publicUrl).hostname, origin: publicUrl });
    const options = json(await rita.session.request({ method: 'POST', url: '/console/api/passkeys/registration-options' })).data;
    const registered = await rita.session.request({ method: 'POST', url: '/console/api/passkeys', payload: { password: rita.password, response: authenticator.register(options.challenge) } });
    expect(registered.statusCode, registered.body).toBe(201);
    await h.db.query('UPDATE organizations SET approvals_need_passkey = true WHERE id = $1', [org.organization.id]);
    const reviewId = await hold(org, 'review with a passkey, not a session');
    const { approve } = await linksTo(rita.email, reviewId);

    expect(json(await call('read', { token: approve })).data).toMatchObject({ confirm_needs: 'passkey', session: 'none' });
    const unsigned = await call('confirm', { token: approve });
    expect(unsigned.statusCode).toBe(403);
    expect(json(unsigned).error.code).toBe('passkey_required');
    const asked = json(await call('passkey-challenge', { token: approve })).data;
    const approved = await call('confirm', { token: approve, passkey: { ...authenticator.assert(asked.challenge), signed_at: asked.signed_at } });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await reviewOf(reviewId)).toMatchObject({ status: 'approved', decided_by: rita.user.id, decided_via: 'link' });
  });
});
