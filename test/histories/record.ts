// Records the histories of the gated-write workflow as the code stands, for test/workflows/replay.test.ts.
// Run it before changing the workflow, and commit what it writes:
//
//   node bin/run-ts.js test/histories/record.ts [name-prefix]
//
// Each scenario runs the real thing (a Temporal dev server, a fresh PostgreSQL database, a worker, the app)
// and writes one history per workflow to test/histories/<prefix>-<scenario>.json.
import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { readFileSync, writeFileSync } from 'node:fs';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { connectDatabase } from '../../db/database';
import { createScratchDatabase } from '../../db/scratch-database';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization } from '../../domain/identity/organizations';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { startTemporalDevServer } from '../../runtime/temporal-dev-server';
import { createWorker } from '../../worker';
import { testSecrets } from '../support/secrets';

const prefix = process.argv[2] ?? new Date().toISOString().slice(0, 10);
const out = (name: string) => new URL(`./${prefix}-${name}.json`, import.meta.url);
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

Runtime.install({ logger: new DefaultLogger('ERROR') });
const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI });
if (!cliPath) throw new Error('needs the Temporal CLI');
const temporal = await startTemporalDevServer({ cliPath, headless: true });

const database = await createScratchDatabase('histories', process.env.TEST_DATABASE_ADMIN_URL);
const db = connectDatabase(database.url);

const taskQueue = 'histories';
const connection = await Connection.connect({ address: temporal.address });
const client = new Client({ connection });
const workerConnection = await NativeConnection.connect({ address: temporal.address });
// A short expiry and re-read, so that the expiry and the lost-signal paths are recorded in seconds.
const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, db, secrets: testSecrets, reviewExpiryMs: 4000, reviewRecheckMs: 1000 });
const running = worker.run();
const app = await buildApp({ db, gate: createGateClient(client, { taskQueue }), publicUrl: 'http://gatehouse.test', logLevel: 'silent', secrets: testSecrets });

const org = await createOrganization(db, { slug: 'histories', name: 'Histories', plan: 'business' });
await setPolicySet(db, org.id, policy, 'histories');
const agent = (await createApiKey(db, { orgId: org.id, label: 'agent', access: 'read_write' })).token;
const reviewer = (await createPersonalToken(db, await createUser(db, { orgId: org.id, email: 'reviewer@histories.test', role: 'reviewer' }))).token;

const call = async (method: 'POST' | 'PATCH', url: string, token: string, payload?: unknown) => {
  const response = await app.inject({ method, url: `/api${url}`, headers: { authorization: `Bearer ${token}` }, payload: payload as never });
  return { status: response.statusCode, body: response.json(), workflowId: response.headers['x-gatehouse-workflow-id'] as string | undefined };
};
const settle = async (name: string, workflowId: string) => {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined);
  writeFileSync(out(name), `${JSON.stringify(historyAsJson(await handle.fetchHistory()), null, 1)}\n`);
  console.log(`recorded ${name} (${workflowId})`);
};
/**
 * protobufjs's own JSON form (longs, enums and bytes as strings), which History.fromObject reads back. The SDK's
 * historyToJSON would write Temporal's standard form, but fails here: npm installs a separate protobufjs for
 * @temporalio/common and @temporalio/proto, and the one does not recognize the other's types.
 */
function historyAsJson(history: protos.temporal.api.history.v1.IHistory): unknown {
  const { History } = protos.temporal.api.history.v1;
  return History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
}
const expect = (what: string, actual: number, wanted: number) => {
  if (actual !== wanted) throw new Error(`${what}: ${actual}, not ${wanted}`);
};

try {
  const allowed = await call('POST', '/v1/tasks', agent, { title: 'Allowed' });
  expect('allow', allowed.status, 201);
  await settle('allow', allowed.workflowId!);

  const denied = await call('POST', '/v1/tasks', agent, { title: 'deny this' });
  expect('deny', denied.status, 403);
  await settle('deny', denied.workflowId!);

  const approved = await call('POST', '/v1/tasks', agent, { title: 'review then approve' });
  expect('review', approved.status, 202);
  expect('approve', (await call('POST', `/v1/reviews/${approved.body.review.id}/approve`, reviewer)).status, 200);
  await settle('review-approved', approved.workflowId!);

  const refused = await call('POST', '/v1/tasks', agent, { title: 'review then deny' });
  expect('deny by a person', (await call('POST', `/v1/reviews/${refused.body.review.id}/deny`, reviewer, { comment: 'no' })).status, 200);
  await settle('review-denied', refused.workflowId!);

  // A person's decision that reaches the workflow only through its periodic re-read (no signal).
  const unsignalled = await call('POST', '/v1/tasks', agent, { title: 'review then approve without a signal' });
  await db.query(`UPDATE reviews SET status = 'approved', decided_at = now() WHERE id = $1`, [unsignalled.body.review.id]);
  await settle('review-approved-by-reread', unsignalled.workflowId!);

  const expired = await call('POST', '/v1/tasks', agent, { title: 'review until it expires' });
  await settle('review-expired', expired.workflowId!);

  // Approved, but the record changed meanwhile: the write is refused and the failure recorded.
  const created = await call('POST', '/v1/tasks', agent, { title: 'Changes under review' });
  const stale = await call('PATCH', `/v1/tasks/${created.body.data.id}`, agent, { title: 'review the new title' });
  expect('held update', stale.status, 202);
  await db.query('UPDATE tasks SET version = version + 1 WHERE id = $1', [created.body.data.id]);
  await call('POST', `/v1/reviews/${stale.body.review.id}/approve`, reviewer);
  await settle('review-approved-apply-failed', stale.workflowId!);

  // The policy never decides: the write refers to nothing there is (the activity refuses it).
  const missing = await call('PATCH', `/v1/tasks/task_${'0'.repeat(26)}`, agent, { title: 'Nothing there' });
  expect('missing record', missing.status, 404);
  await settle('refused-before-deciding', missing.workflowId!);
} finally {
  await app.close();
  worker.shutdown();
  await running;
  await workerConnection.close();
  await connection.close();
  await db.close();
  await temporal.stop();
  await database.drop();
}
