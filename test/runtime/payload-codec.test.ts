import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import protos from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../runtime/config';
import { serveCodec, type CodecServer } from '../../runtime/codec-server';
import { EncryptionCodec, encryptingDataConverter, encryptingFailureConverterPath, formatPayloadKeys, newPayloadKey, parsePayloadKeys } from '../../runtime/payload-codec';
import { bundleWorkflows } from '../../worker';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Temporal holds ciphertext: a gated write's record, its answer and the review's messages are encrypted before they
// leave the api or the worker, and the Web UI reads them through the codec endpoint.

const { History } = protos.temporal.api.history.v1;
const key = newPayloadKey('k1');
const codec = new EncryptionCodec([key]);
const text = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());
const payloadOf = (value: unknown) => defaultPayloadConverter.toPayload(value);

describe('the encryption codec', () => {
  it('encrypts a payload whole, metadata too, and gives it back', async () => {
    const plain = payloadOf({ title: 'quarterly numbers' });
    const [sealed] = await codec.encode([plain]);
    expect(text(sealed!.metadata!.encoding)).toBe('binary/encrypted');
    expect(text(sealed!.metadata!['encryption-key-id'])).toBe('k1');
    expect(Object.keys(sealed!.metadata!)).not.toContain('json/plain');
    expect(Buffer.from(sealed!.data!).includes('quarterly')).toBe(false);
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ title: 'quarterly numbers' });
    // A fresh nonce each time: the same value never encrypts the same way twice.
    const [again] = await codec.encode([plain]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(sealed!.data!))).toBe(false);
  });

  it('lets payloads that were never encrypted through (histories from before the key)', async () => {
    const plain = payloadOf('as it was');
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('rotates: the first key encrypts, the older ones still decrypt', async () => {
    const [old] = await codec.encode([payloadOf('old')]);
    const rotated = new EncryptionCodec([newPayloadKey('k2'), key]);
    const [fresh] = await rotated.encode([payloadOf('new')]);
    expect(text(fresh!.metadata!['encryption-key-id'])).toBe('k2');
    expect((await rotated.decode([old!, fresh!])).map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual(['old', 'new']);
    await expect(codec.decode([fresh!])).rejects.toThrow('encrypted with key "k2", which PAYLOAD_ENCRYPTION_KEYS does not hold');
  });

  it('refuses a payload that was changed, or a key id swapped for another', async () => {
    const [sealed] = await codec.encode([payloadOf('intact')]);
    const changed = Buffer.from(sealed!.data!);
    changed[20]! ^= 1;
    await expect(codec.decode([{ ...sealed!, data: changed }])).rejects.toThrow('fails its integrity check');
    const sameKeyOtherId = new EncryptionCodec([key, { id: 'k9', key: key.key }]);
    const relabelled = { ...sealed!, metadata: { ...sealed!.metadata, 'encryption-key-id': new TextEncoder().encode('k9') } };
    await expect(sameKeyOtherId.decode([relabelled])).rejects.toThrow('fails its integrity check');
  });

  it('reads PAYLOAD_ENCRYPTION_KEYS and says what is wrong with it', () => {
    const two = formatPayloadKeys([key, newPayloadKey('k0')]);
    expect(parsePayloadKeys(two).map((each) => each.id)).toEqual(['k1', 'k0']);
    expect(loadConfig({ PAYLOAD_ENCRYPTION_KEYS: two }).payloads.keys?.[0]?.key.equals(key.key)).toBe(true);
    expect(loadConfig({}).payloads.keys).toBeUndefined();
    expect(() => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: 'k1:c2hvcnQ=' })).toThrow('key "k1" is 5 bytes; it must be 32');
    expect(() => loadConfig({ CODEC_ALLOWED_ORIGINS: '*' })).toThrow('CODEC_ALLOWED_ORIGINS');
    // A key pasted without its id is refused without being echoed.
    const pasted = key.key.toString('base64');
    expect(() => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: pasted })).toThrow('entry 1 is not id:key');
    try {
      loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `${formatPayloadKeys([key])},${pasted}` });
    } catch (error) {
      expect((error as Error).message).toContain('entry 2 is not id:key');
      expect((error as Error).message).not.toContain(pasted.slice(0, 6));
    }
    expect(() => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `k1:${pasted.slice(0, -4)}!!!!` })).toThrow('key "k1" is not base64');
    expect(() => loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `${formatPayloadKeys([key])},${formatPayloadKeys([key])}` })).toThrow('given twice');
  });
});

