import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { cliActor, recordAudit } from '../../domain/audit/events';
import { addressRefusal, checkOutboundUrl, postOutbound, publicOnly } from '../../domain/notify/outbound';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';
import { startReceiver, type Received, type Receiver } from '../support/receiver';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// Outgoing webhooks on the real Temporal dev server and PostgreSQL: events written to the outbox with what they
// describe, relayed to Temporal, delivered signed (Standard Webhooks) to a receiver on loopback, retried, logged,
// redelivered, and an endpoint that keeps failing switched off.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
let ownerToken: string;
let globexOwnerToken: string;

interface Delivered {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

const owner = async (org: TestOrganization) => {
  const person = await createUser(h.db, { orgId: org.organization.id, email: `owner@${org.organization.slug}.test`, role: 'owner' });
  return (await createPersonalToken(h.db, person)).token;
};

async function register(receiver: Receiver, eventTypes: string[], token = ownerToken, path = '/hook') {
  const response = await h.request({
    method: 'POST',
    url: '/api/v1/webhook-endpoints',
    token,
    payload: { url: `${receiver.url}${path}`, event_types: eventTypes, description: 'test receiver' },
  });
  expect(response.statusCode, response.body).toBe(200);
  return json(response).data as { endpoint: { id: string }; secret: string };
}

/** The event a request carries, once its signature is checked with the endpoint's secret. */
function verified(request: Received, secret: string): Delivered {
  const payload = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Omit<Delivered, 'id'>;
  return { id: request.headers['webhook-id'] as string, ...payload };
}

const write = (title: string, org = acme) => h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });

/** The events of one gated write (by its workflow), in the order they happened. */
const ofWorkflow = (events: Delivered[], workflowId: string) =>
  events.filter((event) => event.data.workflow_id === workflowId).sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));

beforeAll(async () => {
  h = await startHarness({ webhooks: { disableAfter: 2 }, reviewExpiryMs: 6000, reviewRecheckMs: 500 });
  [acme, globex] = [await h.createOrganization(), await h.createOrganization()];
  [ownerToken, globexOwnerToken] = [await owner(acme), await owner(globex)];
});

afterAll(() => h?.close());

