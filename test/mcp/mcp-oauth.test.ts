import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { unusableMetadataDocument } from '../../api/oauth/client-metadata-documents';
import { oauthRequestLimits } from '../../api/oauth/plugin';
import { allAbilities } from '../../domain/identity/abilities';
import { createApiKey, setApiKeyBudget } from '../../domain/identity/api-keys';
import { askPolicy } from '../../domain/gate/decide';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { findGatedWrite } from '../../domain/resources/index';
import { accessibilityViolations, launchChromium, screenshot, signedInConsole } from '../support/browser';
import { addPerson, signIn, type TestPerson } from '../support/console';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';
import { MemoryOAuthClient, startCallback, startLocalHttps, type Callback, type LocalHttps } from '../support/oauth-client';

// MCP clients that follow the specification's authorization (2025-11-25) connect to a running Gatehouse from its
// URL alone: the SDK's own client, with its OAuth provider, discovers the metadata, identifies itself by a Client
// ID Metadata Document (served over local https) or registers itself, a person signs in and consents in Chromium,
// and the client works as an agent of the organization until the person disconnects it in the console.

let h: Harness;
let acme: TestOrganization;
let owner: TestPerson;
let member: TestPerson;
let browser: Browser;
let base: string;
let https: LocalHttps;
let callback: Callback;
const pageErrors: string[] = [];

beforeAll(async () => {
  https = await startLocalHttps();
  // The metadata document is on loopback over https: loopback and private addresses allowed, the test's
  // authority trusted (as OUTBOUND_CA_FILE does).
  // Held writes re-read their reviews every 15 minutes, as by default: a run that ends within seconds was told.
  h = await startHarness({
    servedAtLocalhost: true,
    outbound: { allowLoopback: true, allowPrivate: true, extraCertificateAuthorities: [https.ca] },
  });
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  owner = await addPerson(h.db, acme.organization, 'owner');
  member = await addPerson(h.db, acme.organization, 'member');
  base = await h.listen();
  callback = await startCallback();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await https?.close();
  await h?.close();
});

async function newPage(width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return page;
}

/** The person opens the authorization URL the client was given, and signs in to the console there. */
async function signInAt(page: Page, url: URL, person: TestPerson): Promise<void> {
  await page.goto(url.toString());
  await page.getByLabel('Organization').fill(acme.organization.slug);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1 }).filter({ hasText: 'Connect' }).waitFor();
}

/** The person signs in at the authorization URL, keeps only `keep` checked and connects: the code the client is brought. */
async function consentInBrowser(url: URL, person: TestPerson, keep: string[]): Promise<string> {
  const page = await newPage();
  await signInAt(page, url, person);
  for (const ability of allAbilities) {
    const box = page.getByRole('checkbox', { name: ability, exact: true });
    if ((await box.isEnabled()) && (await box.isChecked()) !== keep.includes(ability)) await box.setChecked(keep.includes(ability));
  }
  await page.getByRole('button', { name: 'Connect' }).click();
  const code = await callback.next();
  await page.context().close();
  return code;
}

/** An MCP client on the SDK's Streamable HTTP transport, authorized by the provider. */
function mcpClient(provider: MemoryOAuthClient): { client: Client; transport: StreamableHTTPClientTransport } {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
  return { client: new Client({ name: 'oauth-test', version: '1.0.0' }), transport };
}

/** A raw MCP tools/call with a bearer token, to read the HTTP answer itself. */
async function rawToolCall(token: string, name: string, args: Record<string, unknown>) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
  });
}

/** The scopes a Bearer challenge names, sorted. */
function scopeOf(challenge: string): string[] {
  return (/scope="([^"]*)"/.exec(challenge)?.[1] ?? '').split(' ').sort();
}

/** A client that registers itself and is connected by the owner with `keep`: its provider holds its tokens. */
async function connectedClient(name: string, keep: string[]): Promise<MemoryOAuthClient> {
  const provider = new MemoryOAuthClient(callback.url, undefined, name);
  expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
  const code = await consentInBrowser(provider.authorizationUrl!, owner, keep);
  expect(await auth(provider, { serverUrl: `${base}/mcp`, authorizationCode: code })).toBe('AUTHORIZED');
  return provider;
}

/** A form POST to one of the authorization server's endpoints. */
function postForm(path: string, fields: Record<string, string>) {
  return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
}

async function keyOf(label: string): Promise<{ id: string; revoked_at: Date | null }[]> {
  return (await h.db.query(`SELECT id, revoked_at FROM api_keys WHERE org_id = $1 AND label = $2 ORDER BY created_at`, [acme.organization.id, label])).rows;
}

async function auditTypes(): Promise<string[]> {
  const { rows } = await h.db.query(`SELECT type FROM audit_events WHERE org_id = $1 AND type LIKE 'oauth.%' ORDER BY created_at, id`, [acme.organization.id]);
  return rows.map((row) => row.type);
}

