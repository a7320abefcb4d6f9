import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { NativeConnection } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, parsePayloadKeys } from '../../runtime/payload-codec';
import { searchAttributeNames } from '../../runtime/search-attributes';
import { freePort, startTemporalDevServer } from '../../runtime/temporal-dev-server';
import { createApiKey } from '../../domain/identity/api-keys';
import { cleanEnv, runCli, startCli } from '../support/cli';
import { json, startHarness, type Harness } from '../support/harness';
import { testSecrets, testSecretsEnv } from '../support/secrets';
import { loadConfig } from '../../runtime/config';

let h: Harness;
const env = () => cleanEnv({ ...testSecretsEnv, DATABASE_URL: inject('databaseUrl') });
const slug = `cli-${Date.now().toString(36)}`;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));

beforeAll(async () => {
  // Held writes re-read their reviews every half second: the CLI has no Temporal client to tell them with.
  h = await startHarness({ reviewRecheckMs: 500 });
});
afterAll(() => h?.close());

// Each test runs several CLI processes (a few seconds each on a loaded machine): more time than the default minute.
describe('gatehouse CLI', { timeout: 180_000 }, () => {
  it('org create / update / show', async () => {
    const created = await runCli(['org', 'create', '--slug', slug, '--name', 'CLI Test Co', '--plan', 'pro', '--timezone', 'Europe/Berlin', '--json'], env());
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ slug, name: 'CLI Test Co', plan: 'pro', timezone: 'Europe/Berlin', apiAccess: true });

    const again = await runCli(['org', 'create', '--slug', slug, '--name', 'Twice', '--json'], env());
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('conflict');

    const badZone = await runCli(['org', 'create', '--slug', `${slug}-tz`, '--name', 'x', '--timezone', 'Mars/Olympus', '--json'], env());
    expect(badZone.code).toBe(1);
    expect(badZone.json.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('Mars/Olympus') });

    const updated = await runCli(['org', 'update', '--org', slug, '--plan', 'business', '--json'], env());
    expect(updated.json).toMatchObject({ slug, plan: 'business', timezone: 'Europe/Berlin', approveLinks: 'signed_in' });
    const linksAlone = await runCli(['org', 'update', '--org', slug, '--approve-links', 'anyone_with_link'], env());
    expect(linksAlone.code, linksAlone.stderr).toBe(0);
    expect(linksAlone.stdout).toMatch(/approve links +anyone with the link/);
    const badLinks = await runCli(['org', 'update', '--org', slug, '--approve-links', 'passkey'], env());
    expect(badLinks.code).not.toBe(0);
    expect(badLinks.stderr).toContain('anyone_with_link or signed_in');

    const shown = await runCli(['org', 'show', '--org', slug], env());
    expect(shown.stdout).toContain('business');
    const all = await runCli(['org', 'show', '--json'], env());
    expect(all.json.map((o: { slug: string }) => o.slug)).toContain(slug);
  });

  it('key create prints a working token once; list never shows it; revoke stops it at once', async () => {
    const created = await runCli(['key', 'create', '--org', slug, '--label', 'Support agent', '--access', 'read_write', '--json'], env());
    expect(created.code).toBe(0);
    const token = created.json.token as string;
    expect(token).toMatch(/^gate_k_key_/);
    expect(created.json.abilities).toContain('tasks.write');
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token })).statusCode).toBe(200);

    const human = await runCli(['key', 'create', '--org', slug, '--label', 'Reader', '--access', 'read', '--abilities', 'tasks.read,reviews.read'], env());
    expect(human.stdout).toMatch(/shown once/);
    expect(human.stdout).toMatch(/gate_k_key_/);

    const listed = await runCli(['key', 'list', '--org', slug, '--json'], env());
    expect(listed.json.map((k: { label: string }) => k.label)).toEqual(['Support agent', 'Reader']);
    expect(listed.json[0].lastUsedAt).not.toBeNull();
    expect(listed.json[1].lastUsedAt).toBeNull();
    expect(listed.stdout).not.toContain(token.slice(-20));
    expect(listed.stdout).not.toMatch(/digest/i);

    const revoked = await runCli(['key', 'revoke', '--org', slug, '--id', created.json.id, '--json'], env());
    expect(revoked.json.revokedAt).not.toBeNull();
    expect((await h.request({ method: 'GET', url: '/api/v1/me', token })).statusCode).toBe(401);
  });

  it('key revoke withdraws the key’s writes held for review; their workflows end at their next re-read, applying nothing', async () => {
    const org = await h.createOrganization();
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'Agent revoked from the CLI', access: 'read_write' });
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title: 'review what the CLI withdraws' } });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id as string;

    const revoked = await runCli(['key', 'revoke', '--org', org.organization.slug, '--id', key.key.id, '--json'], env());
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.json).toMatchObject({ id: key.key.id, withdrawnReviews: [reviewId] });
    expect(revoked.json.revokedAt).not.toBeNull();
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: org.reviewerToken })).data;
    expect(review).toMatchObject({ status: 'withdrawn', withdrawn: { reason: 'key_revoked', by: { type: 'system', id: 'cli', name: null } } });
    const approve = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken });
    expect(approve.statusCode).toBe(409);
    expect(json(approve).error.details.status).toBe('withdrawn');

    const outcome = await h.temporal.workflow.getHandle(held.headers['x-gatehouse-workflow-id'] as string).result();
    expect(outcome.resolution).toEqual({ status: 'withdrawn' });
    const { rows } = await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review what the CLI withdraws'`, [org.organization.id]);
    expect(rows).toEqual([]);

    const again = await runCli(['key', 'revoke', '--org', org.organization.slug, '--id', key.key.id], env());
    expect(again.stdout).toContain(`Revoked key "Agent revoked from the CLI" (${key.key.id})`);
    expect(again.stdout).not.toContain('withdrew');
  });

  it('refuses a read-only key with write abilities, and unknown abilities', async () => {
    const mixed = await runCli(['key', 'create', '--org', slug, '--label', 'x', '--access', 'read', '--abilities', 'tasks.write', '--json'], env());
    expect(mixed.code).toBe(1);
    expect(mixed.json.error.message).toContain('read-only key cannot carry write abilities');
    const unknown = await runCli(['key', 'create', '--org', slug, '--label', 'x', '--access', 'read_write', '--abilities', 'rockets.launch', '--json'], env());
    expect(unknown.json.error.message).toContain('rockets.launch');
  });

  it('user create prints a one-time link to set a password; user password-link resets it; user update changes the role', async () => {
    const created = await runCli(['user', 'create', '--org', slug, '--email', 'grace@example.com', '--role', 'admin'], env());
    expect(created.code).toBe(0);
    const link = /(http:\/\/\S+\/set-password#gate_l_\S+)/.exec(created.stdout)![1]!;
    const token = link.split('#')[1];
    const set = await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'grace was here first' } });
    expect(set.statusCode).toBe(200);
    expect((await h.app.inject({ method: 'POST', url: '/console/api/password', payload: { token, password: 'grace was here twice' } })).statusCode).toBe(410);

    const reset = await runCli(['user', 'password-link', '--org', slug, '--email', 'grace@example.com', '--json'], env());
    expect(reset.json.set_password_url).toMatch(/\/set-password#gate_l_/);
    const signIn = { organization: slug, email: 'grace@example.com', password: 'grace was here first' };
    expect((await h.app.inject({ method: 'POST', url: '/console/api/session', payload: signIn })).statusCode).toBe(401);

    const updated = await runCli(['user', 'update', '--org', slug, '--email', 'grace@example.com', '--role', 'member', '--active', 'off', '--json'], env());
    expect(updated.json).toMatchObject({ role: 'member', active: false });
    const listed = await runCli(['user', 'list', '--org', slug], env());
    expect(listed.stdout).toMatch(/grace@example\.com\s+member\s+deactivated/);
  });

  it('user create and user token give a person a personal token', async () => {
    const created = await runCli(['user', 'create', '--org', slug, '--email', 'Ada@Example.com', '--role', 'reviewer', '--json'], env());
    expect(created.json).toMatchObject({ email: 'ada@example.com', role: 'reviewer' });
    expect(created.json.set_password_url).toMatch(/^http:\/\/localhost:\d+\/set-password#gate_l_pwl_/);
    const issued = await runCli(['user', 'token', '--org', slug, '--email', 'ada@example.com', '--json'], env());
    expect(issued.json.token).toMatch(/^gate_p_pat_/);
    const me = json(await h.request({ method: 'GET', url: '/api/v1/me', token: issued.json.token })).data;
    expect(me.token).toMatchObject({ type: 'personal', user: { email: 'ada@example.com', role: 'reviewer' } });
    const people = await runCli(['user', 'list', '--org', slug, '--json'], env());
    expect(people.json.map((p: { email: string }) => p.email)).toEqual(['ada@example.com', 'grace@example.com']);
  });

  it('policy set refuses a policy that does not parse, with the parser message, and the old policy stays', async () => {
    const before = await runCli(['policy', 'show', '--org', slug, '--json'], env());
    expect(before.json.version).toBe(1);
    expect(before.json.source).toContain('allow-ordinary-writes');

    const bad = join(dir, 'bad.cedar');
    writeFileSync(bad, 'permit (principal, action, resource) when { resource.title == };\n');
    const refused = await runCli(['policy', 'set', '--org', slug, '--file', bad], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not parse: unexpected token `}` at line 1/);
    expect((await runCli(['policy', 'show', '--org', slug, '--json'], env())).json).toEqual(before.json);

    const good = join(dir, 'good.cedar');
    writeFileSync(good, '@id("allow-all") @reason("Everything goes") permit (principal, action, resource);\n');
    const saved = await runCli(['policy', 'set', '--org', slug, '--file', good, '--json'], env());
    expect(saved.json.version).toBe(2);
    const shown = await runCli(['policy', 'show', '--org', slug], env());
    expect(shown.stdout).toContain('allow-all');
  });

  it('webhook create / list / update / deliveries / redeliver / delete', async () => {
    const loopback = { ...env(), WEBHOOK_ALLOW_LOOPBACK: 'true' };
    const refused = await runCli(['webhook', 'create', '--org', slug, '--url', 'https://10.1.2.3/hook', '--events', 'write.applied', '--json'], env());
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('private') });
    // With a server's DATABASE_URL, loopback is the operator's choice, not the default.
    const notLoopback = await runCli(['webhook', 'create', '--org', slug, '--url', 'http://127.0.0.1:9/hook', '--events', 'write.applied', '--json'], env());
    expect(notLoopback.json.error.message).toContain('https');

    // With a server's DATABASE_URL, the secret is sealed with SECRETS_ENCRYPTION_KEYS: without it, nothing is made.
    const keyless = await runCli(['webhook', 'create', '--org', slug, '--url', 'http://127.0.0.1:9/hook', '--events', 'write.applied', '--json'], {
      ...loopback,
      SECRETS_ENCRYPTION_KEYS: '',
    });
    expect(keyless.code).toBe(1);
    expect(keyless.json.error).toMatchObject({ code: 'invalid_config', message: expect.stringContaining('this command needs SECRETS_ENCRYPTION_KEYS') });
    expect((await runCli(['webhook', 'list', '--org', slug, '--json'], env())).json).toEqual([]);

    const created = await runCli(['webhook', 'create', '--org', slug, '--url', 'http://127.0.0.1:9/hook', '--events', 'write.applied,key.created'], loopback);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/shown once/);
    const secret = /whsec_\S+/.exec(created.stdout)![0];
    const [endpoint] = (await runCli(['webhook', 'list', '--org', slug, '--json'], env())).json;
    expect(endpoint).toMatchObject({ url: 'http://127.0.0.1:9/hook', eventTypes: ['write.applied', 'key.created'], enabled: true });
    expect(JSON.stringify(endpoint)).not.toContain('whsec_');
    const { rows: stored } = await h.db.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    expect(stored[0].secret).toMatch(/^sealed:v1:test:/);
    expect(testSecrets.open(stored[0].secret, `webhook_endpoints.secret:${endpoint.id}`)).toBe(secret);

    const off = await runCli(['webhook', 'update', '--org', slug, '--id', endpoint.id, '--disable', '--json'], env());
    expect(off.json).toMatchObject({ enabled: false, disabledReason: 'Switched off by a person' });
    const on = await runCli(['webhook', 'update', '--org', slug, '--id', endpoint.id, '--enable', '--events', 'write.applied', '--json'], env());
    expect(on.json).toMatchObject({ enabled: true, eventTypes: ['write.applied'] });

    const { rows: orgs } = await h.db.query('SELECT id FROM organizations WHERE slug = $1', [slug]);
    const eventId = `evt_${'0'.repeat(26)}`;
    await h.db.query(`INSERT INTO webhook_events (id, org_id, type, data, relayed_at) VALUES ($1, $2, 'write.applied', '{}', now())`, [eventId, orgs[0].id]);
    await h.db.query(
      `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts, last_error, started_at)
       VALUES ('whd_00000000000000000000000000', $1, $2, $3, 'failed', 10, 'HTTP 500', now())`,
      [orgs[0].id, endpoint.id, eventId],
    );
    const log = await runCli(['webhook', 'deliveries', '--org', slug, '--id', endpoint.id], env());
    expect(log.stdout).toMatch(/whd_0+\s+evt_0+\s+write\.applied\s+failed\s+10\s+HTTP 500/);
    const again = await runCli(['webhook', 'redeliver', '--org', slug, '--delivery', 'whd_00000000000000000000000000', '--json'], env());
    expect(again.json).toMatchObject({ status: 'pending', eventId, redeliveryOf: 'whd_00000000000000000000000000' });

    const removed = await runCli(['webhook', 'delete', '--org', slug, '--id', endpoint.id, '--json'], env());
    expect(removed.code).toBe(0);
    expect((await runCli(['webhook', 'list', '--org', slug], env())).stdout).toContain('No webhook endpoints yet.');
  });

  it('org notifications shows and sets the escalation wait and the Slack webhook', async () => {
    const set = await runCli(['org', 'notifications', '--org', slug, '--review-escalation', '30m', '--json'], env());
    expect(set.json).toEqual({ reviewEscalationMs: 1_800_000, slackWebhookUrl: null });
    const bad = await runCli(['org', 'notifications', '--org', slug, '--review-escalation', 'soon', '--json'], env());
    expect(bad.code).toBe(1);
    expect(bad.json.error.message).toContain('soon');
    const privateSlack = await runCli(['org', 'notifications', '--org', slug, '--slack-webhook-url', 'https://192.168.1.10/hook', '--json'], env());
    expect(privateSlack.json.error.code).toBe('validation_failed');
    const shown = await runCli(['org', 'notifications', '--org', slug], env());
    expect(shown.stdout).toContain('Review escalation: after 30m (admins, then owners)');
    const off = await runCli(['org', 'notifications', '--org', slug, '--review-escalation', 'off', '--json'], env());
    expect(off.json.reviewEscalationMs).toBeNull();
  });

  it('secrets key prints a key SECRETS_ENCRYPTION_KEYS takes; secrets reseal seals what is plain and counts the values by key', async () => {
    const made = await runCli(['secrets', 'key', '--id', 'ops-2', '--json'], cleanEnv({}));
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.id).toBe('ops-2');
    expect(loadConfig({ SECRETS_ENCRYPTION_KEYS: made.json.key }).secrets.keys?.map((key) => key.id)).toEqual(['ops-2']);
    expect((await runCli(['secrets', 'key', '--id', 'not an id'], cleanEnv({}))).stderr).toContain('--id takes letters');

    // A Slack webhook as an older version stored it, in plain text: sealed by the command, as at every start.
    const { rows: orgs } = await h.db.query('SELECT id FROM organizations WHERE slug = $1', [slug]);
    await h.db.query('UPDATE organizations SET slack_webhook_url = $2 WHERE id = $1', [orgs[0].id, 'https://hooks.slack.com/services/T0/B0/older']);
    const resealed = await runCli(['secrets', 'reseal', '--json'], env());
    expect(resealed.code, resealed.stderr).toBe(0);
    expect(resealed.json).toMatchObject({ sealing_key: 'test', unreadable: [], plain: 0, removable_keys: [] });
    expect(resealed.json.sealed).toBeGreaterThanOrEqual(1);
    expect(resealed.json.by_key.test).toBeGreaterThanOrEqual(1);
    const { rows } = await h.db.query('SELECT slack_webhook_url FROM organizations WHERE id = $1', [orgs[0].id]);
    expect(testSecrets.open(rows[0].slack_webhook_url, `organizations.slack_webhook_url:${orgs[0].id}`)).toBe('https://hooks.slack.com/services/T0/B0/older');
    expect(rows[0].slack_webhook_url).toMatch(/^sealed:v1:test:/);
    const shown = await runCli(['org', 'notifications', '--org', slug], env());
    expect(shown.stdout).toContain('Slack webhook: https://hooks.slack.com/services/T0/B0/older');
    const human = await runCli(['secrets', 'reseal'], env());
    expect(human.stdout).toMatch(/^Sealed \d+ values? kept in plain text and resealed \d+ values? sealed with an older key, with key "test"\./);
    expect(human.stdout).toMatch(/KEY\s+VALUES\n\s*test\s+\d+\s+seals/);
    await h.db.query('UPDATE organizations SET slack_webhook_url = NULL WHERE id = $1', [orgs[0].id]);
  });

  it('migrate reports an up-to-date schema', async () => {
    const result = await runCli(['migrate', '--json'], env());
    expect(result.code).toBe(0);
    expect(result.json).toEqual({ applied: [] });
  });

  it('every command takes --json, argument errors included', async () => {
    const help = await runCli(['--help'], env());
    expect(help.stdout).toContain('--json');
    const bad = await runCli(['org', 'update', '--org', slug, '--api-access', 'maybe', '--json'], env());
    expect(bad.code).toBe(1);
    expect(bad.json.error).toMatchObject({ code: 'invalid_arguments', message: expect.stringContaining('on or off') });
    const missing = await runCli(['key', 'create', '--json'], env());
    expect(missing.json.error.message).toContain('--org');
  });

  it("temporal setup registers Gatehouse's search attributes where they are missing, once", async () => {
    // A server without them, as an existing cluster would be.
    const bare = await startTemporalDevServer({ cliPath: inject('temporalCliPath'), headless: true, searchAttributes: false });
    try {
      const temporalEnv = cleanEnv({ TEMPORAL_ADDRESS: bare.address });
      const first = await runCli(['temporal', 'setup'], temporalEnv);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toBe(`Added to namespace default: ${searchAttributeNames.join(', ')}\n`);
      const second = await runCli(['temporal', 'setup', '--json'], temporalEnv);
      expect(second.json).toEqual({ namespace: 'default', added: [], present: searchAttributeNames });

      const connection = await NativeConnection.connect({ address: bare.address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        for (const name of searchAttributeNames) expect(customAttributes?.[name], name).toBeDefined();
      } finally {
        await connection.close();
      }

      const nowhere = await runCli(['temporal', 'setup', '--json'], cleanEnv({}));
      expect(nowhere.code).toBe(1);
      expect(nowhere.json.error.message).toContain('TEMPORAL_ADDRESS');
    } finally {
      await bare.stop();
    }
  });

  it('temporal payload-key prints a key the codec takes; temporal codec serves it for the Web UI until stopped', async () => {
    const made = await runCli(['temporal', 'payload-key', '--id', 'ops-1'], cleanEnv({}));
    expect(made.code, made.stderr).toBe(0);
    const keys = made.stdout.trim();
    expect(parsePayloadKeys(keys).map((key) => key.id)).toEqual(['ops-1']);

    const port = await freePort();
    const codec = startCli(['temporal', 'codec', '--json'], cleanEnv({ PAYLOAD_ENCRYPTION_KEYS: keys, CODEC_PORT: String(port), TEMPORAL_UI_URL: 'http://ui.test:8233' }));
    try {
      expect(await codec.ready).toEqual({ codec_url: `http://localhost:${port}`, allowed_origins: ['http://ui.test:8233'] });
      const [sealed] = await new EncryptionCodec(parsePayloadKeys(keys)).encode([defaultPayloadConverter.toPayload('from the worker')]);
      const answer = await fetch(`http://127.0.0.1:${port}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://ui.test:8233' },
        body: JSON.stringify({ payloads: [{ metadata: Object.fromEntries(Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])), data: Buffer.from(sealed!.data!).toString('base64') }] }),
      });
      expect(answer.headers.get('access-control-allow-origin')).toBe('http://ui.test:8233');
      const { payloads } = (await answer.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toBe('"from the worker"');
    } finally {
      codec.child.kill('SIGTERM');
    }
    expect(await codec.exited).toBe(0);

    const keyless = await runCli(['temporal', 'codec', '--json'], cleanEnv({}));
    expect(keyless.code).toBe(1);
    expect(keyless.json.error.message).toContain('PAYLOAD_ENCRYPTION_KEYS');
  });
});