describe('the events of a gated write', () => {
  let receiver: Receiver;
  let secret: string;
  let endpointId: string;
  const all = ['review.created', 'review.decided', 'review.expired', 'review.withdrawn', 'write.applied', 'write.denied', 'write.failed'];
  const arrived = async (count: number, workflowId: string) =>
    ofWorkflow((await receiver.waitFor(count, (r) => verified(r, secret).data.workflow_id === workflowId)).map((r) => verified(r, secret)), workflowId);

  beforeAll(async () => {
    receiver = await startReceiver();
    const registered = await register(receiver, all);
    ({ secret } = registered);
    endpointId = registered.endpoint.id;
  });
  afterAll(async () => {
    await h.request({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpointId}`, token: ownerToken });
    await receiver.close();
  });

  it('Allow: write.applied, signed, with the audit event as its id', async () => {
    const response = await write('an ordinary task');
    expect(response.statusCode).toBe(201);
    const task = json(response).data;
    const { rows } = await h.db.query("SELECT id, workflow_id FROM audit_events WHERE type = 'write.applied' AND resource_id = $1", [task.id]);
    const [event] = await arrived(1, rows[0].workflow_id);
    expect(event).toMatchObject({ id: rows[0].id, type: 'write.applied', data: { resource_type: 'Task', resource_id: task.id, operation: 'tasks.create' } });
    const request = receiver.received.find((r) => r.headers['webhook-id'] === rows[0].id)!;
    expect(request.headers['webhook-signature']).toMatch(/^v1,/);
    expect(request.headers['content-type']).toBe('application/json');
    // Tampering with the body breaks the signature.
    expect(() => new Webhook(secret).verify(request.body.replace('tasks', 'tasks '), request.headers as Record<string, string>)).toThrow();
  });

  it('Review → approve: review.created (with the review page), review.decided, write.applied', async () => {
    const held = await write('review and approve');
    expect(held.statusCode).toBe(202);
    const reviewId = json(held).review.id;
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.reviewerToken, payload: { comment: 'fine' } });
    expect(approved.statusCode).toBe(200);
    const { rows } = await h.db.query('SELECT workflow_id FROM reviews WHERE id = $1', [reviewId]);
    const events = await arrived(3, rows[0].workflow_id);
    expect(events.map((event) => event.type)).toEqual(['review.created', 'review.decided', 'write.applied']);
    expect(events[0]!.data).toMatchObject({ review_id: reviewId, review_web_url: `http://gatehouse.test/reviews/${reviewId}`, operation: 'tasks.create' });
    expect(events[1]!.data).toMatchObject({ review_id: reviewId, decision: 'approved', comment: 'fine', actor: { type: 'user' } });
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });

  it('a held changeset, approved: one review.created, one review.decided, one write.applied (the Changeset), nothing per item', async () => {
    const held = await h.request({
      method: 'POST',
      url: '/api/v1/changesets',
      token: acme.readWriteToken,
      payload: {
        items: [
          { ref: 'proj', operation: 'projects.create', input: { name: 'Webhook rollout' } },
          { operation: 'tasks.create', input: { title: 'review the webhook rollout', project_id: '$ref:proj' } },
          { operation: 'tasks.create', input: { title: 'Announce the webhook rollout' } },
        ],
      },
    });
    expect(held.statusCode, held.body).toBe(202);
    const reviewId = json(held).review.id;
    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: acme.reviewerToken, payload: {} });
    expect(approved.statusCode, approved.body).toBe(200);
    const { rows } = await h.db.query('SELECT workflow_id, changeset_id FROM reviews WHERE id = $1', [reviewId]);
    const events = await arrived(3, rows[0].workflow_id);
    expect(events.map((event) => event.type)).toEqual(['review.created', 'review.decided', 'write.applied']);
    expect(events[0]!.data).toMatchObject({ review_id: reviewId, operation: 'changesets.submit' });
    expect(events[2]!.data).toMatchObject({ resource_type: 'Changeset', resource_id: rows[0].changeset_id, operation: 'changesets.submit' });
    // Each item's decision and write is in the audit trail, and none of them is an event for receivers.
    const { rows: trail } = await h.db.query("SELECT type FROM audit_events WHERE workflow_id = $1 AND type LIKE 'changeset.%' ORDER BY id", [rows[0].workflow_id]);
    expect(trail.map((row) => row.type).sort()).toEqual([...Array(3).fill('changeset.item_applied'), ...Array(3).fill('changeset.item_decided')]);
    const { rows: outbox } = await h.db.query("SELECT type FROM webhook_events WHERE data->>'workflow_id' = $1 ORDER BY created_at, id", [rows[0].workflow_id]);
    expect(outbox.map((row) => row.type)).toEqual(['review.created', 'review.decided', 'write.applied']);
  });

  it('Review → expire: review.created, review.expired', async () => {
    const held = await write('review and let it expire');
    expect(held.statusCode).toBe(202);
    const { rows } = await h.db.query('SELECT workflow_id FROM reviews WHERE id = $1', [json(held).review.id]);
    const events = await arrived(2, rows[0].workflow_id);
    expect(events.map((event) => event.type)).toEqual(['review.created', 'review.expired']);
  }, 20_000);

  it('Review → its key revoked: review.created, review.withdrawn saying who withdrew it and why', async () => {
    const key = await createApiKey(h.db, { orgId: acme.organization.id, label: 'revoked while held', access: 'read_write' });
    const held = await write('review until the key is revoked', { ...acme, readWriteToken: key.token });
    expect(held.statusCode).toBe(202);
    const reviewId = json(held).review.id;
    // As the CLI revokes: the domain, no api in between.
    await revokeApiKey(h.db, withdrawReviewsOfKey, acme.organization.id, key.key.id);
    const { rows } = await h.db.query('SELECT workflow_id FROM reviews WHERE id = $1', [reviewId]);
    const events = await arrived(2, rows[0].workflow_id);
    expect(events.map((event) => event.type)).toEqual(['review.created', 'review.withdrawn']);
    expect(events[1]!.data).toMatchObject({ review_id: reviewId, reason: 'key_revoked', api_key_id: key.key.id, actor: { type: 'system', id: 'cli' } });
    // The run ends at its next re-read, and nothing more is announced of it.
    expect((await h.temporal.workflow.getHandle(rows[0].workflow_id).result()).resolution).toEqual({ status: 'withdrawn' });
    const { rows: outbox } = await h.db.query("SELECT type FROM webhook_events WHERE data->>'workflow_id' = $1 ORDER BY created_at, id", [rows[0].workflow_id]);
    expect(outbox.map((row) => row.type)).toEqual(['review.created', 'review.withdrawn']);
  });

  it('Deny: write.denied, with the reason and the rules', async () => {
    const denied = await write('deny this');
    expect(denied.statusCode).toBe(403);
    const { rows } = await h.db.query("SELECT workflow_id FROM audit_events WHERE type = 'gate.decided' AND data->>'decision' = 'deny' AND org_id = $1", [
      acme.organization.id,
    ]);
    const [event] = await arrived(1, rows[0].workflow_id);
    expect(event).toMatchObject({ type: 'write.denied', data: { reason: 'The title asks to be denied', policy_ids: ['deny-when-asked'] } });
  });
});