describe('discovery', () => {
  it('names the metadata in the 401 challenge of /mcp and /api, and serves RFC 9728 and RFC 8414 documents', async () => {
    const mcp = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(mcp.status).toBe(401);
    const challenge = mcp.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain(`scope="${allAbilities.join(' ')}"`);
    expect(challenge).not.toContain('error=');

    const rest = await fetch(`${base}/api/v1/tasks`, { headers: { authorization: 'Bearer nonsense' } });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/api"`);
    expect(rest.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const resource = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: allAbilities });
    expect(((await (await fetch(`${base}/.well-known/oauth-protected-resource/api`)).json()) as { resource: string }).resource).toBe(`${base}/api`);

    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(server).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
    expect(server.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    // Nothing the resources do not check: no sender-constrained tokens.
    expect(server.dpop_signing_alg_values_supported).toBeUndefined();
  });

  it('names only PUBLIC_URL, whatever Host, X-Forwarded-Host or X-Forwarded-Proto a client writes (TLS ended by a trusted proxy)', async () => {
    // The service behind a proxy that ends TLS, which the api trusts: a client's own forwarded headers come through it.
    const proxied = await buildApp({
      db: h.db,
      gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }),
      publicUrl: 'https://gatehouse.example',
      logLevel: 'silent',
      trustProxy: ['127.0.0.1'],
      secrets: h.secrets,
    });
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example;proto=http' };
    const urlsIn = (document: Record<string, unknown>) =>
      Object.values(document)
        .flat()
        .filter((value): value is string => typeof value === 'string' && /^[a-z]+:\/\//.test(value));
    try {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource/api']) {
        const answer = await proxied.inject({ method: 'GET', url: path, headers: forged });
        expect(answer.statusCode, path).toBe(200);
        const urls = urlsIn(answer.json());
        expect(urls.length, path).toBeGreaterThan(1);
        for (const url of urls) expect(url, path).toMatch(/^https:\/\/gatehouse\.example(\/|$)/);
      }
      // The authorization's redirect and its cookies: at PUBLIC_URL, and Secure (the library sees https).
      const registered = await proxied.inject({
        method: 'POST',
        url: '/oauth/register',
        headers: { ...forged, 'content-type': 'application/json' },
        payload: { client_name: 'Behind a proxy', redirect_uris: [callback.url], token_endpoint_auth_method: 'none', application_type: 'native' },
      });
      expect(registered.statusCode).toBe(201);
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: registered.json().client_id,
        redirect_uri: callback.url,
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
        scope: 'tasks.read',
      });
      const started = await proxied.inject({ method: 'GET', url: `/oauth/authorize?${query}`, headers: forged });
      expect(started.statusCode).toBe(303);
      expect(new URL(String(started.headers.location), 'https://gatehouse.example').origin).toBe('https://gatehouse.example');
      const cookies = [started.headers['set-cookie'] ?? []].flat();
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies) {
        expect(cookie).toMatch(/; secure/i);
        expect(cookie).not.toContain('evil');
      }
    } finally {
      await proxied.close();
    }
  });
});

