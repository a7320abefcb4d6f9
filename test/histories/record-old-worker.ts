// Records what a worker of older code leaves in the history of a held write (and of a held changeset) whose review
// is withdrawn under it, for test/workflows/replay.test.ts. Code from before withdrawal existed (by default the
// commit before it, 590c849) reads `withdrawn` as still waiting, and waits on. A rolling upgrade may leave such runs:
// each must replay on the current code, and end once a current worker takes it over.
//
//   node bin/run-ts.js test/histories/record-old-worker.ts [name-prefix] [commit]
//
// For each, the run is held by the current api, its key revoked (the review withdrawn, the workflow nudged) while an
// older worker runs it; that worker is stopped after it has read `withdrawn` a few times, and the run's history is
// written (<prefix>-old-worker-<path>-kept-waiting.json, still running). Then a worker of the current code takes it:
// it must end the run as withdrawn, and that history is written too (<prefix>-old-worker-<path>-then-ended.json).
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { createOrganization } from '../../domain/identity/organizations';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { createWorker } from '../../worker';
import { testSecrets } from '../support/secrets';
import { startRecording, writeHistory } from './recording';

const prefix = process.argv[2] ?? new Date().toISOString().slice(0, 10);
const commit = process.argv[3] ?? '590c849';
const out = (name: string) => new URL(`./${prefix}-old-worker-${name}.json`, import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

// The older code's workflows, bundled from its tree: inside the project, so that the bundler finds
// @temporalio/workflow, and outside node_modules, whose files the bundler does not compile (scratch/ is ignored by git).
const tree = join(root, 'scratch', `gatehouse-workflows-${commit}`);
rmSync(tree, { recursive: true, force: true });
mkdirSync(tree, { recursive: true });
execFileSync('sh', ['-c', `git -C "${root}" archive "${commit}" | tar -x -C "${tree}"`]);
// Quiet but for what went wrong.
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (message: string, meta?: unknown) => console.error(message, meta ?? '') };
const olderBundle = await bundleWorkflowCode({ workflowsPath: join(tree, 'workflows'), logger: silent });

const { db, client, workerConnection, close } = await startRecording('histories');
const taskQueue = 'histories-old-worker';
const gate = createGateClient(client, { taskQueue });
const app = await buildApp({ db, gate, publicUrl: 'http://gatehouse.test', logLevel: 'silent', secrets: testSecrets });
const org = await createOrganization(db, { slug: 'histories', name: 'Histories', plan: 'business' });
await setPolicySet(db, org.id, policy, 'histories');

// A day to expire, a re-read every half second: the older worker reads `withdrawn` several times in seconds.
const workerOf = (workflowBundle?: { code: string }) =>
  createWorker({ connection: workerConnection, namespace: 'default', taskQueue, db, secrets: testSecrets, reviewExpiryMs: 86_400_000, reviewRecheckMs: 500, workflowBundle });
const running = async (worker: Worker) => ({ worker, done: worker.run() });
const stop = async ({ worker, done }: Awaited<ReturnType<typeof running>>) => {
  worker.shutdown();
  await done;
};

const call = async (url: string, token: string, payload: unknown) => {
  const response = await app.inject({ method: 'POST', url: `/api${url}`, headers: { authorization: `Bearer ${token}` }, payload: payload as never });
  if (response.statusCode !== 202) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return response.headers['x-gatehouse-workflow-id'] as string;
};
const write = async (name: string, workflowId: string) => {
  await writeHistory(client, workflowId, out(name));
  console.log(`recorded old-worker-${name} (${workflowId})`);
};

const scenarios = [
  { path: 'review-withdrawn', url: '/v1/tasks', payload: { title: 'review until the key is revoked under an older worker' } },
  {
    path: 'changeset-held-withdrawn',
    url: '/v1/changesets',
    payload: { items: [{ operation: 'tasks.create', input: { title: 'review the changeset revoked under an older worker' } }, { operation: 'tasks.create', input: { title: 'Allowed item' } }] },
  },
];

try {
  for (const { path, url, payload } of scenarios) {
    const older = await running(await workerOf(olderBundle));
    const key = await createApiKey(db, { orgId: org.id, label: `agent of ${path}`, access: 'read_write' });
    const workflowId = await call(url, key.token, payload);
    const revoked = await revokeApiKey(db, withdrawReviewsOfKey, org.id, key.key.id);
    if (revoked.withdrawn.length !== 1) throw new Error(`${path}: withdrew ${revoked.withdrawn.length}`);
    await gate.reviewsChanged([workflowId]);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await stop(older);
    const handle = client.workflow.getHandle(workflowId);
    if ((await handle.describe()).status.name !== 'RUNNING') throw new Error(`${path}: the older worker ended the run; nothing to record`);
    await write(`${path}-kept-waiting`, workflowId);

    const current = await running(await workerOf());
    const result = await handle.result();
    await stop(current);
    if (result.resolution?.status !== 'withdrawn') throw new Error(`${path}: the current worker ended it ${JSON.stringify(result.resolution)}`);
    await write(`${path}-then-ended`, workflowId);
  }
} finally {
  await app.close();
  await close();
  rmSync(tree, { recursive: true, force: true });
}
