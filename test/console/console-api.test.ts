import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { catalog } from '../../api/catalog';
import { isOfferedOn, type Operation } from '../../api/catalog/operation';
import { createPersonalToken } from '../../domain/identity/people';
import { offerSlackLink } from '../../domain/notify/slack-links';
import { insertWebhookDelivery, insertWebhookEndpoint, insertAppliedWrite } from '../support/fixtures';
import { forgiveAttempt, remembered, throttleKeys, waitAfter, type SignInThrottle } from '../../domain/identity/sign-in-throttle';
import { addPerson, cookieOf, freshAddress, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';

// The console's API as a browser's page calls it (inject, against the real database): sessions, the cross-site
// rules, who may do what, and that every change is recorded. test/console/console.test.ts walks the same in Chromium.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let owner: TestPerson;
let admin: TestPerson;
let member: TestPerson;
let ownerSession: ConsoleSession;

/**
 * From one address: 2 failures free, then 30 s doubling up to 2 minutes. From every address together: 5 free, then
 * a minute. Failures are forgotten one every 10 minutes. (Tests let a wait pass by moving it back in the table.)
 */
const fastThrottle: SignInThrottle = {
  perAddress: { free: 2, firstWaitMs: 30_000, maxWaitMs: 120_000, forgetOneEveryMs: 10 * 60_000 },
  perAccount: { free: 5, firstWaitMs: 60_000, maxWaitMs: 60_000, forgetOneEveryMs: 10 * 60_000 },
  knownAddressMs: 24 * 60 * 60_000,
};

beforeAll(async () => {
  h = await startHarness({
    sessions: { idleMs: 60 * 60 * 1000, lifetimeMs: 4 * 60 * 60 * 1000, throttle: fastThrottle },
    // One proxy in front (docker-compose.yml's): it says whether the console was reached over https.
    trustProxy: 1,
    temporalUi: { url: 'http://temporal-ui.test', namespace: 'default', roles: ['owner', 'admin'] },
  });
  acme = await h.createOrganization();
  globex = await h.createOrganization();
  owner = await addPerson(h.db, acme.organization, 'owner');
  admin = await addPerson(h.db, acme.organization, 'admin');
  member = await addPerson(h.db, acme.organization, 'member');
  ownerSession = await signIn(h.app, acme.organization, owner);
});

afterAll(async () => {
  await h?.close();
});

/** A sign-in from `from` (an address of its own unless given: the limit per address is tested on its own). */
const signInRequest = (payload: object, headers: Record<string, string> = {}, from = freshAddress()) =>
  h.app.inject({ method: 'POST', url: '/console/api/session', payload, headers, remoteAddress: from });


describe('signing in', () => {
  it('starts a server-side session in an HttpOnly, SameSite=Strict cookie and answers who is signed in', async () => {
    const response = await signInRequest({ organization: acme.organization.slug, email: owner.email, password: owner.password });
    expect(response.statusCode).toBe(201);
    const cookie = response.cookies.find((candidate) => candidate.name === 'gatehouse_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie.secure).toBeFalsy();
    expect(cookie.value).toMatch(/^gate_s_ses_/);
    const session = json(response).data;
    expect(session).toMatchObject({
      person: { email: owner.email, role: 'owner' },
      organization: { slug: acme.organization.slug, api_access: true },
      permissions: ['decideReviews', 'manageKeys', 'managePeople', 'editPolicy', 'seeMemories', 'readAudit', 'manageWebhooks'],
    });
    const { rows } = await h.db.query('SELECT secret_digest FROM sessions WHERE id = $1', [cookie.value.split('_').slice(2, 4).join('_')]);
    expect(rows[0].secret_digest).toBeInstanceOf(Buffer);
    expect(rows[0].secret_digest.toString()).not.toContain(cookie.value.slice(-43));
  });

  it('marks the cookie Secure and __Host- when the console is served over https', async () => {
    // Through the proxy that ends TLS, on the api's private network (TRUST_PROXY=1 believes it).
    const proxy = '10.0.0.2';
    const response = await signInRequest(
      { organization: acme.organization.slug, email: owner.email, password: owner.password },
      { 'x-forwarded-proto': 'https', 'x-forwarded-for': freshAddress() },
      proxy,
    );
    expect(response.statusCode).toBe(201);
    const cookie = response.cookies.find((candidate) => candidate.name === '__Host-gatehouse_session');
    expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/' });
    const session = await h.app.inject({
      method: 'GET',
      url: '/console/api/session',
      headers: { cookie: cookieOf(response), 'x-forwarded-proto': 'https', 'x-forwarded-for': freshAddress() },
      remoteAddress: proxy,
    });
    expect(json(session).data.person.email).toBe(owner.email);
  });

  it('gives the same answer for an unknown person, a wrong password and another organization', async () => {
    const answers = await Promise.all([
      signInRequest({ organization: acme.organization.slug, email: 'nobody@example.test', password: 'whatever it is' }),
      signInRequest({ organization: globex.organization.slug, email: admin.email, password: admin.password }),
      signInRequest({ organization: 'no-such-org', email: admin.email, password: admin.password }),
    ]);
    for (const answer of answers) {
      expect(answer.statusCode).toBe(401);
      expect(json(answer).error).toEqual({ code: 'unauthorized', message: 'The organization, email or password is not right' });
      expect(answer.cookies).toHaveLength(0);
    }
  });

  it('refuses a malformed sign-in in the envelope, naming the fields', async () => {
    const response = await signInRequest({ organization: acme.organization.slug, email: owner.email });
    expect(response.statusCode).toBe(422);
    expect(json(response).error.details.fields).toEqual([{ field: 'password', message: expect.any(String) }]);
    const notJson = await h.app.inject({ method: 'POST', url: '/console/api/session', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expect(notJson.statusCode).toBe(415);
    expect(json(notJson).success).toBe(false);
  });

  it('slows guesses from one address with waits that double, refused unheard with Retry-After, and never tells of a lock', async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    const from = freshAddress();
    const attempt = (password: string) => signInRequest({ organization: acme.organization.slug, email: victim.email, password }, {}, from);
    const keys = throttleKeys({ orgSlug: acme.organization.slug, email: victim.email }, from);
    const letTheWaitPass = () => h.db.query('UPDATE sign_in_throttles SET wait_until = now() WHERE key = $1', [keys.pair]);
    const wrong = 'not the password at all';
    // Two failures are free; the third is heard and starts a wait of 30 s.
    for (let i = 0; i < 3; i++) expect((await attempt(wrong)).statusCode).toBe(401);
    const throttled = await attempt(wrong);
    expect(throttled.statusCode).toBe(429);
    const seconds = Number(throttled.headers['retry-after']);
    expect(seconds).toBeGreaterThan(25);
    expect(seconds).toBeLessThanOrEqual(30);
    expect(json(throttled).error).toEqual({
      code: 'rate_limited',
      message: `Too many failed sign-ins with this name from this address; try again in ${seconds} s`,
      details: { retry_after_seconds: seconds },
    });
    expect(throttled.body).not.toMatch(/lock/i);
    // The right password is not heard during the wait either: a guess then would tell nothing.
    expect((await attempt(victim.password)).statusCode).toBe(429);
    await letTheWaitPass();
    expect((await attempt(wrong)).statusCode).toBe(401);
    // The next wait is twice as long.
    const longer = await attempt(victim.password);
    expect(longer.statusCode).toBe(429);
    expect(Number(longer.headers['retry-after'])).toBeGreaterThan(55);
    await letTheWaitPass();
    expect((await attempt(victim.password)).statusCode).toBe(201);
    // A success forgives the address's failures: two are free again.
    for (let i = 0; i < 2; i++) expect((await attempt(wrong)).statusCode).toBe(401);

    // The owners' trail says someone was guessing, and from where; the caller was told nothing of it.
    const { rows } = await h.db.query(`SELECT actor_type, actor_id, data FROM audit_events WHERE type = 'person.sign_in_throttled' AND resource_id = $1`, [victim.user.id]);
    expect(rows).toEqual([{ actor_type: 'system', actor_id: 'sign-in', data: { scope: 'address', failed_attempts: 3, address: from } }]);
  });

  it("a stranger's failures from other addresses never keep the person out of their own", async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    const wrong = { organization: acme.organization.slug, email: victim.email, password: 'a stranger guessing' };
    // A stranger's failures, enough for a lock of old: their address waits…
    const stranger = freshAddress();
    const answers = await Promise.all(Array.from({ length: 5 }, () => signInRequest(wrong, {}, stranger)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([401, 401, 401, 429, 429]);
    expect((await signInRequest(wrong, {}, freshAddress())).statusCode).toBe(401);
    // …the person, from theirs, does not.
    expect((await signInRequest({ ...wrong, password: victim.password }, {}, freshAddress())).statusCode).toBe(201);
  });

  it("guesses spread over many addresses meet the account's own wait, which spares an address that signed it in, and a success forgives", async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    const home = freshAddress();
    const right = { organization: acme.organization.slug, email: victim.email, password: victim.password };
    const wrong = { ...right, password: 'one guess from each address' };
    expect((await signInRequest(right, {}, home)).statusCode).toBe(201);
    // Five failures over every address are free; the sixth is heard and starts the account's wait of a minute.
    for (let i = 0; i < 6; i++) expect((await signInRequest(wrong, {}, freshAddress())).statusCode).toBe(401);
    const refused = await signInRequest(wrong, {}, freshAddress());
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error).toMatchObject({ code: 'rate_limited', details: { retry_after_seconds: 60 } });
    // From an address that never signed the account in, the person waits too (or uses a passkey, never throttled)…
    expect((await signInRequest(right, {}, freshAddress())).statusCode).toBe(429);
    // …but not from one that did; and that success forgives the account's failures.
    expect((await signInRequest(right, {}, home)).statusCode).toBe(201);
    expect((await signInRequest(wrong, {}, freshAddress())).statusCode).toBe(401);
    const { rows } = await h.db.query(`SELECT data FROM audit_events WHERE type = 'person.sign_in_throttled' AND resource_id = $1`, [victim.user.id]);
    expect(rows).toEqual([{ data: { scope: 'account', failed_attempts: 6, address: expect.any(String) } }]);
  });

  it('counts a burst of guesses before checking them: no more than the free ones and the one that starts the wait are heard', async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    const from = freshAddress();
    const wrong = { organization: acme.organization.slug, email: victim.email, password: 'a wrong guess, again' };
    const answers = await Promise.all(Array.from({ length: 12 }, () => signInRequest(wrong, {}, from)));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(fastThrottle.perAddress.free + 1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - fastThrottle.perAddress.free - 1);
    expect((await signInRequest({ ...wrong, password: victim.password }, {}, from)).statusCode).toBe(429);
    expect((await signInRequest({ ...wrong, password: victim.password }, {}, freshAddress())).statusCode).toBe(201);
  });

  it('throttles a name that matches nobody, a wrong password and a deactivated account by the same rows, answered alike', async () => {
    const known = await addPerson(h.db, acme.organization, 'reviewer');
    const leaving = await addPerson(h.db, acme.organization, 'reviewer');
    await h.db.query('UPDATE users SET deactivated_at = now() WHERE id = $1', [leaving.user.id]);
    const tries = {
      nobody: { organization: acme.organization.slug, email: `nobody-${Date.now()}@acme.test`, password: 'anything at all' },
      wrongPassword: { organization: acme.organization.slug, email: known.email, password: 'anything at all' },
      deactivated: { organization: acme.organization.slug, email: leaving.email, password: leaving.password },
    };
    const answers: Record<string, { status: number; body: unknown; retryAfter: unknown }[]> = {};
    const addresses: Record<string, string> = {};
    for (const [name, payload] of Object.entries(tries)) {
      const from = (addresses[name] = freshAddress());
      answers[name] = [];
      for (let i = 0; i < 4; i++) {
        const answer = await signInRequest(payload, {}, from);
        // The seconds left of a wait aside (a moment's difference), the answers are the same.
        const body = answer.body.replace(/\d+/g, 'N');
        answers[name].push({ status: answer.statusCode, body, retryAfter: answer.headers['retry-after'] !== undefined });
      }
    }
    expect(answers.nobody!.map((answer) => answer.status)).toEqual([401, 401, 401, 429]);
    expect(answers.wrongPassword).toEqual(answers.nobody);
    expect(answers.deactivated).toEqual(answers.nobody);
    // The same name typed otherwise (case, spaces) is the same account, still waiting.
    const shouted = { ...tries.nobody, organization: tries.nobody.organization.toUpperCase(), email: ` ${tries.nobody.email.toUpperCase()} ` };
    expect((await signInRequest(shouted, {}, addresses.nobody)).statusCode).toBe(429);
  });

  it('forgets failures with time', async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    const from = freshAddress();
    const wrong = { organization: acme.organization.slug, email: victim.email, password: 'forgotten in time' };
    for (let i = 0; i < 3; i++) expect((await signInRequest(wrong, {}, from)).statusCode).toBe(401);
    expect((await signInRequest(wrong, {}, from)).statusCode).toBe(429);
    // 25 minutes on: two of the three failures are forgotten (one every 10 minutes), and the wait is long over.
    const keys = throttleKeys({ orgSlug: acme.organization.slug, email: victim.email }, from);
    await h.db.query(
      `UPDATE sign_in_throttles SET last_failure_at = last_failure_at - interval '25 minutes', wait_until = wait_until - interval '25 minutes' WHERE key = ANY($1)`,
      [[keys.pair, keys.account]],
    );
    // One remembered, this one the second: free again, so the next is heard at once too.
    expect((await signInRequest(wrong, {}, from)).statusCode).toBe(401);
    const { rows } = await h.db.query('SELECT failures FROM sign_in_throttles WHERE key = $1', [keys.pair]);
    expect(rows[0].failures).toBe(2);
    expect((await signInRequest(wrong, {}, from)).statusCode).toBe(401);
  });

  it('a right password forgiven while another sign-in of the same name and address is counted: neither deadlocks', async () => {
    const victim = await addPerson(h.db, acme.organization, 'reviewer');
    // An address whose row sorts before the account's: the order one statement over both rows would lock them in.
    let from = freshAddress();
    let keys = throttleKeys({ orgSlug: acme.organization.slug, email: victim.email }, from);
    while (Buffer.compare(keys.pair, keys.account) >= 0) {
      from = freshAddress();
      keys = throttleKeys({ orgSlug: acme.organization.slug, email: victim.email }, from);
    }
    expect((await signInRequest({ organization: acme.organization.slug, email: victim.email, password: 'wrong, once' }, {}, from)).statusCode).toBe(401);
    let forgiven: Promise<void> | undefined;
    // A claim in flight holds the account's row (claimAttempt takes it first) and comes for the address's.
    await h.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM sign_in_throttles WHERE key = $1 FOR UPDATE', [keys.account]);
      forgiven = forgiveAttempt(h.db, keys, fastThrottle);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.query('SELECT 1 FROM sign_in_throttles WHERE key = $1 FOR UPDATE', [keys.pair]);
    });
    await forgiven;
    const { rows } = await h.db.query('SELECT failures FROM sign_in_throttles WHERE key = ANY($1)', [[keys.pair, keys.account]]);
    expect(rows.map((row) => row.failures)).toEqual([0, 0]);
  });

  it('the waits double up to their longest, and are free again once their failures are forgotten', () => {
    const backoff = fastThrottle.perAddress;
    expect([1, 2, 3, 4, 5, 6, 20].map((failures) => waitAfter(failures, backoff))).toEqual([0, 0, 30_000, 60_000, 120_000, 120_000, 120_000]);
    const at = new Date('2031-01-01T12:00:00Z');
    const row = { failures: 5, last_failure_at: new Date(at.getTime() - 25 * 60_000) };
    expect(remembered(row, backoff, at)).toBe(3);
    expect(remembered(row, backoff, new Date(at.getTime() + 60 * 60_000))).toBe(0);
    expect(remembered({ failures: 0, last_failure_at: null }, backoff, at)).toBe(0);
  });

  it('takes the Origin of its public URL as its own (a proxy in front that is not trusted)', async () => {
    const response = await signInRequest({ organization: acme.organization.slug, email: owner.email, password: owner.password }, { origin: 'http://gatehouse.test' });
    expect(response.statusCode).toBe(201);
  });

  it("a page's own refreshes do not keep an idle session alive; the person's requests do", async () => {
    const session = await signIn(h.app, acme.organization, admin);
    const id = sessionIdOf(session);
    await h.db.query(`UPDATE sessions SET last_seen_at = now() - interval '30 minutes' WHERE id = $1`, [id]);
    const idleMinutes = async () => (await h.db.query(`SELECT (extract(epoch FROM now() - last_seen_at) / 60)::float8 AS m FROM sessions WHERE id = $1`, [id])).rows[0].m;
    const background = await session.request({ method: 'GET', url: '/console/api/v1/reviews', headers: { 'x-gatehouse-background': '1' } });
    expect(background.statusCode).toBe(200);
    expect(await idleMinutes()).toBeGreaterThan(29);
    await session.request({ method: 'GET', url: '/console/api/v1/reviews' });
    expect(await idleMinutes()).toBeLessThan(1);
  });

  it('ends a session on sign-out, on idling too long, and at its absolute expiry', async () => {
    const idle = await signIn(h.app, acme.organization, admin);
    const old = await signIn(h.app, acme.organization, admin);
    const leaving = await signIn(h.app, acme.organization, admin);
    const whoAmI = async (session: ConsoleSession) => {
      const answer = await session.request({ method: 'GET', url: '/console/api/session' });
      return { statusCode: json(answer).data ? answer.statusCode : 401 };
    };

    await h.db.query(`UPDATE sessions SET last_seen_at = now() - interval '61 minutes' WHERE id = $1`, [sessionIdOf(idle)]);
    await h.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [sessionIdOf(old)]);
    expect((await whoAmI(idle)).statusCode).toBe(401);
    expect((await whoAmI(old)).statusCode).toBe(401);

    expect((await whoAmI(leaving)).statusCode).toBe(200);
    const out = await leaving.request({ method: 'DELETE', url: '/console/api/session' });
    expect(out.statusCode).toBe(200);
    expect(out.cookies[0]).toMatchObject({ name: 'gatehouse_session', value: '' });
    expect((await whoAmI(leaving)).statusCode).toBe(401);
    expect((await leaving.request({ method: 'GET', url: '/console/api/v1/organization' })).statusCode).toBe(401);
  });
});