describe('a client identified by its metadata document', () => {
  let provider: MemoryOAuthClient;
  let client: Client;
  let keyId: string;
  const documentPath = '/assistant/client.json';

  it('is sent to sign in and consent, and connects with the abilities the person chose', async () => {
    const clientId = `${https.origin}${documentPath}`;
    provider = new MemoryOAuthClient(callback.url, clientId, 'Chat Assistant');
    // The client's metadata document, at its id: what it would send to register, and the id itself.
    https.serve(documentPath, { ...provider.clientMetadata, client_id: clientId, client_uri: https.origin });
    const first = mcpClient(provider);
    await expect(first.client.connect(first.transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${base}/mcp`);

    const page = await newPage();
    await signInAt(page, authorizationUrl, owner);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Chat Assistant');
    // What proves who asks: the host of its metadata document.
    await page.getByText(new URL(https.origin).host).first().waitFor();
    expect(https.fetched(documentPath)).toBeGreaterThan(0);
    // The page cannot be framed.
    const framing = (await page.request.get(page.url())).headers()['content-security-policy'];
    expect(framing).toContain("frame-ancestors 'none'");
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'oauth-consent');

    // Only what the person keeps checked is granted.
    for (const ability of allAbilities) {
      const box = page.getByRole('checkbox', { name: ability, exact: true });
      const keep = ['tasks.read', 'tasks.write', 'reviews.read'].includes(ability);
      if ((await box.isChecked()) !== keep && (await box.isEnabled())) await box.setChecked(keep);
    }
    await page.getByRole('button', { name: 'Connect' }).click();
    const code = await callback.next();
    await first.transport.finishAuth(code);
    await page.context().close();

    const connected = mcpClient(provider);
    client = connected.client;
    await client.connect(connected.transport);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('create_task');
    expect(tools).toContain('list_tasks');
    expect(tools).not.toContain('search_customers');
    expect(tools).not.toContain('remember');

    const { rows } = await h.db.query(`SELECT id, label, access, abilities, oauth_client_id, created_by FROM api_keys WHERE org_id = $1 AND oauth_client_id IS NOT NULL`, [
      acme.organization.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ label: 'Chat Assistant', access: 'read_write', oauth_client_id: clientId, created_by: owner.user.id });
    expect([...rows[0].abilities].sort()).toEqual(['reviews.read', 'tasks.read', 'tasks.write']);
    keyId = rows[0].id;
    expect(await auditTypes()).toEqual(['oauth.connected']);
  });

  it('is told an authorization error at the redirect URI its document names (the standard redirect)', async () => {
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.set('resource', 'https://elsewhere.example/mcp');
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(callback.url);
    expect(location.searchParams.get('error')).toBe('invalid_target');
  });

  it('makes a gated write as the connection: held, then approved by a reviewer', async () => {
    const held = await client.callTool({ name: 'create_task', arguments: { title: 'review the follow-up from the chat' } });
    expect(held.structuredContent).toMatchObject({ status: 'pending_review' });
    const review = (held.structuredContent as { review: { id: string } }).review;
    const { rows } = await h.db.query(`SELECT d.api_key_id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.id = $1`, [review.id]);
    expect(rows[0].api_key_id).toBe(keyId);
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${review.id}/approve`, token: acme.reviewerToken });
    expect(approved.statusCode).toBe(200);
    const done = await client.callTool({ name: 'get_review_status', arguments: { review_id: review.id } });
    expect(done.structuredContent).toMatchObject({ status: 'approved', applied: true, result: { title: 'review the follow-up from the chat' } });
    // The Agent Command Center counts it as the agent it is.
    const console = await signIn(h.app, acme.organization, owner);
    const agents = (await console.request({ method: 'GET', url: '/console/api/v1/agents' })).json().data as { api_key_id: string; label: string; held_today: number; oauth_client_id: string | null }[];
    expect(agents.find((agent) => agent.api_key_id === keyId)).toMatchObject({ label: 'Chat Assistant', held_today: 1, oauth_client_id: `${https.origin}/assistant/client.json` });
  });

  it('is told insufficient_scope for a tool outside its grant, with the scopes it needs', async () => {
    const token = provider.tokens()!.access_token;
    const answer = await rawToolCall(token, 'search_customers', {});
    expect(answer.status).toBe(403);
    const challenge = answer.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="insufficient_scope"');
    // Every scope the call needs, and those the token holds (a client asking for exactly these keeps them).
    expect(scopeOf(challenge)).toEqual(['tasks.read', 'tasks.write', 'reviews.read', 'customers.read'].sort());
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const body = await answer.json();
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      error: { data: { code: 'insufficient_scope', scopes: ['customers.read'], authorization: { reason: 'insufficient_authorization' } } },
    });
    // The SDK's client, told so, tries to step up; with nothing more granted it gives up and says why.
    await expect(client.callTool({ name: 'search_customers', arguments: {} })).rejects.toThrow(/403/);
  });

  it('refreshes its token (rotated), is recorded, and keeps working, long after the sign-in that connected it', async () => {
    const before = provider.tokens()!;
    expect(before.refresh_token).toBeTruthy();
    // The browser's sign-in at the authorization server is long gone (it lasts half an hour); the connection is not.
    await h.db.query(`DELETE FROM oauth_records WHERE kind = 'Session'`);
    expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('AUTHORIZED');
    const after = provider.tokens()!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    const again = mcpClient(provider);
    await again.client.connect(again.transport);
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
    client = again.client;
    expect(await auditTypes()).toContain('oauth.refreshed');
  });

  it('a token for the MCP server is refused by the REST API', async () => {
    const token = provider.tokens()!.access_token;
    const answer = await fetch(`${base}/api/v1/tasks`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(401);
  });

  it('shows in Settings → Advanced → API keys, and is refused at once after the person disconnects it, its held write withdrawn', async () => {
    const held = await client.callTool({ name: 'create_task', arguments: { title: 'review what the disconnection withdraws' } });
    expect(held.structuredContent).toMatchObject({ status: 'pending_review' });
    const heldReview = (held.structuredContent as { review: { id: string } }).review.id;
    const page = await newPage();
    await page.goto(`${base}/settings/advanced/api-keys`);
    await page.getByLabel('Organization').fill(acme.organization.slug);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const apps = page.getByRole('region', { name: /Connected apps/ });
    await apps.getByText('Chat Assistant').first().waitFor();
    await apps.getByText(owner.email).first().waitFor();
    await screenshot(page, 'oauth-connected-apps');
    await apps.getByRole('button', { name: 'Disconnect Chat Assistant' }).click();
    await page.getByRole('button', { name: 'Disconnect "Chat Assistant" now' }).click();
    await apps.getByText(/revoked/i).first().waitFor();
    await page.context().close();

    const token = provider.tokens()!.access_token;
    const refused = await rawToolCall(token, 'list_tasks', {});
    expect(refused.status).toBe(401);
    // Its refresh token is gone too: the SDK's client is sent to authorize again.
    await expect(client.listTools()).rejects.toThrow();
    expect(await auditTypes()).toContain('oauth.disconnected');
    // Its write held for review was withdrawn by the person who disconnected it; its workflow ends without it.
    const review = (await h.request({ method: 'GET', url: `/api/v1/reviews/${heldReview}`, token: acme.reviewerToken })).json().data;
    expect(review).toMatchObject({ status: 'withdrawn', withdrawn: { reason: 'connection_ended', by: { type: 'user', id: owner.user.id } } });
    expect((await h.temporal.workflow.getHandle(review.workflow_id).result()).resolution).toEqual({ status: 'withdrawn' });
  });
});