describe('gated writes with encrypted payloads, on Temporal', () => {
  let h: Harness;
  let acme: TestOrganization;
  let bundle: Promise<{ code: string }> | undefined;
  /** The workflows as an encrypting worker bundles them (with the failure converter in the sandbox). */
  const encryptingBundle = () => (bundle ??= bundleWorkflows([], { failureConverterPath: encryptingFailureConverterPath }));

  beforeAll(async () => {
    h = await startHarness({ payloadKeys: [key] });
    acme = await h.createOrganization();
  });
  afterAll(async () => h?.close());

  /** The workflow's history as Temporal stores it (fetchHistory does not decode). */
  async function storedHistory(workflowId: string) {
    const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
    return { history, bytes: Buffer.from(History.encode(History.fromObject(history)).finish()) };
  }

  it('keep the record out of Temporal in the clear, Allow and Review → approve alike', async () => {
    const allowed = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'Pay the supplier 7F3A', description: 'wire 12,400 EUR' } });
    expect(allowed.statusCode, allowed.body).toBe(201);
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'review: fire the supplier 9C1B' } });
    expect(held.statusCode, held.body).toBe(202);
    const approval = await h.request({ method: 'POST', url: `/api/v1/reviews/${json(held).review.id}/approve`, token: acme.reviewerToken, payload: { comment: 'go ahead 4D2E' } });
    expect(approval.statusCode, approval.body).toBe(200);
    await vi.waitFor(async () => {
      const tasks = json((await h.request({ method: 'GET', url: '/api/v1/tasks?limit=50', token: acme.readWriteToken })));
      expect(tasks.data.map((task: { title: string }) => task.title)).toContain('review: fire the supplier 9C1B');
    }, { timeout: 15_000, interval: 200 });

    for (const [response, secrets] of [
      [allowed, ['7F3A', '12,400']],
      [held, ['9C1B', '4D2E']],
    ] as const) {
      const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
      await h.temporal.workflow.getHandle(workflowId).result();
      const { history, bytes } = await storedHistory(workflowId);
      for (const secret of secrets) expect(bytes.includes(secret), `${secret} in ${workflowId}'s history`).toBe(false);
      // The record is in there, encrypted: the codec opens it.
      const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads! as Payload[];
      expect(input.map((payload) => text(payload.metadata!.encoding))).toEqual(['binary/encrypted']);
      expect(JSON.stringify(defaultPayloadConverter.fromPayload((await codec.decode(input))[0]!))).toContain(secrets[0]);
      // A worker with the key replays it; one without cannot read it.
      await Worker.runReplayHistory({ workflowBundle: await encryptingBundle(), dataConverter: encryptingDataConverter([key]) }, history, workflowId);
      await expect(Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, workflowId)).rejects.toThrow();
    }
    // The search attributes stay readable, for the operators' queries.
    const described = await h.temporal.workflow.getHandle(allowed.headers['x-gatehouse-workflow-id'] as string).describe();
    expect(described.searchAttributes.GatehouseOperation).toEqual(['tasks.create']);
  });

  it("keep a refusal's message, which quotes the input, out of Temporal in the clear too", async () => {
    const project = 'prj_01KZZZZZZZZZZZZZZZZZZZZZZZ';
    const refused = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'in a project that is not there', project_id: project } });
    expect(refused.statusCode, refused.body).toBeGreaterThanOrEqual(400);
    expect(refused.body).toContain(project);
    const workflowId = refused.headers['x-gatehouse-workflow-id'] as string;
    await h.temporal.workflow.getHandle(workflowId).result();
    const { bytes } = await storedHistory(workflowId);
    expect(bytes.includes(project)).toBe(false);
    expect(bytes.includes('Encoded failure')).toBe(true);
  });

  it('replay the histories recorded before encryption with the codec in place', async () => {
    const folder = new URL('../histories/', import.meta.url);
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.json'))) {
      const history = History.fromObject(JSON.parse(readFileSync(new URL(file, folder), 'utf8')));
      await Worker.runReplayHistory({ workflowBundle: await encryptingBundle(), dataConverter: encryptingDataConverter([key]) }, history, file);
    }
  });
});