function sessionIdOf(session: ConsoleSession): string {
  return /gate_s_(ses_[0-9a-z]{26})_/.exec(session.cookie)![1]!;
}

describe('links to the Temporal Web UI', () => {
  it('go only to the roles the setting names (the Web UI shows every organization)', async () => {
    const asOwner = json(await ownerSession.request({ method: 'GET', url: '/console/api/session' })).data;
    expect(asOwner.workflow_url_prefix).toBe('http://temporal-ui.test/namespaces/default/workflows/');
    const asMember = json(await (await signIn(h.app, acme.organization, member)).request({ method: 'GET', url: '/console/api/session' })).data;
    expect(asMember.workflow_url_prefix).toBeNull();
  });
});

describe('cross-site requests and the wrong credential', () => {
  it('refuses a state-changing call without the CSRF token, from another origin, or that the browser says is cross-site', async () => {
    const attempts = [
      { headers: { cookie: ownerSession.cookie } },
      { headers: { cookie: ownerSession.cookie, 'x-csrf-token': 'forged' } },
      { headers: { cookie: ownerSession.cookie, 'x-csrf-token': ownerSession.csrfToken, origin: 'https://evil.example' } },
      { headers: { cookie: ownerSession.cookie, 'x-csrf-token': ownerSession.csrfToken, 'sec-fetch-site': 'cross-site' } },
    ];
    for (const attempt of attempts) {
      const response = await h.app.inject({ method: 'PATCH', url: '/console/api/v1/organization', payload: { api_access: false }, ...attempt });
      expect(response.statusCode).toBe(403);
      expect(json(response).error.code).toBe('csrf_failed');
    }
    const { rows } = await h.db.query('SELECT api_access FROM organizations WHERE id = $1', [acme.organization.id]);
    expect(rows[0].api_access).toBe(true);

    const crossSiteSignIn = await signInRequest(
      { organization: acme.organization.slug, email: owner.email, password: owner.password },
      { origin: 'https://evil.example' },
    );
    expect(crossSiteSignIn.statusCode).toBe(403);
  });

  it('never takes an API key or a personal token on a console route, nor a session cookie on the agents’ API', async () => {
    for (const token of [acme.readWriteToken, acme.reviewerToken]) {
      const response = await h.app.inject({ method: 'GET', url: '/console/api/v1/api-keys', headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode).toBe(401);
      const both = await ownerSession.request({ method: 'GET', url: '/console/api/v1/api-keys', headers: { authorization: `Bearer ${token}` } });
      expect(both.statusCode).toBe(401);
    }
    for (const url of ['/api/v1/tasks', '/api/v1/reviews', '/api/v1/me']) {
      const response = await h.app.inject({ method: 'GET', url, headers: { cookie: ownerSession.cookie } });
      expect(response.statusCode).toBe(401);
    }
    const asBearer = await h.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${ownerSession.cookie.split('=')[1]}` } });
    expect(asBearer.statusCode).toBe(401);
  });

  it("keeps the organization's settings out of the agents' API and its OpenAPI document", async () => {
    expect((await h.request({ method: 'GET', url: '/api/v1/api-keys', token: acme.reviewerToken })).statusCode).toBe(404);
    expect((await h.request({ method: 'POST', url: '/api/v1/people', token: acme.reviewerToken, payload: {} })).statusCode).toBe(404);
    const document = json(await h.app.inject({ method: 'GET', url: '/api/openapi.json' }));
    expect(Object.keys(document.paths).filter((path) => /api-keys|people|\/organization$/.test(path))).toEqual([]);
  });
});

describe('API keys in the console', () => {
  it('creates a key shown once that works over REST, lists it with its creator, and revokes it at once', async () => {
    const created = await ownerSession.request({
      method: 'POST',
      url: '/console/api/v1/api-keys',
      payload: { label: 'Console agent', access: 'read_write', abilities: ['tasks.read', 'tasks.write'] },
    });
    expect(created.statusCode).toBe(200);
    const { key, token } = json(created).data;
    expect(token).toMatch(/^gate_k_key_/);
    expect(key).toMatchObject({ label: 'Console agent', access: 'read_write', abilities: ['tasks.read', 'tasks.write'], state: 'active' });
    expect(key.created_by).toEqual({ id: owner.user.id, email: owner.email });

    const listed = json(await ownerSession.request({ method: 'GET', url: '/console/api/v1/api-keys' })).data;
    const shown = listed.find((candidate: { id: string }) => candidate.id === key.id);
    expect(shown.created_by.email).toBe(owner.email);
    expect(JSON.stringify(listed)).not.toContain(token.slice(-43));

    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token })).statusCode).toBe(200);
    expect((await h.request({ method: 'GET', url: '/api/v1/customers', token })).statusCode).toBe(403);

    const revoked = await ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${key.id}/revoke` });
    expect(json(revoked).data.state).toBe('revoked');
    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token })).statusCode).toBe(401);

    const { rows } = await h.db.query(
      `SELECT type, actor_type, actor_id FROM audit_events WHERE resource_id = $1 ORDER BY id`,
      [key.id],
    );
    expect(rows).toEqual([
      { type: 'api_key.created', actor_type: 'user', actor_id: owner.user.id },
      { type: 'api_key.revoked', actor_type: 'user', actor_id: owner.user.id },
    ]);
  });

  it('refuses a bad key in the envelope and creates nothing', async () => {
    const before = (await h.db.query('SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1', [acme.organization.id])).rows[0].n;
    const bad = [
      { label: '', access: 'read' },
      { label: 'x', access: 'admin' },
      { label: 'x', access: 'read', abilities: ['tasks.write'] },
      { label: 'x', access: 'read', abilities: ['nope.read'] },
      { label: 'x', access: 'read', expires_at: '2001-01-01T00:00:00Z' },
      { label: 'x', access: 'read', id: 'key_mine' },
    ];
    for (const payload of bad) {
      const response = await ownerSession.request({ method: 'POST', url: '/console/api/v1/api-keys', payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(json(response).error.code).toBe('validation_failed');
    }
    const after = (await h.db.query('SELECT count(*)::int AS n FROM api_keys WHERE org_id = $1', [acme.organization.id])).rows[0].n;
    expect(after).toBe(before);
  });

  it('an expired key is refused', async () => {
    const created = json(
      await ownerSession.request({
        method: 'POST',
        url: '/console/api/v1/api-keys',
        payload: { label: 'Short-lived', access: 'read', expires_at: new Date(Date.now() + 60_000).toISOString() },
      }),
    ).data;
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: created.token })).statusCode).toBe(200);
    await h.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.key.id]);
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token: created.token })).statusCode).toBe(401);
    const listed = json(await ownerSession.request({ method: 'GET', url: '/console/api/v1/api-keys' })).data;
    expect(listed.find((key: { id: string }) => key.id === created.key.id).state).toBe('expired');
  });

  it('switching API access off refuses every key and personal token, while people keep working in the console', async () => {
    const off = await ownerSession.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { api_access: false } });
    expect(json(off).data.api_access).toBe(false);
    try {
      expect(json(await h.request({ method: 'GET', url: '/api/v1/tasks', token: acme.readWriteToken })).error.code).toBe('api_access_disabled');
      expect((await h.request({ method: 'GET', url: '/api/v1/reviews', token: acme.reviewerToken })).statusCode).toBe(403);
      const fresh = await signIn(h.app, acme.organization, admin);
      expect((await fresh.request({ method: 'GET', url: '/console/api/v1/api-keys' })).statusCode).toBe(200);
      expect((await fresh.request({ method: 'GET', url: '/console/api/v1/reviews' })).statusCode).toBe(200);
    } finally {
      await ownerSession.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { api_access: true } });
    }
    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token: acme.readWriteToken })).statusCode).toBe(200);
    const { rows } = await h.db.query(
      `SELECT data FROM audit_events WHERE org_id = $1 AND type = 'organization.updated' AND actor_id = $2 ORDER BY id`,
      [acme.organization.id, owner.user.id],
    );
    expect(rows.map((row) => row.data.apiAccess)).toEqual([false, true]);
  });
});

