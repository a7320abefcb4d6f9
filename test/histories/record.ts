// Records the histories of the gated-write workflow as the code stands, for test/workflows/replay.test.ts.
// Run it before changing the workflow, and commit what it writes:
//
//   node bin/run-ts.js test/histories/record.ts [name-prefix] [scenario…]
//
// Each scenario runs the real thing (a Temporal dev server, a fresh PostgreSQL database, a worker, the app)
// and writes one history per workflow to test/histories/<prefix>-<scenario>.json; naming scenarios writes only
// theirs (a path added to the workflow is recorded alone, beside the histories of the versions before it).
import { readFileSync } from 'node:fs';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { createOrganization } from '../../domain/identity/organizations';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { createWorker } from '../../worker';
import { testSecrets } from '../support/secrets';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';
import { startRecording, writeHistory } from './recording';

const prefix = process.argv[2] ?? new Date().toISOString().slice(0, 10);
const only = process.argv.slice(3);
const out = (name: string) => new URL(`./${prefix}-${name}.json`, import.meta.url);
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

const { db, client, workerConnection, close } = await startRecording('histories');

const taskQueue = 'histories';
// A short expiry and re-read, so that the expiry and the lost-signal paths are recorded in seconds.
const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, db, secrets: testSecrets, reviewExpiryMs: 4000, reviewRecheckMs: 1000 });
const running = worker.run();
const gate = createGateClient(client, { taskQueue });
const app = await buildApp({ db, gate, publicUrl: 'http://gatehouse.test', logLevel: 'silent', secrets: testSecrets });

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
  if (only.length && !only.includes(name)) return;
  await writeHistory(client, workflowId, out(name));
  console.log(`recorded ${name} (${workflowId})`);
};
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

  // The key revoked while its write waited: the review withdrawn, and the workflow told at once, as the api's
  // revoke tells it (reviewDecidedSignal without a verdict).
  const revokedKey = await createApiKey(db, { orgId: org.id, label: 'revoked agent', access: 'read_write' });
  const withdrawn = await call('POST', '/v1/tasks', revokedKey.token, { title: 'review until the key is revoked' });
  expect('held, then withdrawn', withdrawn.status, 202);
  const revoked = await revokeApiKey(db, withdrawReviewsOfKey, org.id, revokedKey.key.id);
  expect('withdrawn', revoked.withdrawn.length, 1);
  await gate.reviewsChanged(revoked.withdrawn.map((review) => review.workflowId));
  await settle('review-withdrawn', withdrawn.workflowId!);

  // Withdrawn where no Temporal client is at hand (the CLI, the OAuth events): found by the periodic re-read.
  const quietKey = await createApiKey(db, { orgId: org.id, label: 'agent revoked quietly', access: 'read_write' });
  const quiet = await call('POST', '/v1/tasks', quietKey.token, { title: 'review until the key is revoked quietly' });
  expect('held, then withdrawn quietly', quiet.status, 202);
  expect('withdrawn quietly', (await revokeApiKey(db, withdrawReviewsOfKey, org.id, quietKey.key.id)).withdrawn.length, 1);
  await settle('review-withdrawn-by-reread', quiet.workflowId!);

  // Runs of the older workflow types still waiting when withdrawal came: withdrawn and told the same way, they end
  // as the current type does. (The api no longer starts them: started here by type, as the api once did.)
  for (const [type, name] of [['gatedWriteV2', 'v2-review-withdrawn'], ['gatedWrite', 'v1-review-withdrawn']] as const) {
    const olderKey = await createApiKey(db, { orgId: org.id, label: `agent of ${type}`, access: 'read_write' });
    const request = {
      orgId: org.id,
      orgSlug: org.slug,
      operation: 'tasks.create',
      input: { title: `review on ${type} until the key is revoked`, status: 'todo', priority: 'normal', tags: [] },
      interface: 'rest' as const,
      apiKey: { id: olderKey.key.id, label: olderKey.key.label, access: olderKey.key.access, abilities: olderKey.key.abilities },
    };
    const workflowId = `histories:tasks.create:${type}-withdrawn`;
    await client.workflow.start(type, { taskQueue, workflowId, args: [request] });
    const held = async () => (await db.query('SELECT 1 FROM reviews WHERE workflow_id = $1', [workflowId])).rowCount;
    for (let waited = 0; !(await held()) && waited < 100; waited++) await new Promise((resolve) => setTimeout(resolve, 100));
    const older = await revokeApiKey(db, withdrawReviewsOfKey, org.id, olderKey.key.id);
    expect(`withdrawn on ${type}`, older.withdrawn.length, 1);
    await gate.reviewsChanged([workflowId]);
    await settle(name, workflowId);
  }
} finally {
  await app.close();
  worker.shutdown();
  await running;
  await close();
}
