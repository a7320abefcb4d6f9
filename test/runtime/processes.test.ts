import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../../runtime/temporal-dev-server';
import { newId } from '../../domain/kit/ids';
import { cleanEnv, runCli, startCli } from '../support/cli';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';
import { testSecrets, testSecretsEnv } from '../support/secrets';

let h: Harness;
let org: TestOrganization;
const processes: ReturnType<typeof startCli>[] = [];
const apiUrls: string[] = [];
/** A webhook endpoint as the version before sealed secrets stored it: its secret in plain text. */
const olderEndpoint = { id: newId('whk'), secret: 'whsec_c3RvcmVkIGJ5IGFuIG9sZGVyIHZlcnNpb24h' };

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
  await h.db.query(`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret, enabled) VALUES ($1, $2, 'https://example.com/older', '{policy.changed}', $3, false)`, [
    olderEndpoint.id,
    org.organization.id,
    olderEndpoint.secret,
  ]);
  const taskQueue = `processes-${Date.now()}`;
  const shared = { ...testSecretsEnv, DATABASE_URL: inject('databaseUrl'), TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_TASK_QUEUE: taskQueue };
  const workers = [startCli(['worker', '--json'], cleanEnv(shared)), startCli(['worker', '--json'], cleanEnv(shared))];
  const apis = await Promise.all(
    [0, 1].map(async () => {
      const port = await freePort();
      return startCli(['api', '--json'], cleanEnv({ ...shared, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }));
    }),
  );
  processes.push(...workers, ...apis);
  await Promise.all(workers.map((worker) => worker.ready));
  for (const api of apis) apiUrls.push((await api.ready).api_url);
}, 120_000);

afterAll(async () => {
  for (const process of processes) process.child.kill('SIGTERM');
  const codes = await Promise.all(processes.map((process) => process.exited));
  await h?.close();
  expect(codes).toEqual(processes.map(() => 0));
});

const post = (apiUrl: string, title: string) =>
  fetch(`${apiUrl}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });

describe('separate api and worker processes', () => {
  it('several apis and workers share the work: gated writes through either api', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(apiUrls[i % 2]!, `multi ${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM tasks WHERE org_id = $1 AND title LIKE 'multi %'`, [org.organization.id]);
    expect(rows[0].n).toBe(8);
  });

  it('a write held through one api is approved through the other', async () => {
    const held = await post(apiUrls[0]!, 'review across processes');
    expect(held.status).toBe(202);
    const { review } = (await held.json()) as { review: { id: string } };
    const approved = await fetch(`${apiUrls[1]}/v1/reviews/${review.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.reviewerToken}` },
    });
    expect(approved.status).toBe(200);
    expect(((await approved.json()) as { data: { result: { title: string } } }).data.result.title).toBe('review across processes');
  });

  it('their start sealed a secret an older version stored in plain text (four processes starting at once: once)', async () => {
    const { rows } = await h.db.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [olderEndpoint.id]);
    expect(rows[0].secret).toMatch(/^sealed:v1:test:/);
    expect(testSecrets.open(rows[0].secret, `webhook_endpoints.secret:${olderEndpoint.id}`)).toBe(olderEndpoint.secret);
  });

  it('api and worker refuse to start without SECRETS_ENCRYPTION_KEYS, and say how to make one', async () => {
    const servers = { DATABASE_URL: inject('databaseUrl'), TEMPORAL_ADDRESS: inject('temporalAddress') };
    for (const kind of ['api', 'worker']) {
      const refused = await runCli([kind, '--json'], cleanEnv(servers));
      expect(refused.code, kind).toBe(1);
      expect(refused.json.error.code).toBe('invalid_config');
      expect(refused.json.error.message).toContain(`gatehouse ${kind} needs SECRETS_ENCRYPTION_KEYS`);
      expect(refused.json.error.message).toContain('`gatehouse secrets key` prints one');
      expect(refused.json.error.message).toContain('give every api, worker and the CLI the same list');
    }
    const human = await runCli(['api'], cleanEnv(servers));
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^gatehouse: gatehouse api needs SECRETS_ENCRYPTION_KEYS/);
  }, 150_000);

  it('api and worker refuse to start without their servers', async () => {
    const api = await runCli(['api', '--json'], cleanEnv({ DATABASE_URL: inject('databaseUrl') }));
    expect(api.code).toBe(1);
    expect(api.json.error.message).toContain('TEMPORAL_ADDRESS');
    const worker = await runCli(['worker', '--json'], cleanEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), GATEHOUSE_DATA_DIR: '/nonexistent-gatehouse' }));
    expect(worker.code).toBe(1);
    expect(worker.json.error.message).toContain('DATABASE_URL');
  });
});
