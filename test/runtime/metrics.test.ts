import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { serveMetrics, type MetricsServer } from '../../runtime/metrics-server';
import { loadConfig } from '../../runtime/config';
import { createApiKey } from '../../domain/identity/api-keys';
import { freePort } from '../../runtime/temporal-dev-server';
import { cleanEnv, startCli } from '../support/cli';
import { testSecretsEnv } from '../support/secrets';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let acme: TestOrganization;
let metrics: MetricsServer;

/** The Temporal SDK's worker metrics that the compose deployment's Grafana dashboard charts. */
const temporalDashboardMetrics = [
  ...new Set(readFileSync(new URL('../../deploy/grafana/dashboards/gatehouse.json', import.meta.url), 'utf8').match(/\btemporal_\w+/g)),
];
beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization();
  // As `gatehouse api` serves them, on a port of its own (0: any free one) on loopback.
  metrics = (await serveMetrics(loadConfig({ METRICS_PORT: '0' }), 'api', h.db, (line) => console.error(line)))!;
});

afterAll(async () => {
  await metrics?.close();
  await h.close();
});

/** The samples of a scrape, by metric name with its labels as Prometheus writes them. */
async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(metrics.url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const write = (title: string, token = acme.readWriteToken) => h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });

describe('Prometheus metrics', () => {
  it('are served on their own loopback port, not on the api', async () => {
    expect(metrics.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    expect((await fetch(metrics.url.replace('/metrics', '/other'))).status).toBe(404);
  });

  it("include Node's own: resident memory and the event loop's delay since the last scrape", async () => {
    await scrape();
    // A loop blocked for 300 ms shows (at least 250 ms of it: the delay histogram samples at its own resolution) in
    // the next scrape's maximum, and not in the one after (each scrape resets it).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const blockedUntil = Date.now() + 300;
    while (Date.now() < blockedUntil);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const blocked = await scrape();
    expect(blocked.get('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(blocked.get('nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.25);
    expect(blocked.get('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await scrape()).get('nodejs_eventloop_lag_max_seconds')).toBeLessThan(0.25);
  });

  it('count a known sequence of gated writes and calls exactly', async () => {
    const before = await scrape();
    const delta = (after: Map<string, number>, sample: string) => (after.get(sample) ?? 0) - (before.get(sample) ?? 0);

    for (const title of ['one', 'two', 'three']) expect((await write(title)).statusCode).toBe(201);
    // Sent again with its Idempotency-Key: the earlier answer, not another write, so not counted again.
    const keyed = () => h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, headers: { 'idempotency-key': 'metrics-once' }, payload: { title: 'once' } });
    expect((await keyed()).statusCode).toBe(201);
    expect((await keyed()).statusCode).toBe(201);
    expect((await write('deny this')).statusCode).toBe(403);
    const held = [await write('review one'), await write('review two')].map((response) => json(response).review.id as string);
    const decide = (id: string, verdict: 'approve' | 'deny') =>
      h.request({ method: 'POST', url: `/api/v1/reviews/${id}/${verdict}`, token: acme.reviewerToken, payload: {} });
    expect((await decide(held[0]!, 'approve')).statusCode).toBe(200);
    expect((await decide(held[1]!, 'deny')).statusCode).toBe(200);
    const mcp = await h.mcp(acme.readWriteToken);
    expect((await mcp.callTool({ name: 'create_task', arguments: { title: 'over MCP' } })).isError).toBeFalsy();
    expect((await h.request({ method: 'GET', url: '/api/v1/tasks', token: acme.readOnlyToken })).statusCode).toBe(200);

    const after = await scrape();
    const writes = (labels: string) => delta(after, `gatehouse_gated_writes_total{operation="tasks.create",${labels}}`);
    expect(writes('interface="rest",answer="applied"')).toBe(4);
    expect(writes('interface="rest",answer="denied"')).toBe(1);
    expect(writes('interface="rest",answer="pending_review"')).toBe(2);
    expect(writes('interface="mcp",answer="applied"')).toBe(1);
    expect(delta(after, 'gatehouse_gated_write_answer_seconds_count{answer="applied"}')).toBe(5);
    expect(delta(after, 'gatehouse_gated_write_answer_seconds_count{answer="pending_review"}')).toBe(2);
    // Every answer is within the last bucket's 30 s.
    expect(delta(after, 'gatehouse_gated_write_answer_seconds_bucket{le="30",answer="applied"}')).toBe(5);
    // Calls: the six REST writes, the two decisions and the read; over MCP the tool call (the session's initialize
    // and tools/list are not calls of the catalog).
    // Calls count every answer, the replay too.
    expect(delta(after, 'gatehouse_calls_total{interface="rest",outcome="applied"}')).toBe(5);
    expect(delta(after, 'gatehouse_calls_total{interface="rest",outcome="policy_denied"}')).toBe(1);
    expect(delta(after, 'gatehouse_calls_total{interface="rest",outcome="pending_review"}')).toBe(2);
    expect(delta(after, 'gatehouse_calls_total{interface="rest",outcome="ok"}')).toBe(3);
    expect(delta(after, 'gatehouse_calls_total{interface="mcp",outcome="applied"}')).toBe(1);
  });

  it('count the requests the limits refuse, by interface and the limit that refused them', async () => {
    // An organization on a plan of its own: two REST requests a minute; another with two requests a day.
    const plan = async (name: string, dailyBudget: number, restPerMinute: number) => {
      await h.db.query(
        `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
         VALUES ($1, $2, $3, 1000, 1000, '{}', 'a plan of the metrics test')`,
        [name, dailyBudget, restPerMinute],
      );
      return name;
    };
    const suffix = Date.now().toString(36);
    const perMinute = await h.createOrganization({ plan: await plan(`metrics-minute-${suffix}`, 100_000, 2) });
    const daily = await h.createOrganization({ plan: await plan(`metrics-day-${suffix}`, 2, 1000) });
    const keyDaily = await createApiKey(h.db, { orgId: acme.organization.id, label: 'metrics key day', access: 'read', dailyRequestBudget: 2 });
    const keyOperation = await createApiKey(h.db, {
      orgId: acme.organization.id,
      label: 'metrics key writes',
      access: 'read_write',
      writeCaps: { 'tasks.create': 2 },
      writeOperations: ['tasks.create'],
    });
    const read = async (token: string) => (await h.request({ method: 'GET', url: '/api/v1/tasks', token })).statusCode;
    const before = await scrape();
    const statuses: Record<string, number[]> = { per_minute: [], daily: [], key_daily: [], key_operation_daily: [] };
    for (let n = 0; n < 5; n++) {
      statuses.per_minute!.push(await read(perMinute.readOnlyToken));
      statuses.daily!.push(await read(daily.readOnlyToken));
      statuses.key_daily!.push(await read(keyDaily.token));
      statuses.key_operation_daily!.push((await write(`capped ${n}`, keyOperation.token)).statusCode);
    }
    expect(statuses).toEqual({
      per_minute: [200, 200, 429, 429, 429],
      daily: [200, 200, 429, 429, 429],
      key_daily: [200, 200, 429, 429, 429],
      key_operation_daily: [201, 201, 429, 429, 429],
    });
    // Each refusal under the label the README names, and no refusal under any other.
    const after = await scrape();
    const refusals = (sample: Map<string, number>) =>
      Object.fromEntries([...sample].filter(([name]) => name.startsWith('gatehouse_limit_refusals_total{')).map(([name, value]) => [name, value]));
    const [was, now] = [refusals(before), refusals(after)];
    const moved = Object.fromEntries(Object.keys(now).filter((name) => now[name] !== (was[name] ?? 0)).map((name) => [name, now[name]! - (was[name] ?? 0)]));
    expect(moved).toEqual({
      'gatehouse_limit_refusals_total{interface="rest",limit="per_minute"}': 3,
      'gatehouse_limit_refusals_total{interface="rest",limit="daily"}': 3,
      'gatehouse_limit_refusals_total{interface="rest",limit="key_daily"}': 3,
      'gatehouse_limit_refusals_total{interface="rest",limit="key_operation_daily"}': 3,
    });
  });

  it('read the reviews by status from the database when scraped', async () => {
    // Other test files share the database: compare with a count taken around the scrape, until nothing moved.
    const counts = async () => {
      const { rows } = await h.db.query(
        `SELECT CASE WHEN status = 'pending' AND expires_at <= now() THEN 'expired' ELSE status END AS status, count(*)::int AS n FROM reviews GROUP BY 1`,
      );
      return Object.fromEntries(rows.map((row) => [row.status, row.n])) as Record<string, number>;
    };
    for (let attempt = 0; ; attempt++) {
      const first = await counts();
      const scraped = await scrape();
      const last = await counts();
      if (JSON.stringify(first) !== JSON.stringify(last) && attempt < 10) continue;
      for (const status of ['pending', 'approved', 'denied', 'expired']) {
        expect(scraped.get(`gatehouse_reviews{status="${status}"}`), status).toBe(last[status] ?? 0);
      }
      expect(last.approved).toBeGreaterThanOrEqual(1);
      expect(last.denied).toBeGreaterThanOrEqual(1);
      break;
    }
  });

  it("of a separate worker process: Gatehouse's and the Temporal SDK's, each on its own port", async () => {
    const [port, temporalPort] = [await freePort(), await freePort()];
    const taskQueue = `metrics-worker-${process.pid}`;
    const worker = startCli(
      ['worker', '--json'],
      cleanEnv({
        ...testSecretsEnv,
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: taskQueue,
        METRICS_PORT: String(port),
        TEMPORAL_METRICS_PORT: String(temporalPort),
      }),
    );
    try {
      const ready = await worker.ready;
      expect(ready).toMatchObject({ metrics_url: `http://127.0.0.1:${port}/metrics`, temporal_metrics_url: `http://127.0.0.1:${temporalPort}/metrics` });
      expect(await (await fetch(ready.metrics_url)).text()).toMatch(/^gatehouse_reviews\{status="pending"\} \d+$/m);
      expect(await (await fetch(ready.metrics_url)).text()).toMatch(/^nodejs_eventloop_lag_p99_seconds [\d.e-]+$/m);
      // The SDK's own, once it has run a workflow and its activity: the names the compose deployment's Grafana
      // dashboard charts.
      await h.temporal.workflow.execute('pruneRetention', { taskQueue, workflowId: `${taskQueue}-prune` });
      await vi.waitFor(
        async () => {
          const text = await (await fetch(ready.temporal_metrics_url)).text();
          for (const name of temporalDashboardMetrics) expect(text, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
        },
        { timeout: 20_000, interval: 500 },
      );
    } finally {
      worker.child.kill('SIGTERM');
    }
    expect(await worker.exited).toBe(0);
  });
});
