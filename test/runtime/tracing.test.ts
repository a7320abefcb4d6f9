import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import protos from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../runtime/config';
import { serveMetrics } from '../../runtime/metrics-server';
import { startTracing, tracingWanted } from '../../runtime/tracing';
import { bundleWorkflows } from '../../worker';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// One request, one trace: the api's HTTP span, the Temporal client's start, the workflow, its activities and the
// PostgreSQL queries under them, exported here to memory rather than to a collector.

const exporter = new InMemorySpanExporter();
const tracing = startTracing('gatehouse-test', { spanProcessor: new SimpleSpanProcessor(exporter) });

let h: Harness;
let acme: TestOrganization;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness({ tracing });
  acme = await h.createOrganization();
  baseUrl = await h.listen();
});

afterAll(async () => {
  await h?.close();
  await tracing.shutdown();
});

/** The span's ancestors in its trace, nearest first (as far as the exported spans reach). */
function ancestorsOf(span: ReadableSpan, spans: ReadableSpan[]): ReadableSpan[] {
  const byId = new Map(spans.map((each) => [each.spanContext().spanId, each]));
  const chain: ReadableSpan[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) {
    chain.push(parent);
  }
  return chain;
}

/** The trace as an indented outline, for a failure's message. */
function outline(spans: ReadableSpan[]): string {
  const byStart = [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  return byStart.map((span) => `${'  '.repeat(ancestorsOf(span, spans).length)}${span.name}`).join('\n');
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acme.readWriteToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('traces', () => {
  it('follow one gated write from the api through Temporal to the worker and PostgreSQL', async () => {
    exporter.reset();
    const response = await post('/api/v1/tasks', { title: 'a traced write' });
    expect(response.status, await response.clone().text()).toBe(201);
    const workflowId = response.headers.get('x-gatehouse-workflow-id')!;

    // The workflow's spans leave the sandbox when its task completes: wait for them.
    let trace: ReadableSpan[] = [];
    let request: ReadableSpan | undefined;
    await vi.waitFor(
      () => {
        const spans = exporter.getFinishedSpans();
        request = spans.find((span) => span.kind === SpanKind.SERVER && span.attributes['http.target'] === '/api/v1/tasks');
        expect(request).toBeDefined();
        trace = spans.filter((span) => span.spanContext().traceId === request!.spanContext().traceId);
        expect(trace.some((span) => span.name === 'RunWorkflow:gatedWriteV3')).toBe(true);
      },
      { timeout: 15_000, interval: 200 },
    );
    const described = outline(trace);

    // The api's span, named by its route; the key's lookup is a query under it.
    expect(request!.name, described).toBe('POST /api/v1/tasks');
    expect(request!.attributes['http.route']).toBe('/api/v1/tasks');
    expect(request!.attributes['http.status_code']).toBe(201);
    expect(trace.some((span) => span.name.startsWith('pg.query') && ancestorsOf(span, trace)[0] === request), described).toBe(true);

    // The client's start is a child of the request; the workflow, of the start.
    // (The api starts the workflow with its first update, gateAnswer, which waits for the decision.)
    const start = trace.find((span) => span.name === 'UpdateWithStartWorkflow:gateAnswer');
    expect(start, described).toBeDefined();
    expect(ancestorsOf(start!, trace)).toContain(request);
    const run = trace.find((span) => span.name === 'RunWorkflow:gatedWriteV3')!;
    expect(start!.attributes['temporalWorkflowId']).toBe(workflowId);
    expect(run.attributes['workflowId']).toBe(workflowId);
    expect(ancestorsOf(run, trace)).toContain(start);

    // The activities ran under the workflow, and their queries under them.
    const activities = trace.filter((span) => span.name.startsWith('RunActivity:'));
    expect(activities.length, described).toBeGreaterThan(0);
    for (const activity of activities) expect(ancestorsOf(activity, trace), described).toContain(run);
    const queriesOfActivities = trace.filter((span) => span.name.startsWith('pg.query') && ancestorsOf(span, trace).some((each) => activities.includes(each)));
    expect(queriesOfActivities.length, described).toBeGreaterThan(0);
    expect(queriesOfActivities.every((span) => span.attributes['db.system'] === 'postgresql')).toBe(true);

    // The task the write made is what the trace is about: its insert is among the activity's statements.
    expect(queriesOfActivities.some((span) => /insert into tasks/i.test(String(span.attributes['db.statement']))), described).toBe(true);
  });

  it('leave probes and scrapes out', async () => {
    const metrics = (await serveMetrics(loadConfig({ METRICS_PORT: '0' }), 'api', h.db, () => {}))!;
    try {
      exporter.reset();
      expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
      await fetch(`${baseUrl}/readyz`);
      expect((await fetch(metrics.url)).status).toBe(200);
      const me = await fetch(`${baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${acme.readWriteToken}` } });
      expect(me.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Only the request someone would follow.
      expect(exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER).map((span) => span.name)).toEqual(['GET /api/v1/me']);
    } finally {
      await metrics.close();
    }
  });
});

describe('turning traces on and off', () => {
  it('is off unless the OTEL_* variables ask for it', () => {
    expect(tracingWanted({})).toBe(false);
    expect(loadConfig({}).tracing).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(true);
    // A typo stops the start with a line that names the variable, rather than failing deep in the SDK.
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'otlp,jaeger' })).toThrow('OTEL_TRACES_EXPORTER: otlp, console or none');
  });

  // A held write may wait for weeks while an operator turns traces on or off: the workflow's own commands must
  // not depend on whether its interceptors are there.
  it('changes nothing a workflow does: histories recorded without traces replay with them, and the reverse', async () => {
    const { History } = protos.temporal.api.history.v1;
    const folder = new URL('../histories/', import.meta.url);
    const traced = { code: (await bundleWorkflows([tracing.temporal])).code };
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.json'))) {
      const history = History.fromObject(JSON.parse(readFileSync(new URL(file, folder), 'utf8')));
      await Worker.runReplayHistory({ workflowBundle: traced, plugins: [tracing.temporal] }, history, file);
    }

    const response = await post('/api/v1/tasks', { title: 'review this traced write' });
    expect(response.status).toBe(202);
    const { review } = (await response.json()) as { review: { id: string } };
    const workflowId = response.headers.get('x-gatehouse-workflow-id')!;
    const approval = await h.request({ method: 'POST', url: `/api/v1/reviews/${review.id}/approve`, token: acme.reviewerToken, payload: {} });
    expect(approval.statusCode).toBe(200);
    const handle = h.temporal.workflow.getHandle(workflowId);
    await handle.result();
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, await handle.fetchHistory(), workflowId);
  });
});