describe('what people and the CLI change emits too', () => {
  it('key.created, key.revoked and policy.changed, whoever made the change', async () => {
    const receiver = await startReceiver();
    try {
      const { secret, endpoint } = await register(receiver, ['key.created', 'key.revoked', 'policy.changed']);
      // As the CLI does it: the domain, with no api in between.
      const created = await createApiKey(h.db, { orgId: acme.organization.id, label: 'made by the CLI', access: 'read' });
      await revokeApiKey(h.db, withdrawReviewsOfKey, acme.organization.id, created.key.id);
      await setPolicySet(h.db, acme.organization.id, testPolicy, 'cli');
      // A change rolled back emits nothing: the event is written in its transaction.
      await expect(
        h.db.transaction(async (tx) => {
          await recordAudit(tx, acme.organization.id, { type: 'api_key.created', actor: cliActor, resourceId: 'key_never', data: { label: 'rolled back' } });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const events = (await receiver.waitFor(3)).map((r) => verified(r, secret));
      expect(events.map((event) => event.type).sort()).toEqual(['key.created', 'key.revoked', 'policy.changed']);
      const { rows } = await h.db.query("SELECT count(*)::int AS n FROM webhook_events WHERE data->>'resource_id' = 'key_never'");
      expect(rows[0].n).toBe(0);
      expect(events.find((event) => event.type === 'key.created')!.data).toMatchObject({ resource_id: created.key.id, label: 'made by the CLI', access: 'read' });
      await h.request({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, token: ownerToken });
    } finally {
      await receiver.close();
    }
  });
});

describe('trust windows', () => {
  it('trust_window.opened as an approval opens one; trust_window.closed when its last use is taken, and when a person closes one', async () => {
    const receiver = await startReceiver();
    try {
      const { secret, endpoint } = await register(receiver, ['trust_window.opened', 'trust_window.closed']);
      const openOne = async (title: string, maxUses: number) => {
        const held = await write(title);
        expect(held.statusCode).toBe(202);
        const approved = await h.request({
          method: 'POST',
          url: `/api/v1/reviews/${json(held).review.id}/approve`,
          token: acme.reviewerToken,
          payload: { trust: { minutes: 30, max_uses: maxUses, match: [] } },
        });
        expect(approved.statusCode, approved.body).toBe(200);
        return json(approved).data as { id: string; workflow_id: string; trust_window: { id: string; expires_at: string } };
      };
      // One window used up by the write that takes its only use, another closed by its opener.
      const usedUp = await openOne('review with a window of one', 1);
      const through = await write('review let through');
      expect(through.statusCode).toBe(201);
      const closedByHand = await openOne('review with a window closed by hand', 5);
      expect((await h.request({ method: 'POST', url: `/api/v1/trust-windows/${closedByHand.trust_window.id}/close`, token: acme.reviewerToken, payload: {} })).statusCode).toBe(200);

      const events = (await receiver.waitFor(4)).map((request) => verified(request, secret));
      const of = (windowId: string) => events.filter((event) => event.data.resource_id === windowId).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
      const [opened, closed] = of(usedUp.trust_window.id);
      expect(opened).toMatchObject({
        type: 'trust_window.opened',
        data: {
          actor: { type: 'user' },
          review_id: usedUp.id,
          workflow_id: usedUp.workflow_id,
          resource_type: 'trust_window',
          operation: 'tasks.create',
          match: {},
          max_uses: 1,
          minutes: 30,
          expires_at: usedUp.trust_window.expires_at,
        },
      });
      expect(closed).toMatchObject({
        type: 'trust_window.closed',
        data: { actor: { type: 'api_key' }, workflow_id: through.headers['x-gatehouse-workflow-id'], reason: 'used_up', uses: 1, max_uses: 1 },
      });
      expect(of(closedByHand.trust_window.id).map((event) => [event.type, event.data.reason ?? null, event.data.actor.type])).toEqual([
        ['trust_window.opened', null, 'user'],
        ['trust_window.closed', 'closed', 'user'],
      ]);
      await h.request({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, token: ownerToken });
    } finally {
      await receiver.close();
    }
  });
});

describe('retries, the delivery log and redelivery', () => {
  it('a delivery refused twice arrives at the third attempt with the same id; a redelivery sends it again', async () => {
    const receiver = await startReceiver();
    try {
      const { secret, endpoint } = await register(receiver, ['write.applied']);
      receiver.answerWith(500, 503);
      expect((await write('delivered at the third attempt')).statusCode).toBe(201);
      const attempts = await receiver.waitFor(3);
      const ids = attempts.map((request) => request.headers['webhook-id']);
      expect(new Set(ids).size).toBe(1);
      for (const request of attempts) expect(verified(request, secret).type).toBe('write.applied');

      const log = async () => {
        const response = await h.request({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, token: ownerToken });
        expect(response.statusCode, response.body).toBe(200);
        return json(response).data as Record<string, any>[];
      };
      await expect.poll(async () => (await log())[0]?.status).toBe('delivered');
      const [first] = await log();
      expect(first).toMatchObject({ event_id: ids[0], event_type: 'write.applied', attempts: 3, response_status: 204, last_error: null });

      const again = await h.request({ method: 'POST', url: `/api/v1/webhook-deliveries/${first!.id}/redeliver`, token: ownerToken, payload: {} });
      expect(again.statusCode, again.body).toBe(200);
      expect(json(again).data).toMatchObject({ status: 'pending', redelivery_of: first!.id, event_id: ids[0] });
      const all = await receiver.waitFor(4);
      expect(all[3]!.headers['webhook-id']).toBe(ids[0]);
      await expect.poll(async () => (await log())[0]).toMatchObject({ id: json(again).data.id, status: 'delivered', attempts: 1 });
    } finally {
      await receiver.close();
    }
  });

  it('an endpoint whose deliveries keep failing is switched off, recorded, and sent nothing more', async () => {
    const receiver = await startReceiver();
    try {
      const { endpoint } = await register(receiver, ['write.applied']);
      receiver.answerWith(...Array(6).fill(500));
      expect((await write('never accepted, one')).statusCode).toBe(201);
      expect((await write('never accepted, two')).statusCode).toBe(201);
      const state = async () => json(await h.request({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, token: ownerToken })).data;
      await expect.poll(state, { timeout: 15_000 }).toMatchObject({ enabled: false, failure_streak: 2 });
      expect((await state()).disabled_reason).toMatch(/2 deliveries in a row failed/);
      const { rows } = await h.db.query("SELECT actor_type, data FROM audit_events WHERE type = 'webhook.disabled' AND resource_id = $1", [endpoint.id]);
      expect(rows).toEqual([{ actor_type: 'system', data: { host: new URL(receiver.url).host, failed_deliveries: 2 } }]);

      const before = receiver.received.length;
      expect((await write('not sent: the endpoint is off')).statusCode).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(receiver.received.length).toBe(before);
      const redeliver = await h.request({
        method: 'POST',
        url: `/api/v1/webhook-deliveries/${(await h.db.query('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT 1', [endpoint.id])).rows[0].id}/redeliver`,
        token: ownerToken,
        payload: {},
      });
      expect(redeliver.statusCode).toBe(409);

      // Switched back on by a person: its failures are forgotten.
      const on = await h.request({ method: 'PATCH', url: `/api/v1/webhook-endpoints/${endpoint.id}`, token: ownerToken, payload: { enabled: true } });
      expect(json(on).data).toMatchObject({ enabled: true, failure_streak: 0, disabled_reason: null });
    } finally {
      await receiver.close();
    }
  }, 30_000);
});

describe('where requests may go', () => {
  it.each([
    ['https://10.0.0.5/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /linkLocal/],
    ['https://[fd00::1]/hook', /uniqueLocal/],
    ['https://[::ffff:192.168.1.1]/hook', /private/],
    ['https://100.64.0.1/hook', /carrierGradeNat/],
    ['https://0.0.0.0/hook', /unspecified/],
    ['http://example.com/hook', /https/],
    ['ftp://example.com/hook', /https/],
    ['https://user:pass@example.com/hook', /user name or password/],
    ['not a url', /not a URL/],
  ])('refuses %s', async (url, why) => {
    const response = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token: ownerToken, payload: { url, event_types: ['write.applied'] } });
    expect(response.statusCode).toBe(422);
    expect(json(response).error.code).toBe('validation_failed');
    expect(json(response).error.message).toMatch(why);
  });

  it('public addresses only, unless the operator allows loopback or private ranges', async () => {
    expect(addressRefusal('93.184.216.34', publicOnly)).toBeUndefined();
    expect(addressRefusal('2606:4700::1111', publicOnly)).toBeUndefined();
    for (const address of ['127.0.0.1', '::1', '10.1.2.3', '172.16.0.1', '192.168.0.1', 'fe80::1', '169.254.1.1']) {
      expect(addressRefusal(address, publicOnly)).toBeDefined();
    }
    expect(addressRefusal('10.1.2.3', { allowLoopback: false, allowPrivate: true })).toBeUndefined();
    // Never, whatever the operator allows: link-local (cloud metadata) and IPv4-compatible IPv6.
    const everything = { allowLoopback: true, allowPrivate: true };
    for (const address of ['169.254.169.254', 'fe80::1', '::7f00:1', '::a00:1']) expect(addressRefusal(address, everything), address).toBeDefined();
    expect(addressRefusal('127.0.0.1', { allowLoopback: true, allowPrivate: false })).toBeUndefined();
    await expect(checkOutboundUrl('http://127.0.0.1:9/hook', publicOnly)).rejects.toThrow(/https/);
    await expect(checkOutboundUrl('https://localhost/hook', publicOnly)).rejects.toThrow(/loopback/);
  });

  it('gives a receiver that trickles its answer the timeout for the whole exchange, and reads 2 KiB of an answer at most', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((request, response) => {
      if (request.url === '/long') {
        response.writeHead(200);
        response.write('x'.repeat(4096));
        return; // never ends
      }
      response.writeHead(200);
      const drip = setInterval(() => response.write('.'), 100);
      response.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const policy = { allowLoopback: true, allowPrivate: false };
      const started = Date.now();
      await expect(postOutbound(`${base}/drip`, '{}', {}, { policy, timeoutMs: 700 })).rejects.toThrow(/no answer within 0.7 s/);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await postOutbound(`${base}/long`, '{}', {}, { policy, timeoutMs: 2000 })).toMatchObject({ status: 200 });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('checks the address again when it connects: a name that resolves to loopback is refused then', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      await expect(postOutbound(`http://localhost:${port}/hook`, '{}', {}, { policy: publicOnly })).rejects.toThrow(/refused: .*loopback/);
      await expect(postOutbound(`http://127.0.0.1:${port}/hook`, '{}', {}, { policy: publicOnly })).rejects.toThrow(/refused/);
      expect(receiver.received).toHaveLength(0);
      expect((await postOutbound(`http://localhost:${port}/hook`, '{}', {}, { policy: { allowLoopback: true, allowPrivate: false } })).status).toBe(204);
    } finally {
      await receiver.close();
    }
  });
});

describe('bad input, roles and tenancy', () => {
  it('refuses unknown event types and an empty list', async () => {
    for (const event_types of [['write.applied', 'nope'], []]) {
      const response = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token: ownerToken, payload: { url: 'https://example.com/hook', event_types } });
      expect(response.statusCode).toBe(422);
      expect(json(response).error.code).toBe('validation_failed');
    }
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = $1', ['https://example.com/hook']);
    expect(rows[0].n).toBe(0);
  });

  it('is for owners and admins: reviewers, members and API keys are refused', async () => {
    const receiver = await startReceiver();
    try {
      const payload = { url: `${receiver.url}/hook`, event_types: ['write.applied'] };
      for (const token of [acme.reviewerToken, acme.memberToken]) {
        const response = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token, payload });
        expect(response.statusCode).toBe(403);
        expect(json(response).error.code).toBe('insufficient_role');
        expect((await h.request({ method: 'GET', url: '/api/v1/webhook-endpoints', token })).statusCode).toBe(403);
      }
      const byKey = await h.request({ method: 'POST', url: '/api/v1/webhook-endpoints', token: acme.readWriteToken, payload });
      expect(byKey.statusCode).toBe(403);
      expect(json(byKey).error.code).toBe('person_required');
    } finally {
      await receiver.close();
    }
  });

  it("one organization never sees, changes or redelivers another's endpoints", async () => {
    const receiver = await startReceiver();
    try {
      const { endpoint } = await register(receiver, ['write.applied']);
      expect((await write('for the delivery log')).statusCode).toBe(201);
      await receiver.waitFor(1);
      const { rows } = await h.db.query('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1', [endpoint.id]);
      const listed = json(await h.request({ method: 'GET', url: '/api/v1/webhook-endpoints', token: globexOwnerToken })).data;
      expect(listed.map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
      for (const request of [
        { method: 'GET' as const, url: `/api/v1/webhook-endpoints/${endpoint.id}` },
        { method: 'GET' as const, url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries` },
        { method: 'PATCH' as const, url: `/api/v1/webhook-endpoints/${endpoint.id}`, payload: { enabled: false } },
        { method: 'DELETE' as const, url: `/api/v1/webhook-endpoints/${endpoint.id}` },
        { method: 'POST' as const, url: `/api/v1/webhook-deliveries/${rows[0].id}/redeliver`, payload: {} },
      ]) {
        const response = await h.request({ ...request, token: globexOwnerToken });
        expect(response.statusCode, `${request.method} ${request.url}`).toBe(404);
      }
      expect(json(await h.request({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, token: ownerToken })).data.enabled).toBe(true);
      // Globex's writes reach none of Acme's endpoints.
      const before = receiver.received.length;
      expect((await write('a globex task', globex)).statusCode).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(receiver.received.length).toBe(before);
    } finally {
      await receiver.close();
    }
  });
});