describe('roles', () => {
  it('a member sees the organization and the queue, and is refused key and people settings', async () => {
    const session = await signIn(h.app, acme.organization, member);
    expect(json(await session.request({ method: 'GET', url: '/console/api/session' })).data.permissions).toEqual([]);
    expect((await session.request({ method: 'GET', url: '/console/api/v1/organization' })).statusCode).toBe(200);
    expect((await session.request({ method: 'GET', url: '/console/api/v1/reviews' })).statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', '/console/api/v1/api-keys'],
      ['POST', '/console/api/v1/api-keys'],
      ['GET', '/console/api/v1/people'],
      ['PATCH', '/console/api/v1/organization'],
    ] as const) {
      const response = await session.request({ method, url, payload: method === 'GET' ? undefined : { label: 'x', access: 'read' } });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(json(response).error.code).toBe('insufficient_role');
    }
  });

  it('an admin manages everyone but owners, and cannot make an owner', async () => {
    const session = await signIn(h.app, acme.organization, admin);
    const demote = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${owner.user.id}`, payload: { role: 'member' } });
    expect(demote.statusCode).toBe(403);
    const promote = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${member.user.id}`, payload: { role: 'owner' } });
    expect(promote.statusCode).toBe(403);
    const invite = await session.request({ method: 'POST', url: '/console/api/v1/people', payload: { email: 'boss@acme.test', role: 'owner' } });
    expect(invite.statusCode).toBe(403);
    const reviewer = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${member.user.id}`, payload: { role: 'reviewer' } });
    expect(json(reviewer).data.role).toBe('reviewer');
    await session.request({ method: 'PATCH', url: `/console/api/v1/people/${member.user.id}`, payload: { role: 'member' } });
  });

  it("an admin cannot reset a fellow admin's password (the link would be theirs), only an owner can", async () => {
    const peer = await addPerson(h.db, acme.organization, 'admin');
    const session = await signIn(h.app, acme.organization, admin);
    const reset = await session.request({ method: 'POST', url: `/console/api/v1/people/${peer.user.id}/reset-password` });
    expect(reset.statusCode).toBe(403);
    expect((await signIn(h.app, acme.organization, peer)).cookie).toBeTruthy();
    const byOwner = await ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${peer.user.id}/reset-password` });
    expect(byOwner.statusCode).toBe(200);
  });

  it('an organization keeps an active owner', async () => {
    const lonely = await h.createOrganization();
    const only = await addPerson(h.db, lonely.organization, 'owner');
    const session = await signIn(h.app, lonely.organization, only);
    const demote = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${only.user.id}`, payload: { role: 'admin' } });
    expect(demote.statusCode).toBe(409);
    const self = await session.request({ method: 'PATCH', url: `/console/api/v1/people/${only.user.id}`, payload: { active: false } });
    expect(self.statusCode).toBe(409);
    const { rows } = await h.db.query('SELECT role, deactivated_at FROM users WHERE id = $1', [only.user.id]);
    expect(rows[0]).toEqual({ role: 'owner', deactivated_at: null });
  });
});

describe('people', () => {
  it('an invitation gives a one-time link: the person sets a password once, signs in with the role given, and it is all recorded', async () => {
    const invited = await ownerSession.request({ method: 'POST', url: '/console/api/v1/people', payload: { email: 'Newcomer@Acme.test', name: 'New Comer', role: 'reviewer' } });
    expect(invited.statusCode).toBe(200);
    const { person, set_password_link: link } = json(invited).data;
    expect(person).toMatchObject({ email: 'newcomer@acme.test', role: 'reviewer', active: true, has_password: false });
    expect(link.url).toMatch(/^http:\/\/gatehouse\.test\/set-password#gate_l_pwl_/);
    const token = link.url.split('#')[1];

    const read = await h.app.inject({ method: 'POST', url: '/console/api/password-link', payload: { token } });
    expect(json(read).data).toEqual({ email: 'newcomer@acme.test', name: 'New Comer', organization: { slug: acme.organization.slug, name: acme.organization.name } });

    const weak = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'short' } });
    expect(weak.statusCode).toBe(422);
    const set = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'a long enough passphrase' } });
    expect(set.statusCode).toBe(200);
    const again = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'another long passphrase' } });
    expect(again.statusCode).toBe(410);
    expect(json(again).error.code).toBe('link_invalid');

    const session = await signIn(h.app, acme.organization, { email: 'newcomer@acme.test', password: 'a long enough passphrase' });
    expect(json(await session.request({ method: 'GET', url: '/console/api/session' })).data.person.role).toBe('reviewer');

    const { rows } = await h.db.query(`SELECT type, actor_type, actor_id FROM audit_events WHERE resource_id = $1 ORDER BY id`, [person.id]);
    expect(rows.map((row) => [row.type, row.actor_type, row.actor_id])).toEqual([
      ['person.invited', 'user', owner.user.id],
      ['person.password_set', 'user', person.id],
      ['person.signed_in', 'user', person.id],
    ]);
  });

  it('an expired link, a forged one, or a link of the wrong kind is refused', async () => {
    const invited = json(await ownerSession.request({ method: 'POST', url: '/console/api/v1/people', payload: { email: 'late@acme.test', role: 'member' } })).data;
    const token = invited.set_password_link.url.split('#')[1];
    await h.db.query(`UPDATE password_links SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [invited.person.id]);
    for (const candidate of [token, `${token.slice(0, -4)}AAAA`, acme.readWriteToken, 'nonsense']) {
      const response = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token: candidate, password: 'a long enough passphrase' } });
      expect(response.statusCode).toBe(410);
    }
  });

  it('deactivating a person spends their open set-password link; reactivating does not revive it', async () => {
    const invited = json(await ownerSession.request({ method: 'POST', url: '/console/api/v1/people', payload: { email: `away-${Date.now()}@acme.test`, role: 'member' } })).data;
    const token = invited.set_password_link.url.split('#')[1];
    await ownerSession.request({ method: 'PATCH', url: `/console/api/v1/people/${invited.person.id}`, payload: { active: false } });
    await ownerSession.request({ method: 'PATCH', url: `/console/api/v1/people/${invited.person.id}`, payload: { active: true } });
    const set = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'a long enough passphrase' } });
    expect(set.statusCode).toBe(410);
  });

  it('deactivating a person ends their sessions and personal tokens; resetting a password stops the old one', async () => {
    const person = await addPerson(h.db, acme.organization, 'reviewer');
    const theirs = await signIn(h.app, acme.organization, person);
    const personalToken = (await createPersonalToken(h.db, person.user)).token;
    expect((await h.request({ method: 'GET', url: '/api/v1/reviews', token: personalToken })).statusCode).toBe(200);
    const off = await ownerSession.request({ method: 'PATCH', url: `/console/api/v1/people/${person.user.id}`, payload: { active: false } });
    expect(json(off).data.active).toBe(false);
    expect(json(await theirs.request({ method: 'GET', url: '/console/api/session' })).data).toBeNull();
    expect((await h.request({ method: 'GET', url: '/api/v1/reviews', token: personalToken })).statusCode).toBe(401);
    expect((await signInRequest({ organization: acme.organization.slug, email: person.email, password: person.password })).statusCode).toBe(401);
    await ownerSession.request({ method: 'PATCH', url: `/console/api/v1/people/${person.user.id}`, payload: { active: true } });

    const again = await signIn(h.app, acme.organization, person);
    const reset = await ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${person.user.id}/reset-password` });
    expect(json(reset).data.person.has_password).toBe(false);
    expect(json(await again.request({ method: 'GET', url: '/console/api/session' })).data).toBeNull();
    expect((await signInRequest({ organization: acme.organization.slug, email: person.email, password: person.password })).statusCode).toBe(401);

    const ended = await signIn(h.app, acme.organization, {
      email: person.email,
      password: await (async () => {
        const token = json(reset).data.set_password_link.url.split('#')[1];
        await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'a brand new passphrase' } });
        return 'a brand new passphrase';
      })(),
    });
    const endAll = await ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${person.user.id}/end-sessions` });
    expect(json(endAll).data.sessions_ended).toBe(1);
    expect(json(await ended.request({ method: 'GET', url: '/console/api/session' })).data).toBeNull();
  });

  it("never reaches another organization's people or keys", async () => {
    const outsider = await addPerson(h.db, globex.organization, 'owner');
    const globexKeys = json(await (await signIn(h.app, globex.organization, outsider)).request({ method: 'GET', url: '/console/api/v1/api-keys' })).data;
    const attempts = [
      ownerSession.request({ method: 'PATCH', url: `/console/api/v1/people/${outsider.user.id}`, payload: { role: 'member' } }),
      ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${outsider.user.id}/reset-password` }),
      ownerSession.request({ method: 'POST', url: `/console/api/v1/people/${outsider.user.id}/end-sessions` }),
      ownerSession.request({ method: 'POST', url: `/console/api/v1/api-keys/${globexKeys[0].id}/revoke` }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(404);
    }
    const people = json(await ownerSession.request({ method: 'GET', url: '/console/api/v1/people' })).data;
    expect(people.map((person: { email: string }) => person.email)).not.toContain(outsider.email);
    const { rows } = await h.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [globexKeys[0].id]);
    expect(rows[0].revoked_at).toBeNull();
  });
});

describe('pages and the playground', () => {
  it("every answer carries helmet's security headers: pages, API answers, errors, MCP", async () => {
    const answers = [
      await h.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } }),
      await h.app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${acme.readWriteToken}` } }),
      await h.app.inject({ method: 'GET', url: '/api/v1/no-such-thing' }),
      await h.app.inject({ method: 'POST', url: '/mcp', payload: {} }),
    ];
    for (const response of answers) {
      expect(response.headers, response.raw.req.url).toMatchObject({
        'content-security-policy': expect.stringContaining("default-src 'self'"),
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'same-origin',
        'strict-transport-security': expect.stringContaining('max-age='),
      });
    }
  });

  it('serves the app to a browser at any page address, with a policy that forbids framing', async () => {
    for (const url of ['/', '/sign-in', '/settings/advanced/api-keys', '/no/such/page']) {
      const response = await h.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toContain('text/html');
      expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.body).toContain('<div id="root">');
    }
  });

  it('keeps the JSON envelope under /api, /mcp and /console/api, unknown paths included', async () => {
    for (const url of ['/api/nope', '/console/api/nope', '/console/api/v1/tasks', '/mcp/nope']) {
      const response = await h.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(response.statusCode, url).toBe(404);
      expect(json(response).success).toBe(false);
    }
    const post = await h.app.inject({ method: 'POST', url: '/settings', headers: { accept: 'text/html' } });
    expect(post.statusCode).toBe(404);
  });

  it('opens the playground only to a signed-in person; the OpenAPI document stays public', async () => {
    const browser = await h.app.inject({ method: 'GET', url: '/api/docs', headers: { accept: 'text/html' } });
    expect(browser.statusCode).toBe(303);
    expect(browser.headers.location).toBe('/sign-in?next=%2Fapi%2Fdocs');
    const script = await h.app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(script.statusCode).toBe(401);
    expect(json(script).error.code).toBe('unauthorized');
    const withKey = await h.request({ method: 'GET', url: '/api/docs', token: acme.readWriteToken });
    expect(withKey.statusCode).toBe(401);
    const signedIn = await ownerSession.request({ method: 'GET', url: '/api/docs', headers: { accept: 'text/html' } });
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.body).toContain('swagger');
    expect(signedIn.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await h.app.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode).toBe(200);
  });
});

