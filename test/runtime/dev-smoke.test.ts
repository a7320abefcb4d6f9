import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../../runtime/temporal-dev-server';
import { cleanEnv, runCli, startCli } from '../support/cli';

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-dev-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A stand-in for an OpenTelemetry collector: OTLP/HTTP in JSON, the spans it was sent (service, trace, name). */
async function otlpReceiver() {
  const spans: { service: string; traceId: string; name: string }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const sent = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { traceId: string; name: string }[] }[] }[];
      };
      for (const { resource, scopeSpans } of sent.resourceSpans ?? []) {
        const service = resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
        for (const { spans: sentSpans } of scopeSpans) for (const { traceId, name } of sentSpans) spans.push({ service, traceId, name });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const collector = await otlpReceiver();
afterAll(() => collector.close());

async function devEnv() {
  return cleanEnv({
    // Traces on, as an operator turns them on, to the stand-in collector, sent at once.
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    GATEHOUSE_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    TEMPORAL_DEV_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    CODEC_PORT: String(await freePort()),
    TEMPORAL_CLI: inject('temporalCliPath'),
  });
}

async function stop(run: ReturnType<typeof startCli>) {
  run.child.kill('SIGTERM');
  expect(await run.exited).toBe(0);
}

describe('gatehouse dev on embedded defaults', () => {
  it('starts everything, makes a gated write, and finds its data again on the next start', async () => {
    const env = await devEnv();
    const first = startCli(['dev', '--json'], env);
    let token: string;
    let taskId: string;
    let cookie = '';
    let secretsKeys: string;
    try {
      const info = await first.ready;
      expect(info.api_url).toBe(`http://localhost:${env.PORT}/api`);
      expect(info.temporal_ui_url).toBe(`http://localhost:${env.TEMPORAL_UI_PORT}`);
      expect(info.database).toContain('embedded');
      expect(info.demo.organization.slug).toBe('demo');
      for (const field of ['read_write_token', 'read_only_token']) expect(info.demo[field]).toMatch(/^gate_k_/);
      expect(info.demo.reviewer.token).toMatch(/^gate_p_/);
      token = info.demo.read_write_token;

      const created = await fetch(`${info.api_url}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Smoke test task', status: 'todo' }),
      });
      expect(created.status).toBe(201);
      taskId = ((await created.json()) as { data: { id: string } }).data.id;
      const workflowId = created.headers.get('x-gatehouse-workflow-id')!;

      // Temporal holds the write encrypted (the key npm start made), and the codec it serves opens it.
      const connection = await Connection.connect({ address: info.temporal_address });
      try {
        const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
        const [input] = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
        expect(Buffer.from(input!.metadata!.encoding!).toString()).toBe('binary/encrypted');
        const decoded = await fetch(`${info.codec_url}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            payloads: [{ metadata: Object.fromEntries(Object.entries(input!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])), data: Buffer.from(input!.data!).toString('base64') }],
          }),
        });
        const { payloads } = (await decoded.json()) as { payloads: { data: string }[] };
        expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toContain('Smoke test task');
      } finally {
        await connection.close();
      }

      // One trace from the api's request to the workflow the worker ran, both in this one process.
      await vi.waitFor(
        () => {
          const request = collector.spans.find((span) => span.name === 'POST /api/v1/tasks');
          expect(request?.service).toBe('gatehouse');
          expect(collector.spans.filter((span) => span.traceId === request!.traceId).map((span) => span.name)).toEqual(
            expect.arrayContaining(['UpdateWithStartWorkflow:gateAnswer', 'RunWorkflow:gatedWriteV3', 'RunActivity:decideAndApplyGatedWrite']),
          );
        },
        { timeout: 15_000, interval: 200 },
      );

      const readOnly = await fetch(`${info.api_url}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.demo.read_only_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'nope' }),
      });
      expect(readOnly.status).toBe(403);

      const ui = await fetch(info.temporal_ui_url);
      expect(ui.status).toBe(200);
      // The Web UI decrypts the payloads through the codec npm start serves, with the key it made.
      expect(info.codec_url).toBe(`http://localhost:${env.CODEC_PORT}`);
      const settings = (await (await fetch(`${info.temporal_ui_url}/api/v1/settings`)).json()) as { Codec: { Endpoint: string } };
      expect(settings.Codec.Endpoint).toBe(info.codec_url);
      expect(statSync(join(dataDir, 'payload-keys')).mode & 0o777).toBe(0o600);

      // The first start's links let the demo owner and reviewer into the console.
      const origin = `http://localhost:${env.PORT}`;
      for (const person of [info.demo.owner, info.demo.reviewer]) {
        const link = new URL(person.set_password_url);
        expect(`${link.origin}${link.pathname}`).toBe(`${origin}/set-password`);
        const page = await fetch(link, { headers: { accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<div id="root">');
        const set = await fetch(`${origin}/console/api/password`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: link.hash.slice(1), password: 'demo people sign in' }),
        });
        expect(set.status).toBe(200);
        const signedIn = await fetch(`${origin}/console/api/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ organization: 'demo', email: person.email, password: 'demo people sign in' }),
        });
        expect(signedIn.status).toBe(201);
        expect(((await signedIn.json()) as { data: { person: { role: string } } }).data.person.role).toBe(person.role);
        cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      }
      expect(info.demo.owner.role).toBe('owner');

      // The review queue is live on the embedded database too: a held write (the default policy holds deletes)
      // reaches a watching page as an event.
      const live = new AbortController();
      const stream = await fetch(`${origin}/console/api/live`, { headers: { cookie }, signal: live.signal });
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      const reader = stream.body!.getReader();
      let received = '';
      const readUntil = async (needle: string) => {
        while (!received.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${needle}`);
          received += new TextDecoder().decode(value);
        }
      };
      await readUntil('event: ready');
      const held = await fetch(`${info.api_url}/v1/tasks/${taskId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect(held.status).toBe(202);
      await readUntil('event: reviews');
      live.abort();

      // The CLI reaches the running service's embedded database.
      const orgs = await runCli(['org', 'show', '--json'], env);
      expect(orgs.json.map((o: { slug: string }) => o.slug)).toEqual(['demo']);

      // The stored secrets' key, made in the data folder as the payload key is; the CLI on the embedded database
      // seals with it too.
      const keysFile = join(dataDir, 'secrets-keys');
      expect(info.secrets_keys_from).toBe(keysFile);
      expect(statSync(keysFile).mode & 0o777).toBe(0o600);
      secretsKeys = readFileSync(keysFile, 'utf8');
      const keyId = secretsKeys.split(':')[0]!;
      expect(keyId).toMatch(/^dev-\d{4}-\d{2}-\d{2}$/);
      const sealed = await runCli(['secrets', 'reseal', '--json'], env);
      expect(sealed.json).toMatchObject({ sealing_key: keyId, sealed: 0, resealed: 0, unreadable: [], plain: 0 });
    } finally {
      await stop(first);
    }

    // At the default log level this time: what the CLI prints is its answer alone (stdout parses as one JSON
    // document, which a "Server listening" log line in it would break), as the banner is without --json.
    const second = startCli(['dev', '--json'], { ...env, LOG_LEVEL: 'info' });
    try {
      const info = await second.ready;
      expect(info.demo).toBeNull();
      // The same key again: what the first start sealed still opens.
      expect(info.secrets_keys_from).toBe(join(dataDir, 'secrets-keys'));
      expect(readFileSync(join(dataDir, 'secrets-keys'), 'utf8')).toBe(secretsKeys!);
      const listed = await fetch(`${info.api_url}/v1/tasks`, { headers: { authorization: `Bearer ${token!}` } });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { data: { id: string }[] }).data.map((t: { id: string }) => t.id)).toContain(taskId!);
    } finally {
      await stop(second);
    }
  }, 180_000);
});
