// Records the histories of the webhook and reviewer-notification workflows as the code stands, for
// test/workflows/replay.test.ts. A held write's supervision waits for hours on its timers and a delivery retries for a day,
// so runs started by older code must replay on newer code. Run it before changing those workflows, and commit
// what it writes:
//
//   node bin/run-ts.js test/histories/record-notify.ts [name-prefix]
//
// It runs the real thing (a Temporal dev server, a fresh PostgreSQL database, a worker with the outbox relay, the
// app, a receiver on loopback) and writes test/histories/notify/<prefix>-<scenario>.json.
import { mkdirSync, readFileSync } from 'node:fs';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization } from '../../domain/identity/organizations';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { createWebhookEndpoint } from '../../domain/notify/endpoints';
import { updateReviewNotificationSettings } from '../../domain/notify/settings';
import { startOutboxRelay } from '../../runtime/outbox-relay';
import { createWorker } from '../../worker';
import { reviewPeopleWorkflowId, webhookDeliveryWorkflowId } from '../../workflows/messages';
import { startReceiver } from '../support/receiver';
import { testSecrets } from '../support/secrets';
import { startRecording, writeHistory } from './recording';

const prefix = process.argv[2] ?? new Date().toISOString().slice(0, 10);
const folder = new URL('./notify/', import.meta.url);
mkdirSync(folder, { recursive: true });
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');
const loopback = { allowLoopback: true, allowPrivate: false };
const system = { type: 'system' as const, id: 'histories' };

const { db, client, workerConnection, close } = await startRecording('histories');
const receiver = await startReceiver();

const taskQueue = 'histories-notify';
const worker = await createWorker({
  connection: workerConnection,
  namespace: 'default',
  taskQueue,
  db,
  secrets: testSecrets,
  reviewExpiryMs: 60_000,
  webhooks: { policy: loopback, publicUrl: 'http://gatehouse.test', timeoutMs: 2000, disableAfter: 1 },
});
const running = worker.run();
const relay = startOutboxRelay({
  db,
  client,
  taskQueue,
  retry: { initialIntervalMs: 100, backoffCoefficient: 2, maximumIntervalMs: 500, maximumAttempts: 2 },
  everyMs: 100,
});
const app = await buildApp({ db, gate: createGateClient(client, { taskQueue }), publicUrl: 'http://gatehouse.test', logLevel: 'silent', secrets: testSecrets });

const org = await createOrganization(db, { slug: 'histories', name: 'Histories', plan: 'business' });
await setPolicySet(db, org.id, policy, 'histories');
const agent = (await createApiKey(db, { orgId: org.id, label: 'agent', access: 'read_write' })).token;
const reviewer = (await createPersonalToken(db, await createUser(db, { orgId: org.id, email: 'reviewer@histories.test', role: 'reviewer' }))).token;
await createUser(db, { orgId: org.id, email: 'admin@histories.test', role: 'admin' });
await createWebhookEndpoint(db, testSecrets, org.id, { url: `${receiver.url}/hook`, eventTypes: ['write.applied'] }, loopback);

const call = async (method: 'POST', url: string, token: string, payload?: unknown) => {
  const response = await app.inject({ method, url: `/api${url}`, headers: { authorization: `Bearer ${token}` }, payload: payload as never });
  return { status: response.statusCode, body: response.json() };
};
/** The workflow, once it exists and has closed; its history written under the scenario's name. */
const settle = async (name: string, workflowId: string) => {
  const handle = client.workflow.getHandle(workflowId);
  for (let tries = 0; ; tries++) {
    try {
      await handle.result();
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await writeHistory(client, workflowId, new URL(`${prefix}-${name}.json`, folder));
  console.log(`recorded ${name} (${workflowId})`);
};
/** The id the query finds, once it finds one (the relay makes deliveries within a moment). */
const eventOf = async (sql: string, values: unknown[]) => {
  for (let tries = 0; tries < 100; tries++) {
    const { rows } = await db.query<{ id: string }>(sql, values);
    if (rows[0]) return rows[0].id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing found: ${sql}`);
};

try {
  const allowed = await call('POST', '/v1/tasks', agent, { title: 'Allowed' });
  const applied = await eventOf("SELECT id FROM webhook_events WHERE type = 'write.applied' AND data->>'resource_id' = $1", [allowed.body.data.id]);
  const delivered = await eventOf('SELECT id FROM webhook_deliveries WHERE event_id = $1', [applied]);
  await settle('delivery-delivered', webhookDeliveryWorkflowId(delivered));

  // Refused at every attempt: failed, and the endpoint switched off (disableAfter 1).
  receiver.answerWith(500, 500, 500);
  const refused = await call('POST', '/v1/tasks', agent, { title: 'Refused at every attempt' });
  const unwanted = await eventOf("SELECT id FROM webhook_events WHERE type = 'write.applied' AND data->>'resource_id' = $1", [refused.body.data.id]);
  const failed = await eventOf('SELECT id FROM webhook_deliveries WHERE event_id = $1', [unwanted]);
  await settle('delivery-failed', webhookDeliveryWorkflowId(failed));

  // A held write that escalates to the admins, then finds no owner, then is approved.
  await updateReviewNotificationSettings(db, testSecrets, org.id, { reviewEscalationMs: 1000 }, loopback, system);
  const held = await call('POST', '/v1/tasks', agent, { title: 'review and escalate' });
  await eventOf("SELECT id FROM webhook_events WHERE type = 'review.created' AND data->>'review_id' = $1", [held.body.review.id]);
  await settle('supervise-escalated', reviewPeopleWorkflowId(held.body.review.id));
  await call('POST', `/v1/reviews/${held.body.review.id}/approve`, reviewer);

  // Decided before its wait ran out: told once, then nothing more.
  const quick = await call('POST', '/v1/tasks', agent, { title: 'review and decide at once' });
  await call('POST', `/v1/reviews/${quick.body.review.id}/approve`, reviewer);
  await settle('supervise-decided', reviewPeopleWorkflowId(quick.body.review.id));
} finally {
  await app.close();
  await relay.stop();
  worker.shutdown();
  await running;
  await receiver.close();
  await close();
}
