// Records the histories of the changeset workflow (changesetV1) as the code stands, for
// test/workflows/replay.test.ts. Run it before changing the workflow, and commit what it writes:
//
//   node bin/run-ts.js test/histories/record-changesets.ts [name-prefix] [scenario…]
//
// Like record.ts (gated writes): each scenario runs the real thing (a Temporal dev server, a fresh PostgreSQL
// database, a worker, the app) and writes one history per workflow to test/histories/<prefix>-changeset-<scenario>.json;
// naming scenarios writes only theirs.
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
const out = (name: string) => new URL(`./${prefix}-changeset-${name}.json`, import.meta.url);
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

const { db, client, workerConnection, close } = await startRecording('histories_changesets');

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

const call = async (method: 'POST' | 'PATCH' | 'DELETE', url: string, token: string, payload?: unknown) => {
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
  const task = async (title: string) => (await call('POST', '/v1/tasks', agent, { title })).body.data as { id: string };
  /** The mixed changeset: a project, a task in it, an update and a delete of existing tasks. */
  const mixed = async (followUp: string) => {
    const [toMove, toDrop] = [await task(`Move (${followUp})`), await task(`Drop (${followUp})`)];
    return [
      { ref: 'proj', operation: 'projects.create', input: { name: `Project (${followUp})` } },
      { operation: 'tasks.create', input: { title: followUp, project_id: '$ref:proj' } },
      { operation: 'tasks.update', input: { id: toMove.id, status: 'done', project_id: '$ref:proj' } },
      { operation: 'tasks.delete', input: { id: toDrop.id } },
    ];
  };

  const allowed = await call('POST', '/v1/changesets', agent, { items: await mixed('Follow up') });
  expect('allowed', allowed.status, 201);
  await settle('allowed', allowed.workflowId!);

  const denied = await call('POST', '/v1/changesets', agent, { items: await mixed('deny this follow-up') });
  expect('denied', denied.status, 403);
  await settle('denied', denied.workflowId!);

  const approved = await call('POST', '/v1/changesets', agent, { items: await mixed('review then approve') });
  expect('held', approved.status, 202);
  expect('approve', (await call('POST', `/v1/reviews/${approved.body.review.id}/approve`, reviewer, { comment: 'All of it' })).status, 200);
  await settle('held-approved', approved.workflowId!);

  const refused = await call('POST', '/v1/changesets', agent, { items: await mixed('review then deny') });
  expect('held', refused.status, 202);
  expect('deny by a person', (await call('POST', `/v1/reviews/${refused.body.review.id}/deny`, reviewer, { comment: 'no' })).status, 200);
  await settle('held-denied', refused.workflowId!);

  // A divisible changeset: a reviewer rejects one item with a reason, the others are applied together.
  const divisible = await call('POST', '/v1/changesets', agent, {
    mode: 'divisible',
    items: [
      { ref: 'proj', operation: 'projects.create', input: { name: 'Divisible project' } },
      { operation: 'tasks.create', input: { title: 'review divisible task', project_id: '$ref:proj' } },
      { operation: 'tasks.create', input: { title: 'Divisible standalone' } },
    ],
  });
  expect('held divisible', divisible.status, 202);
  const partly = await call('POST', `/v1/reviews/${divisible.body.review.id}/approve`, reviewer, { items: [{ index: 2, verdict: 'rejected', reason: 'Not needed' }] });
  expect('approve all but one', partly.status, 200);
  await settle('divisible-one-rejected', divisible.workflowId!);

  // The key revoked while its changeset waited: the review withdrawn, the workflow told as the api's revoke tells it.
  const revokedKey = await createApiKey(db, { orgId: org.id, label: 'revoked agent', access: 'read_write' });
  const withdrawn = await call('POST', '/v1/changesets', revokedKey.token, { items: await mixed('review until the key is revoked') });
  expect('held, then withdrawn', withdrawn.status, 202);
  const revoked = await revokeApiKey(db, withdrawReviewsOfKey, org.id, revokedKey.key.id);
  expect('withdrawn', revoked.withdrawn.length, 1);
  await gate.reviewsChanged(revoked.withdrawn.map((review) => review.workflowId));
  await settle('held-withdrawn', withdrawn.workflowId!);
} finally {
  await app.close();
  worker.shutdown();
  await running;
  await close();
}