describe('every operation the console offers', () => {
  const offered = catalog.filter((operation) => isOfferedOn(operation, 'console'));
  /** A valid call of each: path parameters and the body or query. */
  let slackUsers = 100;
  const samples: Record<string, () => Promise<{ params?: Record<string, string>; input?: Record<string, unknown> }>> = {
    'reviews.list': async () => ({ input: { status: 'pending' } }),
    'reviews.count': async () => ({ input: { status: 'pending', held_before: new Date().toISOString() } }),
    'reviews.filter_choices': async () => ({}),
    'reviews.get': async () => ({ params: { id: await heldReview() } }),
    'reviews.context': async () => ({ params: { id: await heldReview() } }),
    'reviews.approve': async () => ({ params: { id: await heldReview() }, input: { comment: 'fine' } }),
    'reviews.deny': async () => ({ params: { id: await heldReview() } }),
    'reviews.decide_batch': async () => ({ input: { review_ids: [await heldReview()], verdict: 'denied' } }),
    'writes.get': async () => ({ params: { write: await insertAppliedWrite(h.db, acme.organization.id) } }),
    'writes.undo_now': async () => ({ params: { write: await insertAppliedWrite(h.db, acme.organization.id) } }),
    'reviews.passkey_challenge': async () => ({ params: { id: await heldReview() }, input: { verdict: 'approved' } }),
    'reviews.batch_passkey_challenge': async () => ({ input: { review_ids: [await heldReview(), await heldReview()], verdict: 'approved' } }),
    'writes.undo_passkey_challenge': async () => ({ params: { write: await insertAppliedWrite(h.db, acme.organization.id) } }),
    'organization.get': async () => ({}),
    'organization.update': async () => ({ input: { timezone: 'Europe/Berlin' } }),
    'api_keys.list': async () => ({}),
    'api_keys.abilities': async () => ({}),
    'api_keys.create': async () => ({ input: { label: 'Table key', access: 'read' } }),
    'api_keys.revoke': async () => ({ params: { id: json(await ownerSession.request({ method: 'POST', url: '/console/api/v1/api-keys', payload: { label: 'To revoke', access: 'read' } })).data.key.id } }),
    'api_keys.update_budget': async () => ({
      params: { id: json(await ownerSession.request({ method: 'POST', url: '/console/api/v1/api-keys', payload: { label: 'To budget', access: 'read_write' } })).data.key.id },
      input: { daily_request_budget: 500, write_caps: { 'customers.update': 20 } },
    }),
    'people.list': async () => ({}),
    'people.invite': async () => ({ input: { email: `table-${Date.now()}@acme.test`, role: 'member' } }),
    'people.update': async () => ({ params: { id: (await addPerson(h.db, acme.organization, 'member')).user.id }, input: { role: 'reviewer' } }),
    'people.reset_password': async () => ({ params: { id: (await addPerson(h.db, acme.organization, 'member')).user.id } }),
    'people.end_sessions': async () => ({ params: { id: (await addPerson(h.db, acme.organization, 'member')).user.id } }),
    'overview.get': async () => ({}),
    'agents.list': async () => ({}),
    'agents.calls': async () => ({ input: { interface: 'rest', outcome: 'ok' } }),
    'agents.memories': async () => ({ input: { api_key_id: (await aMemory()).api_key_id } }),
    'agents.correct_memory': async () => ({ params: { id: (await aMemory()).id }, input: { content: 'Corrected by a person', reason: 'It was wrong' } }),
    'agents.forget_memory': async () => ({ params: { id: (await aMemory()).id }, input: { reason: 'No longer true' } }),
    'agents.waiting_tasks': async () => ({}),
    'agents.activity': async () => ({ input: { range: '7d' } }),
    'audit.events': async () => ({ input: { type: 'gate.decided', limit: 5 } }),
    'team.list': async () => ({ input: { include_inactive: 'true' } }),
    'notifications.settings': async () => ({}),
    'notifications.update_settings': async () => ({ input: { review_escalation: '45m', slack_webhook_url: 'http://127.0.0.1:9/slack' } }),
    'notifications.preferences': async () => ({}),
    'notifications.update_preferences': async () => ({ input: { email: ['review.held'] } }),
    'notifications.slack_app': async () => ({}),
    'notifications.update_slack_app': async () => ({ input: { signing_secret: 'a-signing-secret-from-slack', workspace: 'T0TABLE' } }),
    'notifications.slack_links': async () => ({}),
    'notifications.slack_link_offer': async () => ({ input: { token: (await offerSlackLink(h.db, acme.organization.id, { teamId: 'T0TABLE', userId: `U${slackUsers++}` })).token } }),
    'notifications.confirm_slack_link': async () => {
      const slackUser = `U${slackUsers++}`;
      return { input: { token: (await offerSlackLink(h.db, acme.organization.id, { teamId: 'T0TABLE', userId: slackUser })).token, slack_user: slackUser } };
    },
    'notifications.remove_slack_link': async () => ({ input: { workspace: 'T0TABLE', slack_user: 'U0NOBODY' } }),
    'webhooks.event_types': async () => ({}),
    'webhooks.list': async () => ({}),
    'webhooks.get': async () => ({ params: { id: await insertWebhookEndpoint(h.db, acme.organization.id) } }),
    'webhooks.create': async () => ({ input: { url: 'http://127.0.0.1:9/console', event_types: ['review.created'] } }),
    'webhooks.update': async () => ({ params: { id: await insertWebhookEndpoint(h.db, acme.organization.id) }, input: { enabled: false } }),
    'webhooks.delete': async () => ({ params: { id: await insertWebhookEndpoint(h.db, acme.organization.id) } }),
    'webhooks.deliveries': async () => ({ params: { id: (await insertWebhookDelivery(h.db, acme.organization.id)).endpointId } }),
    'webhooks.redeliver': async () => ({ params: { id: (await insertWebhookDelivery(h.db, acme.organization.id)).deliveryId } }),
    'policy.get': async () => ({}),
    'policy.versions': async () => ({}),
    'policy.update': async () => ({ input: { source: testPolicy, comment: 'The same rules again' } }),
    'policy.simulate': async () => ({ input: { source: testPolicy, since: '1h', limit: 5 } }),
    'policy.shadow': async () => ({}),
    'policy.start_shadow': async () => ({ input: { source: testPolicy } }),
    'policy.stop_shadow': async () => {
      await ownerSession.request({ method: 'POST', url: '/console/api/v1/policy/shadow', payload: { source: testPolicy } });
      return {};
    },
    'policy.suggestions': async () => ({ input: { min_approved: '2', days: '30' } }),
    'policy.rule_counts': async () => ({ input: { range: '30d' } }),
    'trust_windows.list': async () => ({ input: { state: 'all' } }),
    'trust_windows.close': async () => ({ params: { id: await openTrustWindow() } }),
  };

  /** A window opened as the owner approves a held write, matching its title, which no other write of the table has. */
  async function openTrustWindow(): Promise<string> {
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: `review for a trust window ${Math.random()}` } });
    const id = json(held).review.id as string;
    const approved = await ownerSession.request({
      method: 'POST',
      url: `/console/api/v1/reviews/${id}/approve`,
      payload: { trust: { minutes: 5, max_uses: 1, match: ['title'] } },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const listed = json(await ownerSession.request({ method: 'GET', url: '/console/api/v1/trust-windows' })).data.windows as { id: string; review_id: string }[];
    return listed.find((window) => window.review_id === id)!.id;
  }

  async function aMemory(): Promise<{ id: string; api_key_id: string }> {
    const remembered = await h.request({ method: 'POST', url: '/api/v1/memories', token: acme.readWriteToken, payload: { content: 'A note for the table' } });
    return json(remembered).data;
  }

  async function heldReview(): Promise<string> {
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'review this for the console' } });
    return json(held).review.id;
  }

  function url(operation: Operation, params: Record<string, string> = {}, query?: Record<string, unknown>): string {
    const path = operation.path.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? 'missing'));
    return `/console/api/v1${path}${query && Object.keys(query).length ? `?${new URLSearchParams(query as Record<string, string>)}` : ''}`;
  }

  it('has a sample for each, and none is a gated write (people decide; agents write)', () => {
    expect(offered.map((operation) => operation.name).sort()).toEqual(Object.keys(samples).sort());
    expect(offered.filter((operation) => operation.kind === 'gated_write')).toEqual([]);
  });

  it.each(offered.map((operation) => [operation.name, operation] as const))('%s answers as its schema says, and refuses roles it does not allow', async (_name, operation) => {
    const sample = await samples[operation.name]!();
    // A GET's input, and a DELETE's beyond its path, travel in the query.
    const reads = operation.method === 'GET' || operation.method === 'DELETE';
    const response = await ownerSession.request({
      method: operation.method,
      url: url(operation, sample.params, reads ? sample.input : undefined),
      ...(reads ? {} : { payload: sample.input ?? {} }),
    });
    expect(response.statusCode, response.body).toBe(200);
    const parsed = operation.output.safeParse(json(response).data);
    expect(parsed.error?.issues ?? []).toEqual([]);

    const roles = operation.access.person!.roles;
    if (!roles.includes('member')) {
      const memberSession = await signIn(h.app, acme.organization, member);
      const refused = await memberSession.request({ method: operation.method, url: url(operation, sample.params), ...(reads ? {} : { payload: sample.input ?? {} }) });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).error.code).toBe('insufficient_role');
    }
  });

  it('records each call in the call log as the console’s, with the person', async () => {
    const since = new Date();
    await ownerSession.request({ method: 'GET', url: '/console/api/v1/people' });
    // The call log's row is written once the answer is on its way.
    await vi.waitFor(async () => {
      const { rows } = await h.db.query(
        `SELECT interface, user_id, api_key_id, status FROM call_log WHERE org_id = $1 AND operation = 'people.list' AND created_at >= $2`,
        [acme.organization.id, since],
      );
      expect(rows).toEqual([{ interface: 'console', user_id: owner.user.id, api_key_id: null, status: 200 }]);
    });
  });
});