describe('the codec endpoint for the Web UI', () => {
  let server: CodecServer;
  const ui = 'http://temporal-ui.test:8233';

  beforeAll(async () => {
    server = await serveCodec({ codec, host: '127.0.0.1', port: 0, allowedOrigins: [ui] });
  });
  afterAll(async () => server?.close());

  const asJson = (payload: Payload) => ({
    metadata: Object.fromEntries(Object.entries(payload.metadata!).map(([name, value]) => [name, Buffer.from(value!).toString('base64')])),
    data: Buffer.from(payload.data!).toString('base64'),
  });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers }, body });

  it('decodes what the api and the worker encrypted, and encodes as they do', async () => {
    const [sealed] = await codec.encode([payloadOf({ title: 'shown to operators' })]);
    const decoded = await post('/decode', JSON.stringify({ payloads: [asJson(sealed!), asJson(payloadOf('plain'))] }), { origin: ui });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe(ui);
    const { payloads } = (await decoded.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString())).toEqual({ title: 'shown to operators' });
    expect(Buffer.from(payloads[1]!.data, 'base64').toString()).toBe('"plain"');

    const encoded = (await (await post('/encode', JSON.stringify({ payloads: [asJson(payloadOf(7))] }))).json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    const back = (await (await post('/decode', JSON.stringify(encoded))).json()) as { payloads: { data: string }[] };
    expect(Buffer.from(back.payloads[0]!.data, 'base64').toString()).toBe('7');
    // Protobuf's JSON of no payloads, as the Temporal CLI sends it.
    expect(await (await post('/decode', '{}')).json()).toEqual({ payloads: [] });
  });

  it('hands browsers a URL they can open when it listens on every interface', async () => {
    const everywhere = await serveCodec({ codec, host: '0.0.0.0', port: 0, allowedOrigins: [ui] });
    try {
      expect(everywhere.url).toMatch(/^http:\/\/localhost:\d+$/);
    } finally {
      await everywhere.close();
    }
  });

  it("answers the Web UI's preflight, and no other origin's", async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' } });
    const fromUi = await preflight(ui);
    expect(fromUi.status).toBe(204);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(ui);
    expect(fromUi.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const fromElsewhere = await preflight('http://evil.test');
    expect(fromElsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses bad input in the envelope', async () => {
    const notJson = await post('/decode', '{"payloads": [');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    const wrongShape = await post('/decode', JSON.stringify({ payloads: [{ data: 'not base64!' }] }));
    expect(wrongShape.status).toBe(422);
    expect(((await wrongShape.json()) as { error: { message: string } }).error.message).toContain('payloads.0.data');
    const [foreign] = await new EncryptionCodec([newPayloadKey('other')]).encode([payloadOf('x')]);
    const unknownKey = await post('/decode', JSON.stringify({ payloads: [asJson(foreign!)] }));
    expect(unknownKey.status).toBe(422);
    expect(((await unknownKey.json()) as { error: { message: string } }).error.message).toContain('key "other"');
    const wrongType = await fetch(`${server.url}/decode`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(wrongType.status).toBe(415);
  });
});