describe('a client that registers itself', () => {
  it('is refused consent by a member, who is told who can; an owner connects it', async () => {
    const provider = new MemoryOAuthClient(callback.url, undefined, 'Registered Helper');
    const first = mcpClient(provider);
    await expect(first.client.connect(first.transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const registered = provider.clientInformation();
    expect(registered?.client_id).toBeTruthy();
    expect(registered?.client_id).not.toMatch(/^https:/);

    const asMember = await newPage(390);
    await signInAt(asMember, provider.authorizationUrl!, member);
    await asMember.getByRole('heading', { name: 'Only owners and admins can connect apps' }).waitFor();
    await asMember.getByText(owner.email).first().waitFor();
    expect(await asMember.getByRole('button', { name: 'Connect' }).count()).toBe(0);
    expect(await accessibilityViolations(asMember)).toEqual([]);
    // Nor can the member consent by calling the page's endpoint.
    const uid = new URL(asMember.url()).pathname.split('/').pop();
    const refused = await asMember.evaluate(async (path) => {
      const details = (await (await fetch(`${path}/details`)).json()) as { data: { csrf_token: string } };
      const answer = await fetch(`${path}/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': details.data.csrf_token },
        body: JSON.stringify({ access: 'read', abilities: ['tasks.read'], lasts_days: 30 }),
      });
      return { status: answer.status, body: await answer.json() };
    }, `/oauth/interaction/${uid}`);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'insufficient_role' } } });
    // Cancel tells the client it was refused.
    await asMember.getByRole('button', { name: 'Cancel' }).click();
    await expect(callback.next()).rejects.toThrow(/access_denied/);
    await asMember.context().close();

    const asOwner = await newPage();
    await signInAt(asOwner, provider.authorizationUrl!, owner);
    await asOwner.getByText('registered itself').first().waitFor();
    await asOwner.getByRole('radio', { name: 'Read only' }).check();
    await asOwner.getByRole('button', { name: 'Connect' }).click();
    await first.transport.finishAuth(await callback.next());
    await asOwner.context().close();

    const connected = mcpClient(provider);
    await connected.client.connect(connected.transport);
    const tools = (await connected.client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('list_tasks');
    expect(tools).not.toContain('create_task');
    // A read-only grant asked for a write: the scope it needs.
    const answer = await rawToolCall(provider.tokens()!.access_token, 'create_task', { title: 'x' });
    expect(answer.status).toBe(403);
    expect(scopeOf(answer.headers.get('www-authenticate')!)).toEqual(expect.arrayContaining(['tasks.read', 'tasks.write']));
    await connected.client.close();

    // A refresh token used twice (stolen, replayed) ends the grant: the connection is disconnected, recorded.
    const stale = provider.tokens()!.refresh_token!;
    expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('AUTHORIZED');
    const replay = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: stale, client_id: registered!.client_id }),
    });
    expect(replay.status).toBe(400);
    await expect.poll(async () => (await rawToolCall(provider.tokens()!.access_token, 'list_tasks', {})).status).toBe(401);
  });
});

describe('the REST API as a protected resource', () => {
  it('takes a token issued for it, and challenges a call outside its scopes', async () => {
    const provider = new MemoryOAuthClient(callback.url, undefined, 'Script Runner');
    expect(await auth(provider, { serverUrl: `${base}/api` })).toBe('REDIRECT');
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${base}/api`);
    const code = await consentInBrowser(provider.authorizationUrl!, owner, ['tasks.read']);
    expect(await auth(provider, { serverUrl: `${base}/api`, authorizationCode: code })).toBe('AUTHORIZED');
    const token = provider.tokens()!.access_token;

    const tasks = await fetch(`${base}/api/v1/tasks`, { headers: { authorization: `Bearer ${token}` } });
    expect(tasks.status).toBe(200);
    const customers = await fetch(`${base}/api/v1/customers`, { headers: { authorization: `Bearer ${token}` } });
    expect(customers.status).toBe(403);
    expect(customers.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(scopeOf(customers.headers.get('www-authenticate')!)).toEqual(['customers.read', 'tasks.read']);
    expect(((await customers.json()) as { error: unknown }).error).toMatchObject({ code: 'insufficient_scope', details: { scopes: ['customers.read'] } });
    // …and is refused by the MCP server.
    expect((await rawToolCall(token, 'list_tasks', {})).status).toBe(401);

    // Its own daily budget, set as for any key, counts its calls, whatever token it holds.
    const { rows } = await h.db.query(`SELECT id FROM api_keys WHERE org_id = $1 AND label = 'Script Runner'`, [acme.organization.id]);
    await setApiKeyBudget(h.db, acme.organization.id, rows[0].id, { dailyRequestBudget: 5 }, []);
    const statuses: number[] = [];
    for (let call = 0; call < 6; call++) statuses.push((await fetch(`${base}/api/v1/tasks`, { headers: { authorization: `Bearer ${token}` } })).status);
    expect(statuses).toContain(429);
    const refused = await fetch(`${base}/api/v1/tasks`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await refused.json()) as { error: { details: { limit: string } } }).error.details.limit).toBe('key_daily');
  });

  it('API keys keep their answers: no scope challenge, the missing ability in details.required', async () => {
    const narrow = await acme.keyWith(['tasks.read']);
    const answer = await h.request({ method: 'GET', url: '/api/v1/customers', token: narrow });
    expect(answer.statusCode).toBe(403);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    expect(answer.json().error).toMatchObject({ code: 'insufficient_ability', details: { required: 'customers.read' } });
  });

});

describe('a connected app’s held writes', () => {
  /** The app holds a write over MCP: its review and the workflow that holds it. */
  async function holdAs(provider: MemoryOAuthClient, title: string): Promise<{ id: string; workflow_id: string }> {
    expect((await rawToolCall(provider.tokens()!.access_token, 'create_task', { title })).status).toBe(200);
    const { rows } = await h.db.query(`SELECT r.id, r.workflow_id FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id WHERE r.org_id = $1 AND d.input->>'title' = $2`, [
      acme.organization.id,
      title,
    ]);
    expect(rows).toHaveLength(1);
    return rows[0];
  }

  /** Once the connection has ended: the review withdrawn by the app itself, its workflow ended without the write. */
  async function expectWithdrawnByTheApp(review: { id: string; workflow_id: string }, label: string, title: string) {
    const [key] = await keyOf(label);
    const read = async () => (await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}`, token: acme.reviewerToken })).json().data;
    await expect.poll(async () => (await read()).status, { timeout: 10_000 }).toBe('withdrawn');
    expect((await read()).withdrawn).toMatchObject({ reason: 'connection_ended', by: { type: 'api_key', id: key!.id, name: label } });
    const { rows: trail } = await h.db.query(`SELECT actor_type, actor_id, data FROM audit_events WHERE review_id = $1 AND type = 'review.withdrawn'`, [review.id]);
    expect(trail).toEqual([{ actor_type: 'api_key', actor_id: key!.id, data: { reason: 'connection_ended', api_key_id: key!.id } }]);
    const approve = await h.request({ method: 'POST', url: `/api/v1/reviews/${review.id}/approve`, token: acme.reviewerToken });
    expect(approve.statusCode).toBe(409);
    expect(approve.json().error.message).toContain('the connected app that made the write was disconnected');
    // The authorization server runs in the api, which tells the run at once (its next re-read is 15 minutes away).
    const run = h.temporal.workflow.getHandle(review.workflow_id);
    await expect.poll(async () => (await run.describe()).status.name, { timeout: 15_000 }).toBe('COMPLETED');
    expect((await run.result()).resolution).toEqual({ status: 'withdrawn' });
    expect((await h.db.query('SELECT 1 FROM tasks WHERE org_id = $1 AND title = $2', [acme.organization.id, title])).rows).toEqual([]);
  }

  it('the app revoking its own token (RFC 7009) withdraws its held writes, as the app', async () => {
    const provider = await connectedClient('Withdrawing Client', ['tasks.read', 'tasks.write']);
    const review = await holdAs(provider, 'review what the app takes back');
    const revoked = await postForm('/oauth/revoke', { token: provider.tokens()!.access_token, client_id: provider.clientInformation()!.client_id });
    expect(revoked.status).toBe(200);
    await expectWithdrawnByTheApp(review, 'Withdrawing Client', 'review what the app takes back');
  });

  it('a refresh token replayed ends the connection and withdraws its held writes', async () => {
    const provider = await connectedClient('Replaying Client', ['tasks.read', 'tasks.write']);
    const review = await holdAs(provider, 'review what a replayed token ends');
    const refresh = { grant_type: 'refresh_token', refresh_token: provider.tokens()!.refresh_token!, client_id: provider.clientInformation()!.client_id };
    expect((await postForm('/oauth/token', refresh)).status).toBe(200);
    expect((await postForm('/oauth/token', refresh)).status).toBe(400);
    await expectWithdrawnByTheApp(review, 'Replaying Client', 'review what a replayed token ends');
  });
});

describe("an app's own name", () => {
  // The policy of this test: a person's label passes, an app's own name is held.
  const byLabel = `
    @id("people-named") @reason("A person named this key") permit (principal, action, resource) when { principal.label_verified };
    @id("self-named") @decision("review") @reason("This app named itself") permit (principal, action, resource) when { !principal.label_verified };
  `;

  it('is marked unverified wherever it is shown, numbered when it repeats a key, and told to the policy', async () => {
    const made = await createApiKey(h.db, { orgId: acme.organization.id, label: 'Trusted Agent', access: 'read_write' });
    const impostor = new MemoryOAuthClient(callback.url, undefined, 'Trusted Agent');
    expect(await auth(impostor, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');

    // The consent page says whose word the name is, and under which label the app will be listed.
    const page = await newPage(390);
    await signInAt(page, impostor.authorizationUrl!, owner);
    const identity = page.getByRole('region', { name: 'The app' });
    await identity.getByText('unverified app name').waitFor();
    expect(await identity.innerText()).toMatch(/registered itself: anyone may register any name[\s\S]*this app will be listed as “Trusted Agent \(2\)”/);
    expect(await accessibilityViolations(page)).toEqual([]);
    await screenshot(page, 'oauth-consent-unverified-name-phone');
    await page.getByRole('button', { name: 'Connect' }).click();
    expect(await auth(impostor, { serverUrl: `${base}/mcp`, authorizationCode: await callback.next() })).toBe('AUTHORIZED');
    await page.context().close();
    const [connection] = await keyOf('Trusted Agent (2)');
    expect(connection).toBeDefined();
    // Another in another case: numbered past both.
    await connectedClient('trusted agent', ['tasks.read']);
    expect(await keyOf('trusted agent (3)')).toHaveLength(1);
    // And another in full-width letters, which read as the same name: numbered past them all.
    await connectedClient('Ｔｒｕｓｔｅｄ Ａｇｅｎｔ', ['tasks.read']);
    expect(await keyOf('Ｔｒｕｓｔｅｄ Ａｇｅｎｔ (4)')).toHaveLength(1);

    // The policy tells a person's label from an app's own (principal.label_verified).
    await setPolicySet(h.db, acme.organization.id, byLabel, 'test');
    let reviewId: string;
    try {
      const byKey = await h.request({ method: 'POST', url: '/api/v1/tasks', token: made.token, payload: { title: 'written by the key' } });
      expect(byKey.statusCode, byKey.body).toBe(201);
      const app = mcpClient(impostor);
      await app.client.connect(app.transport);
      const held = await app.client.callTool({ name: 'create_task', arguments: { title: 'written by the app' } });
      await app.client.close();
      expect(held.structuredContent).toMatchObject({ status: 'pending_review' });
      reviewId = (held.structuredContent as { review: { id: string } }).review.id;
      const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: acme.reviewerToken })).data;
      expect(review.policy.policy_ids).toEqual(['self-named']);
      expect(review.submitted_by).toMatchObject({ api_key_id: connection!.id, api_key_label: 'Trusted Agent (2)', api_key_label_verified: false });
      // A request recorded before requests said whose word the label is (a held write's, asked again on an edit): read from the key.
      const write = findGatedWrite('tasks.create')!;
      const older = { orgId: acme.organization.id, operation: 'tasks.create', interface: 'mcp' as const };
      const apiKey = { id: connection!.id, label: 'Trusted Agent (2)', access: 'read_write' as const, abilities: ['tasks.write'] };
      const asked = await askPolicy(h.db, write, { ...older, apiKey }, write.input.parse({ title: 'asked again' }));
      expect(asked.decided).toMatchObject({ decision: 'review', policyIds: ['self-named'], errors: [] });
    } finally {
      await setPolicySet(h.db, acme.organization.id, testPolicy, 'test');
    }
    // A dry run reads it too: a draft that permits people-named keys alone would deny the app's write, not the key's.
    const asOwner = await signIn(h.app, acme.organization, owner);
    const simulated = await asOwner.request({
      method: 'POST',
      url: '/console/api/v1/policy/simulate',
      payload: { source: '@id("people-named") permit (principal, action, resource) when { principal.label_verified };', since: '1h' },
    });
    expect(simulated.statusCode, simulated.body).toBe(200);
    const changes = simulated.json().data.changes as { api_key_id: string; would_be: string }[];
    expect(changes.filter((change) => change.api_key_id === made.key.id)).toEqual([]);
    expect(changes.filter((change) => change.api_key_id === connection!.id)).toEqual([expect.objectContaining({ would_be: 'deny' })]);

    // The console marks it on the review card, in the Agent Command Center and among the connected apps.
    const console = await signedInConsole(browser, base, { slug: acme.organization.slug, email: owner.email, password: owner.password }, pageErrors);
    await console.goto(`${base}/reviews/${reviewId}`);
    const card = console.getByRole('article', { name: /tasks\.create by “Trusted Agent \(2\)” unverified app name/ });
    await card.waitFor();
    expect(await accessibilityViolations(console)).toEqual([]);
    await screenshot(console, 'review-card-unverified-app');
    await console.goto(`${base}/agents`);
    await console.getByRole('rowheader', { name: /^Trusted Agent \(2\) unverified app name\s*Connected app/ }).waitFor();
    // The key people made, unmarked.
    await console.getByRole('rowheader', { name: /^Trusted Agent\s*Read and write/ }).waitFor();
    expect(await accessibilityViolations(console)).toEqual([]);
    await console.goto(`${base}/settings/advanced/api-keys`);
    const apps = console.getByRole('region', { name: /Connected apps/ });
    await apps.getByRole('rowheader', { name: /^Trusted Agent \(2\) unverified app name/ }).waitFor();
    expect(await accessibilityViolations(console)).toEqual([]);
    await console.context().close();
  });
});

describe('what a client cannot do', () => {
  let provider: MemoryOAuthClient;

  beforeAll(async () => {
    provider = new MemoryOAuthClient(callback.url, undefined, 'Careful Client');
    expect(await auth(provider, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
  });

  it('a redirect URI is matched exactly: another one is refused on the page, never redirected to', async () => {
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.set('redirect_uri', `${callback.url}/elsewhere`);
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    expect(await answer.text()).toContain('redirect_uri');
  });

  it('an authorization error of a client that registered itself is shown on a page, never sent to its redirect URI', async () => {
    const spoilt: Record<string, (url: URL) => void> = {
      'a scope nobody grants': (url) => url.searchParams.set('scope', 'openid'),
      'another resource': (url) => url.searchParams.set('resource', 'https://elsewhere.example/mcp'),
      'no PKCE': (url) => {
        url.searchParams.delete('code_challenge');
        url.searchParams.delete('code_challenge_method');
      },
      'a plain PKCE challenge': (url) => url.searchParams.set('code_challenge_method', 'plain'),
      'no person asked (prompt=none)': (url) => url.searchParams.set('prompt', 'none'),
      'an answer posted back as a form': (url) => {
        url.searchParams.set('response_mode', 'form_post');
        url.searchParams.set('resource', 'https://elsewhere.example/mcp');
      },
    };
    for (const [what, spoil] of Object.entries(spoilt)) {
      const url = new URL(provider.authorizationUrl!);
      spoil(url);
      const answer = await fetch(url, { redirect: 'manual' });
      expect(answer.status, what).toBe(400);
      expect(answer.headers.get('location'), what).toBeNull();
      const page = await answer.text();
      expect(page, what).toContain('This app cannot connect');
      expect(page, what).not.toContain(callback.url);
    }
    // In a browser too: the person sees why, and the app's redirect URI is never opened.
    const browsing = await newPage(390);
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.set('resource', 'https://elsewhere.example/mcp');
    await browsing.goto(url.toString());
    await browsing.getByRole('heading', { name: 'This app cannot connect' }).waitFor();
    expect(browsing.url()).toBe(url.toString());
    expect(await accessibilityViolations(browsing)).toEqual([]);
    await screenshot(browsing, 'oauth-authorization-error-phone');
    await browsing.context().close();
  });

  it('a consent without the page’s CSRF token, or from another site, is refused', async () => {
    const page = await newPage();
    await signInAt(page, provider.authorizationUrl!, owner);
    const uid = new URL(page.url()).pathname.split('/').pop();
    const forged = await page.evaluate(async (path) => {
      const answer = await fetch(`${path}/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ access: 'read', abilities: ['tasks.read'], lasts_days: 30 }),
      });
      return { status: answer.status, body: await answer.json() };
    }, `/oauth/interaction/${uid}`);
    expect(forged).toMatchObject({ status: 403, body: { error: { code: 'csrf_failed' } } });
    const crossSite = await h.app.inject({
      method: 'POST',
      url: `/oauth/interaction/${uid}/consent`,
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
      payload: { access: 'read', abilities: ['tasks.read'], lasts_days: 30 },
    });
    expect(crossSite.statusCode).toBe(403);
    await page.context().close();
  });

  it('a code is single use: used again, it is refused and the connection it made is ended', async () => {
    const code = await consentInBrowser(provider.authorizationUrl!, owner, ['tasks.read']);
    expect(await auth(provider, { serverUrl: `${base}/mcp`, authorizationCode: code })).toBe('AUTHORIZED');
    const token = provider.tokens()!.access_token;
    expect((await rawToolCall(token, 'list_tasks', {})).status).toBe(200);
    const replay = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback.url,
        code_verifier: provider.codeVerifier(),
        client_id: provider.clientInformation()!.client_id,
      }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    await expect.poll(async () => (await rawToolCall(token, 'list_tasks', {})).status).toBe(401);
    const ended = async () =>
      (await h.db.query(`SELECT data FROM audit_events WHERE org_id = $1 AND type = 'oauth.disconnected' AND data->>'client_name' = 'Careful Client'`, [acme.organization.id])).rows;
    await expect.poll(ended).toEqual([{ data: expect.objectContaining({ reason: 'token_replayed' }) }]);
  });

  it('registration takes public clients with redirects a person can trust, and names a person can read', async () => {
    const register = (metadata: Record<string, unknown>) =>
      fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], ...metadata }),
      });
    for (const refused of [
      { client_name: 'Open redirect', redirect_uris: ['http://attacker.example/cb'] },
      { client_name: 'Script', redirect_uris: ['javascript:alert(1)'] },
      { client_name: 'x'.repeat(101), redirect_uris: [callback.url] },
      { client_name: 'Keys elsewhere', redirect_uris: [callback.url], jwks_uri: 'https://attacker.example/jwks' },
      { client_name: 'nul\u0000name', redirect_uris: [callback.url] },
      // Invisible formatting: a right-to-left override, a zero-width space inside a trusted name.
      { client_name: 'Claude \u202egnippohs', redirect_uris: [callback.url] },
      { client_name: 'Cl\u200baude', redirect_uris: [callback.url] },
    ]) {
      const answer = await register(refused);
      expect(answer.status, JSON.stringify(refused)).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toMatch(/^invalid_(client_metadata|redirect_uri)$/);
    }
    for (const redirect of ['https://app.example/callback', 'http://127.0.0.1:8765/cb', 'com.example.app:/oauth']) {
      const answer = await register({ client_name: 'Fine', redirect_uris: [redirect], application_type: redirect.startsWith('https') ? 'web' : 'native' });
      expect(answer.status, redirect).toBe(201);
      expect(await answer.json()).not.toHaveProperty('registration_access_token');
    }
  });

  it('a parameter a client sends with a NUL in it is refused, never a 500', async () => {
    const url = new URL(provider.authorizationUrl!);
    url.searchParams.set('state', 'a\u0000b');
    expect((await fetch(url, { redirect: 'manual' })).status).toBeLessThan(500);
  });

  it('two refreshes racing with one refresh token: one wins, and the connection ends as for any replay', async () => {
    const racer = await connectedClient('Racing Client', ['tasks.read']);
    const { refresh_token: refreshToken, access_token: accessToken } = racer.tokens()!;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => postForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken!, client_id: racer.clientInformation()!.client_id })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(1);
    expect(statuses.filter((status) => status === 400).length).toBeGreaterThanOrEqual(3);
    await expect.poll(async () => (await keyOf('Racing Client'))[0]?.revoked_at).not.toBeNull();
    expect((await rawToolCall(accessToken, 'list_tasks', {})).status).toBe(401);
  });

  it('a consent answers once; connecting the same app again keeps its key and ends the old tokens', async () => {
    const first = await connectedClient('Returning Client', ['tasks.read']);
    const [key] = await keyOf('Returning Client');
    const oldToken = first.tokens()!.access_token;
    // The same person connects it again, answering the consent twice at once (a double click, a replay): one
    // answer counts, the other is refused, and the app keeps its key with the new grant.
    const page = await newPage();
    await signInAt(page, first.authorizationUrl!, owner);
    const uid = new URL(page.url()).pathname.split('/').pop();
    const answers = await page.evaluate(async (path) => {
      const details = (await (await fetch(`${path}/details`)).json()) as { data: { csrf_token: string } };
      const consent = () =>
        fetch(`${path}/consent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': details.data.csrf_token },
          body: JSON.stringify({ access: 'read_write', abilities: ['tasks.read', 'tasks.write'], lasts_days: 30 }),
        }).then(async (answer) => ({ status: answer.status, body: (await answer.json()) as { data?: { redirect_to: string } } }));
      return Promise.all([consent(), consent()]);
    }, `/oauth/interaction/${uid}`);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    await page.goto(answers.find((answer) => answer.status === 200)!.body.data!.redirect_to);
    const code = await callback.next();
    await page.context().close();
    expect(await auth(first, { serverUrl: `${base}/mcp`, authorizationCode: code })).toBe('AUTHORIZED');
    const keys = await keyOf('Returning Client');
    expect(keys).toHaveLength(1);
    expect(keys[0]!.id).toBe(key!.id);
    expect((await rawToolCall(oldToken, 'list_tasks', {})).status).toBe(401);
    expect((await rawToolCall(first.tokens()!.access_token, 'list_tasks', {})).status).toBe(200);
  });

  it('a second person consenting in the same browser leaves the first person’s connection alone', async () => {
    const admin = await addPerson(h.db, acme.organization, 'admin');
    const page = await newPage();
    const ownersApp = new MemoryOAuthClient(callback.url, undefined, 'Owner App');
    expect(await auth(ownersApp, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
    await signInAt(page, ownersApp.authorizationUrl!, owner);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL(/\/callback\?/);
    expect(await auth(ownersApp, { serverUrl: `${base}/mcp`, authorizationCode: await callback.next() })).toBe('AUTHORIZED');
    // In the same browser: the owner signs out of the console, the admin signs in and connects another app.
    const adminsApp = new MemoryOAuthClient(callback.url, undefined, 'Admin App');
    expect(await auth(adminsApp, { serverUrl: `${base}/mcp` })).toBe('REDIRECT');
    await page.goto(adminsApp.authorizationUrl!.toString());
    await page.getByRole('button', { name: /Sign out/ }).click();
    // The sign-in form replaces the signed-in section (which also names the organization) once signing out is done.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Organization').fill(acme.organization.slug);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Connect' }).click();
    expect(await auth(adminsApp, { serverUrl: `${base}/mcp`, authorizationCode: await callback.next() })).toBe('AUTHORIZED');
    await page.context().close();
    expect((await rawToolCall(ownersApp.tokens()!.access_token, 'list_tasks', {})).status).toBe(200);
    expect(await auth(ownersApp, { serverUrl: `${base}/mcp` })).toBe('AUTHORIZED');
    expect((await keyOf('Owner App'))[0]!.revoked_at).toBeNull();
    const { rows } = await h.db.query(`SELECT created_by FROM api_keys WHERE org_id = $1 AND label = 'Admin App'`, [acme.organization.id]);
    expect(rows[0].created_by).toBe(admin.user.id);
  });

  it('revoking its access token (RFC 7009) disconnects the app', async () => {
    const leaving = await connectedClient('Leaving Client', ['tasks.read']);
    const token = leaving.tokens()!.access_token;
    const revoked = await postForm('/oauth/revoke', { token, client_id: leaving.clientInformation()!.client_id });
    expect(revoked.status).toBe(200);
    expect((await rawToolCall(token, 'list_tasks', {})).status).toBe(401);
    await expect.poll(async () => (await keyOf('Leaving Client'))[0]?.revoked_at).not.toBeNull();
  });

  it('a metadata document on an address the rules refuse is never fetched', async () => {
    // The same service with the default rules (public addresses only): the document on loopback is refused.
    const strict = await buildApp({
      db: h.db,
      gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }),
      publicUrl: base,
      logLevel: 'silent',
      outbound: { allowLoopback: true, allowPrivate: true },
      secrets: h.secrets,
    });
    try {
      const clientId = `${https.origin}/strict/client.json`;
      https.serve('/strict/client.json', { client_id: clientId, client_name: 'Loopback Client', redirect_uris: [callback.url], token_endpoint_auth_method: 'none' });
      const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback.url, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'tasks.read' });
      const answer = await strict.inject({ method: 'GET', url: `/oauth/authorize?${query}` });
      expect(answer.statusCode).toBe(400);
      expect(answer.body).toContain(unusableMetadataDocument);
      expect(https.fetched('/strict/client.json')).toBe(0);
    } finally {
      await strict.close();
    }
  });

  it('a metadata document on a private address is refused though webhooks may go there, with the one error every unusable document gets', async () => {
    // This service's webhooks may reach private addresses (the harness's outbound rules); its clients' documents may not.
    const nothingListens = await new Promise<number>((resolve) => {
      const server = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const documentOf = (path: string, changes: Record<string, unknown> = {}) => ({
      client_id: `${https.origin}${path}`,
      client_name: 'Document Client',
      redirect_uris: [callback.url],
      token_endpoint_auth_method: 'none',
      ...changes,
    });
    https.serveText('/unusable/not-json.json', '<html>an internal page</html>');
    https.serve('/unusable/big.json', documentOf('/unusable/big.json', { logo_uri: `https://app.example/${'x'.repeat(80 * 1024)}` }));
    https.serve('/unusable/bigger-than-5k.json', documentOf('/unusable/bigger-than-5k.json', { logo_uri: `https://app.example/${'x'.repeat(10 * 1024)}` }));
    https.serve('/unusable/other-id.json', documentOf('/unusable/other-id.json', { client_id: `${https.origin}/somebody-else.json` }));
    https.serve('/unusable/open-redirect.json', documentOf('/unusable/open-redirect.json', { redirect_uris: ['http://attacker.example/cb'] }));
    https.serve('/unusable/array.json', [documentOf('/unusable/array.json')]);
    const unusable = {
      'a private address': 'https://10.0.0.1/client.json',
      'a private IPv6 address': 'https://[fd00::1]/client.json',
      'no answer': `https://localhost:${nothingListens}/client.json`,
      'not found': `${https.origin}/unusable/missing.json`,
      'not JSON': `${https.origin}/unusable/not-json.json`,
      'too big': `${https.origin}/unusable/big.json`,
      'over 5 KiB': `${https.origin}/unusable/bigger-than-5k.json`,
      'another client_id': `${https.origin}/unusable/other-id.json`,
      'refused metadata': `${https.origin}/unusable/open-redirect.json`,
      'not an object': `${https.origin}/unusable/array.json`,
      'a fragment': `${https.origin}/unusable/missing.json#x`,
    };
    const pages = new Set<string>();
    for (const [what, clientId] of Object.entries(unusable)) {
      const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback.url, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'tasks.read' });
      const answer = await fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
      expect(answer.status, what).toBe(400);
      expect(answer.headers.get('location'), what).toBeNull();
      const page = await answer.text();
      expect(page, what).toContain(unusableMetadataDocument);
      pages.add(page);
      // The token endpoint answers the same, in JSON.
      const token = await postForm('/oauth/token', { grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: callback.url, code_verifier: 'x'.repeat(43), client_id: clientId });
      expect(token.status, what).toBeGreaterThanOrEqual(400);
      expect(await token.json(), what).toEqual({ error: 'invalid_client', error_description: unusableMetadataDocument });
    }
    expect(pages.size).toBe(1);
  });

  it('one address registers at most 30 clients a minute (the last test: the limit holds for the rest of the minute)', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < oauthRequestLimits.registrationsPerMinute + 1; attempt++) {
      const answer = await fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Flood', redirect_uris: [callback.url], token_endpoint_auth_method: 'none' }),
      });
      statuses.push(answer.status);
      if (answer.status === 429) expect(((await answer.json()) as { error: string }).error).toBe('too_many_requests');
    }
    expect(statuses.at(-1)).toBe(429);
  });

  it('no page error in the browser', () => {
    expect(pageErrors).toEqual([]);
  });
});
