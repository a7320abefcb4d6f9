import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { newId } from '../../domain/kit/ids';
import { createSecretBox, SealedSecretError } from '../../domain/kit/secret-box';
import { attemptDelivery } from '../../domain/notify/deliveries';
import { loadConfig } from '../../runtime/config';
import { formatEncryptionKeys, newEncryptionKey } from '../../runtime/encryption-keys';
import { sealedColumns, sealStoredSecrets, secretBoxOf } from '../../runtime/stored-secrets';
import { launchChromium } from '../support/browser';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { MemoryOAuthClient, startCallback, type Callback } from '../support/oauth-client';
import { startReceiver, type Received, type Receiver } from '../support/receiver';
import { testSecretsKeys } from '../support/secrets';

// The secrets Gatehouse keeps in its database and must read back (webhook signing secrets, Slack signing secrets,
// the Slack webhook URL, the OAuth server's cookie and signing keys) are sealed with SECRETS_ENCRYPTION_KEYS:
// read the rows directly and none is there in plain text, while each still works end to end (a signed delivery, a
// Slack message and a signed press, an OAuth connection). Values an older version stored in plain text keep
// working and are sealed by the start's routine; a sealed value moved to another organization's row does not
// open; a new first key reseals everything, after which the old key can go.

describe('the secret box', () => {
  const [k1, k2] = [newEncryptionKey('k1'), newEncryptionKey('k2')];
  const place = 'webhook_endpoints.secret:whk_1';

  it('seals with a fresh nonce, the key id in the stored form, and opens only where it was sealed', () => {
    const box = createSecretBox([k1]);
    const sealed = box.seal('whsec_plain', place);
    expect(sealed).toMatch(/^sealed:v1:k1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('plain');
    expect(box.seal('whsec_plain', place)).not.toBe(sealed);
    expect(box.open(sealed, place)).toBe('whsec_plain');
    expect(() => box.open(sealed, 'webhook_endpoints.secret:whk_2')).toThrow(SealedSecretError);
    expect(() => box.open(sealed, 'webhook_endpoints.secret:whk_2')).toThrow('does not open with key "k1"');
    const changed = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(() => box.open(changed, place)).toThrow(SealedSecretError);
    // A plain value (stored before the key, or by an older version during an upgrade) is read as it is.
    expect(box.open('whsec_older', place)).toBe('whsec_older');
  });

  it('rotates: the first key seals, every key opens; a key not held is named, the secret never', () => {
    const old = createSecretBox([k1]).seal('the secret', place);
    const rotated = createSecretBox([k2, k1]);
    expect(rotated.open(old, place)).toBe('the secret');
    expect(rotated.seal('the secret', place)).toMatch(/^sealed:v1:k2:/);
    const refusal = (() => {
      try {
        createSecretBox([k2]).open(old, place);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(refusal).toBe(`the value at ${place} is sealed with key "k1", which SECRETS_ENCRYPTION_KEYS does not hold`);
  });

  it('SECRETS_ENCRYPTION_KEYS is read like PAYLOAD_ENCRYPTION_KEYS, its errors naming its own command', () => {
    const keys = formatEncryptionKeys([k2, k1]);
    expect(loadConfig({ SECRETS_ENCRYPTION_KEYS: keys }).secrets.keys?.map((key) => key.id)).toEqual(['k2', 'k1']);
    expect(loadConfig({}).secrets.keys).toBeUndefined();
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' })).toThrow('SECRETS_ENCRYPTION_KEYS: key "k1" is 5 bytes; it must be 32, in base64 (gatehouse secrets key makes one)');
    expect(() => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' })).toThrow('(gatehouse temporal payload-key makes one)');
    const pasted = k1.key.toString('base64');
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: pasted })).toThrow('SECRETS_ENCRYPTION_KEYS: entry 1 is not id:key');
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: pasted })).not.toThrow(pasted);
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEYS: ',' })).toThrow('SECRETS_ENCRYPTION_KEYS holds no key');
  });
});

let h: Harness;
let receiver: Receiver;
let callback: Callback;
let browser: Browser;
let base: string;
const slackSecret = 'slack-signing-secret-0123456789abcdef';
let sequence = 0;

beforeAll(async () => {
  receiver = await startReceiver();
  callback = await startCallback();
  // A database of the harness's own (webhooks on): the sealing routine reads every organization's rows.
  h = await startHarness({ webhooks: {}, servedAtLocalhost: true });
  base = await h.listen();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await callback?.close();
  await receiver?.close();
});

interface Estate {
  org: TestOrganization;
  owner: TestPerson;
  session: ConsoleSession;
}

async function estate(): Promise<Estate> {
  const org = await h.createOrganization();
  const owner = await addPerson(h.db, org.organization, 'owner');
  return { org, owner, session: await signIn(h.app, org.organization, owner) };
}

/**
 * A press of a held write's Approve button as Slack sends it, signed with `secret`, by a Slack user not linked yet
 * (whom a verified press offers a link); `value` is the button's (the review and a payload digest).
 */
function press(orgId: string, value: string, secret: string, app = h.app) {
  const timestamp = Math.floor(Date.now() / 1000);
  const n = sequence++;
  const payload = {
    type: 'block_actions',
    user: { id: `U0PRESSER${n}`, username: 'presser', name: 'presser', team_id: 'T0SECRETS' },
    api_app_id: 'A0GATEHOUSE',
    container: { type: 'message', message_ts: '1732150000.000100', channel_id: 'C0REVIEWS', is_ephemeral: false },
    trigger_id: `${n}.1732150000.abcdef`,
    team: { id: 'T0SECRETS', domain: 'gatehouse-secrets' },
    channel: { id: 'C0REVIEWS', name: 'reviews' },
    response_url: `${receiver.url}/respond/${n}`,
    actions: [{ action_id: 'gatehouse.approve', block_id: 'gatehouse.review', text: { type: 'plain_text', text: 'Approve' }, value, type: 'button', action_ts: `${timestamp}.${n}` }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return app.inject({
    method: 'POST',
    url: `/slack/interactions/${orgId}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
    payload: body,
  });
}

/** A write held for review; its Slack message (at `slackPath`) and its signed review.created delivery (at `hookPath`). */
async function hold(org: TestOrganization, slackPath: string, hookPath: string, webhookSecret: string) {
  const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: `review the stored secrets ${sequence++}` } });
  expect(held.statusCode, held.body).toBe(202);
  const reviewId = json(held).review.id as string;
  const [message] = await receiver.waitFor(1, (request) => request.path === slackPath && request.body.includes(reviewId));
  const [delivery] = await receiver.waitFor(1, (request) => request.path === hookPath && request.body.includes(reviewId));
  const event = new Webhook(webhookSecret).verify(delivery!.body, delivery!.headers as Record<string, string>) as { type: string; data: { review_id: string } };
  expect(event).toMatchObject({ type: 'review.created', data: { review_id: reviewId } });
  const approve = (JSON.parse(message!.body) as { blocks: { type: string; elements?: { action_id?: string; value?: string }[] }[] }).blocks
    .find((block) => block.type === 'actions')!
    .elements!.find((element) => element.action_id === 'gatehouse.approve')!.value!;
  return { reviewId, approve };
}

/** The rows of every sealed column, as they are stored. */
async function storedRows(): Promise<string> {
  const rows = [];
  for (const { table, column } of sealedColumns) rows.push(...(await h.db.query(`SELECT ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL`)).rows);
  return JSON.stringify(rows);
}

/** The key id the OAuth server of an app with this box signs with (its JWKS). */
async function signingKeyIdOf(secrets = h.secrets): Promise<string> {
  const app = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl: base, logLevel: 'silent', secrets });
  try {
    const answer = await app.inject({ method: 'GET', url: '/oauth/jwks' });
    expect(answer.statusCode, answer.body).toBe(200);
    return (json(answer) as { keys: { kid: string }[] }).keys[0]!.kid;
  } finally {
    await app.close();
  }
}

let first: Estate;
let webhookSecret: string;

describe('secrets set through the console and the OAuth server', () => {
  it('are none of them in the database in plain text, and each still works', async () => {
    first = await estate();
    const { org, session } = first;
    const orgId = org.organization.id;
    const slackUrl = `${receiver.url}/slack/${orgId}`;
    const created = await session.request({
      method: 'POST',
      url: '/console/api/v1/webhook-endpoints',
      payload: { url: `${receiver.url}/hook/${orgId}`, event_types: ['review.created'] },
    });
    expect(created.statusCode, created.body).toBe(200);
    webhookSecret = json(created).data.secret;
    expect((await session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { signing_secret: slackSecret } })).statusCode).toBe(200);
    const settings = await session.request({ method: 'PATCH', url: '/console/api/v1/notifications/settings', payload: { slack_webhook_url: slackUrl } });
    expect(json(settings).data.slack_webhook_url).toBe(slackUrl);
    expect((await fetch(`${base}/.well-known/oauth-authorization-server`)).status).toBe(200);

    const stored = await storedRows();
    for (const plain of [webhookSecret, webhookSecret.slice('whsec_'.length), slackSecret, slackUrl, receiver.url, '"kty"', '"d":']) expect(stored).not.toContain(plain);
    const { rows } = await h.db.query(
      `SELECT e.secret, a.signing_secret, o.slack_webhook_url FROM organizations o
       JOIN webhook_endpoints e ON e.org_id = o.id JOIN slack_apps a ON a.org_id = o.id WHERE o.id = $1`,
      [orgId],
    );
    expect(Object.values(rows[0])).toEqual([expect.stringMatching(/^sealed:v1:test:/), expect.stringMatching(/^sealed:v1:test:/), expect.stringMatching(/^sealed:v1:test:/)]);
    const oauth = (await h.db.query('SELECT name, value FROM oauth_secrets ORDER BY name')).rows;
    expect(oauth).toEqual([
      { name: 'cookie_keys', value: expect.stringMatching(/^sealed:v1:test:/) },
      { name: 'jwks', value: expect.stringMatching(/^sealed:v1:test:/) },
    ]);

    // The delivery verifies with the secret shown once; the Slack webhook gets the held write's message, and a
    // press signed with the signing secret is taken (by a Slack user not linked yet: offered a link).
    const { approve } = await hold(org, `/slack/${orgId}`, `/hook/${orgId}`, webhookSecret);
    const pressed = await press(orgId, approve, slackSecret);
    expect(pressed.statusCode, pressed.body).toBe(200);
    expect(json(pressed).text).toMatch(/not linked/);
    expect((await press(orgId, approve, 'another-signing-secret-0123')).statusCode).toBe(401);

    // An OAuth connection: the client registers, the owner consents in the browser, the client's token works.
    browser = await launchChromium();
    const provider = new MemoryOAuthClient(callback.url, undefined, 'Sealed Keys Client');
    expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(provider.authorizationUrl!.toString());
    await page.getByLabel('Organization').fill(org.organization.slug);
    await page.getByLabel('Email').fill(first.owner.email);
    await page.getByLabel('Password').fill(first.owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Connect' }).click();
    const code = await callback.next();
    await page.context().close();
    expect(await auth(provider, { serverUrl: `${base}/mcp`, authorizationCode: code })).toBe('AUTHORIZED');
    const listed = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tasks', arguments: {} } }),
    });
    expect(listed.status).toBe(200);
  });
});

describe('secrets an older version stored in plain text', () => {
  let older: Estate;
  const plain = { webhook: `whsec_${randomBytes(24).toString('base64')}`, slack: 'an-older-plain-signing-secret-42', kid: 'older-plain-key' };

  it('keep working, and the start-up routine seals them, after which they still work', async () => {
    older = await estate();
    const orgId = older.org.organization.id;
    // As the version before sealing wrote them.
    await h.db.query(`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret) VALUES ($1, $2, $3, '{review.created}', $4)`, [
      newId('whk'),
      orgId,
      `${receiver.url}/hook/${orgId}`,
      plain.webhook,
    ]);
    await h.db.query('INSERT INTO slack_apps (org_id, signing_secret) VALUES ($1, $2)', [orgId, plain.slack]);
    await h.db.query('UPDATE organizations SET slack_webhook_url = $2 WHERE id = $1', [orgId, `${receiver.url}/slack/${orgId}`]);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await h.db.query('DELETE FROM oauth_secrets');
    await h.db.query('INSERT INTO oauth_secrets (name, value) VALUES ($1, $2), ($3, $4)', [
      'cookie_keys',
      JSON.stringify([randomBytes(32).toString('base64url')]),
      'jwks',
      JSON.stringify({ keys: [{ ...privateKey.export({ format: 'jwk' }), kid: plain.kid, use: 'sig', alg: 'RS256' }] }),
    ]);

    // Read as they are, by this version (an older api may still be writing them during a rolling upgrade).
    const before = await hold(older.org, `/slack/${orgId}`, `/hook/${orgId}`, plain.webhook);
    expect((await press(orgId, before.approve, plain.slack)).statusCode).toBe(200);
    expect(await signingKeyIdOf()).toBe(plain.kid);

    // What every api and worker runs at start (and gatehouse secrets reseal on demand).
    const done = await sealStoredSecrets(h.db, h.secrets);
    expect(done).toMatchObject({ sealingKeyId: 'test', sealed: 5, resealed: 0, unreadable: [], plain: 0 });
    expect(done.byKey).toEqual({ test: 8 });
    const stored = await storedRows();
    for (const value of [plain.webhook, plain.slack, receiver.url, plain.kid]) expect(stored).not.toContain(value);
    // A second run (another process starting) finds nothing to do.
    expect(await sealStoredSecrets(h.db, h.secrets)).toMatchObject({ sealed: 0, resealed: 0 });

    const after = await hold(older.org, `/slack/${orgId}`, `/hook/${orgId}`, plain.webhook);
    expect((await press(orgId, after.approve, plain.slack)).statusCode).toBe(200);
    expect(await signingKeyIdOf()).toBe(plain.kid);
  });

  it("a sealed value moved into another organization's row does not open there", async () => {
    const moved = await estate();
    const orgId = moved.org.organization.id;
    const endpoint = await moved.session.request({
      method: 'POST',
      url: '/console/api/v1/webhook-endpoints',
      payload: { url: `${receiver.url}/moved-hook/${orgId}`, event_types: ['review.created'] },
    });
    const endpointId = json(endpoint).data.endpoint.id as string;
    await moved.session.request({ method: 'PATCH', url: '/console/api/v1/notifications/slack-app', payload: { signing_secret: 'the-moved-organizations-own-secret' } });
    // Someone with write access to the database, but not the key, copies the first organization's sealed secrets.
    await h.db.query('UPDATE slack_apps SET signing_secret = (SELECT signing_secret FROM slack_apps WHERE org_id = $1) WHERE org_id = $2', [first.org.organization.id, orgId]);
    await h.db.query('UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE org_id = $1 LIMIT 1) WHERE id = $2', [first.org.organization.id, endpointId]);

    // A press signed with the copied secret is refused as an unsigned one; a delivery fails, the log saying why.
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: moved.org.readWriteToken, payload: { title: 'review the moved secrets' } });
    expect((await press(orgId, `${json(held).review.id}:${'0'.repeat(64)}`, slackSecret)).statusCode).toBe(401);
    await expect
      .poll(async () => (await h.db.query('SELECT last_error FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId])).rows[0]?.last_error, { timeout: 10_000 })
      .toBe(`the value at webhook_endpoints.secret:${endpointId} does not open with key "test": it was changed, or sealed for another place`);
    expect(receiver.received.filter((request: Received) => request.path.startsWith('/moved-hook/'))).toEqual([]);
    // A run of the routine (with another first key, so that it reads every value) names them, never their values,
    // and leaves them as they are.
    const elsewhere = newEncryptionKey('elsewhere');
    const done = await sealStoredSecrets(h.db, createSecretBox([elsewhere, ...testSecretsKeys]));
    expect(done.unreadable.sort()).toEqual([
      `the value at slack_apps.signing_secret:${orgId} does not open with key "test": it was changed, or sealed for another place`,
      `the value at webhook_endpoints.secret:${endpointId} does not open with key "test": it was changed, or sealed for another place`,
    ]);
    // Gone again, and the rest back under the tests' key, for the rotation below.
    await h.db.query('DELETE FROM slack_apps WHERE org_id = $1', [orgId]);
    await h.db.query('DELETE FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId]);
    await h.db.query('DELETE FROM webhook_endpoints WHERE id = $1', [endpointId]);
    expect(await sealStoredSecrets(h.db, createSecretBox([...testSecretsKeys, elsewhere]))).toMatchObject({ unreadable: [], byKey: { test: 8 } });
  });
});

describe('rotation', () => {
  it('with a new first key the routine reseals every value; the old key can then be removed', async () => {
    const next = newEncryptionKey('next');
    const rotated = secretBoxOf([next, ...testSecretsKeys]);
    const done = await sealStoredSecrets(h.db, rotated);
    expect(done).toMatchObject({ sealingKeyId: 'next', sealed: 0, unreadable: [], plain: 0 });
    expect(done.resealed).toBe(done.byKey.next);
    expect(done.byKey).toEqual({ next: 8 });
    expect(await storedRows()).not.toContain('sealed:v1:test:');

    // The new key alone opens everything: the Slack press, the OAuth server's keys, a webhook's signature.
    const alone = secretBoxOf([next]);
    const orgId = first.org.organization.id;
    const app = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl: base, logLevel: 'silent', secrets: alone });
    try {
      const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: first.org.readWriteToken, payload: { title: 'review after the rotation' } });
      const value = `${json(held).review.id}:${'0'.repeat(64)}`;
      const pressed = await press(orgId, value, slackSecret, app);
      expect(pressed.statusCode, pressed.body).toBe(200);
      expect(json(pressed).text).toMatch(/not linked/);
      // An api still holding only the old key cannot open it.
      expect((await press(orgId, value, slackSecret)).statusCode).toBe(401);
    } finally {
      await app.close();
    }
    expect(await signingKeyIdOf(alone)).toBe('older-plain-key');

    const endpointId = (await h.db.query('SELECT id FROM webhook_endpoints WHERE org_id = $1', [orgId])).rows[0].id as string;
    const eventId = newId('evt');
    const deliveryId = newId('whd');
    await h.db.query(`INSERT INTO webhook_events (id, org_id, type, data, relayed_at) VALUES ($1, $2, 'review.created', '{}', now())`, [eventId, orgId]);
    await h.db.query(`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts) VALUES ($1, $2, $3, $4, 'pending', 0)`, [deliveryId, orgId, endpointId, eventId]);
    expect(await attemptDelivery(h.db, alone, deliveryId, { policy: { allowLoopback: true, allowPrivate: false }, publicUrl: base })).toBe('delivered');
    const [delivered] = await receiver.waitFor(1, (request) => request.headers['webhook-id'] === eventId);
    expect(() => new Webhook(webhookSecret).verify(delivered!.body, delivered!.headers as Record<string, string>)).not.toThrow();
  });
});
