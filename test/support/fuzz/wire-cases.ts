import type { SentRequest } from './answers';
import { mcpHeaders } from './mcp-cases';
import { requestHead, type RawRequest } from './raw-http';
import type { RestFuzzContext } from './rest-cases';
import { fillPath, pathParameterNames, type RestRoute } from './rest-routes';

// Requests only a real socket can carry: what Node's HTTP parser reads before any of our code runs (the target's
// percent-encoding, the size of the header block, the method, the framing) and bodies past the limit uploaded as
// a client uploads them, the answer expected while the upload is still going.

export interface WireCase {
  /** How the report shows it. */
  request: SentRequest;
  raw: RawRequest;
  /** An /mcp request: its answer is JSON-RPC. */
  mcp?: boolean;
  expectedStatus?: number;
  /** The envelope's error code (REST). */
  expectedCode?: string;
  /** The JSON-RPC error code (MCP). */
  expectedRpcCode?: number;
  /** What the case varies, for sampling. */
  dimension?: string;
}

const megabyte = 1024 * 1024;

function wireCase(
  label: string,
  method: string,
  target: string,
  baseUrl: string,
  headers: Record<string, string>,
  options: Partial<WireCase> & { body?: RawRequest['body']; chunkSize?: number; bodyLabel?: string } = {},
): WireCase {
  const { body, chunkSize, bodyLabel, ...expectations } = options;
  const shownBody = bodyLabel ?? (body === undefined ? undefined : String(body));
  const sized = typeof body === 'string' || Buffer.isBuffer(body);
  const framed = sized && !('content-length' in headers) && !('transfer-encoding' in headers) ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers;
  return {
    request: { label, method, url: target, headers, body: shownBody },
    raw: { head: requestHead(method, target, baseUrl, framed), body, chunkSize },
    ...expectations,
  };
}

/** A JSON body of about `bytes` bytes: a task whose description is long. */
function bigTask(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ title: 'fuzz', description: 'x'.repeat(bytes) }));
}

function bigTaskLength(bytes: number): number {
  return Buffer.byteLength(JSON.stringify({ title: 'fuzz', description: '' })) + bytes;
}

/** A tools/call of create_task whose description is `bytes` long. */
function toolCall(bytes: number) {
  return { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_task', arguments: { title: 'fuzz', description: 'x'.repeat(bytes) } } };
}

/** The body framed as chunked transfer coding, in pieces of 64 KB. */
function chunked(body: Buffer): Buffer {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 65_536) {
    const piece = body.subarray(offset, offset + 65_536);
    pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(pieces);
}

export function wireCases(routes: RestRoute[], context: RestFuzzContext, baseUrl: string): WireCase[] {
  const cases: WireCase[] = [];
  const auth = { authorization: `Bearer ${context.tokenFor(routes[0]!)}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const plain = routes.filter((route) => !route.explicitOrganization);
  const withId = plain.filter((route) => pathParameterNames(route.template).length > 0);

  // Bad percent-encoding, in an id, in the organization's slug, in a fixed segment, in the query.
  const badEscapes = ['%zz', '%', '%E0%A4%A', '%C0%AF', '%ZZ%', 'a%'];
  for (const route of withId) {
    const names = pathParameterNames(route.template);
    for (const escape of badEscapes) {
      const target = fillPath(route.template, Object.fromEntries(names.map((name) => [name, escape])), true);
      cases.push(wireCase(`${route.method} ${route.template} {id}: ${escape}`, route.method, target, baseUrl, route.body ? json : auth, { body: route.body ? '{}' : undefined, dimension: `escape ${route.method} ${route.template}` }));
    }
  }
  const explicitList = routes.find((route) => route.explicitOrganization && route.template.endsWith('/tasks') && route.method === 'GET')!;
  for (const escape of badEscapes) {
    cases.push(wireCase(`GET ${explicitList.template} {slug}: ${escape}`, 'GET', fillPath(explicitList.template, { slug: escape }, true), baseUrl, auth, { dimension: 'escape slug' }));
  }
  cases.push(wireCase('a bad escape in a fixed segment', 'GET', '/api/v1/ta%zzsks', baseUrl, auth));
  cases.push(wireCase('a bad escape in the query', 'GET', '/api/v1/tasks?status=%zz&cursor=%', baseUrl, auth, { expectedStatus: 422, expectedCode: 'validation_failed' }));
  cases.push(wireCase('a NUL escape in an id', 'GET', '/api/v1/tasks/%00', baseUrl, auth));

  // Ids longer than the router takes.
  for (const route of withId.filter((candidate) => candidate.method === 'GET')) {
    for (const length of [101, 1000, 6000]) {
      const names = pathParameterNames(route.template);
      const target = fillPath(route.template, Object.fromEntries(names.map((name) => [name, 'x'.repeat(length)])));
      cases.push(wireCase(`GET ${route.template} {id} of ${length} characters`, 'GET', target, baseUrl, auth, { dimension: `long id ${route.template}` }));
    }
  }
  cases.push(wireCase('a slug of 101 characters', 'GET', fillPath(explicitList.template, { slug: 'x'.repeat(101) }), baseUrl, auth));

  // Header blocks past Node's limit (16 KB): 431, in the envelope.
  for (const size of [20_000, 30_000, 40_000]) {
    const search = `?search=${'q'.repeat(size)}`;
    cases.push(wireCase(`a query of ${size / 1000} KB`, 'GET', `/api/v1/customers${search}`, baseUrl, auth, { expectedStatus: 431 }));
    cases.push(wireCase(`a query of ${size / 1000} KB on the explicit shape`, 'GET', `${fillPath(explicitList.template, { slug: context.slug })}${search}`, baseUrl, auth, { expectedStatus: 431 }));
    cases.push(wireCase(`a query of ${size / 1000} KB on an unknown route`, 'GET', `/api/v1/nowhere${search}`, baseUrl, auth, { expectedStatus: 431 }));
  }
  cases.push(wireCase('a header of 20 KB', 'GET', '/api/v1/me', baseUrl, { ...auth, 'x-fuzz': 'h'.repeat(20_000) }, { expectedStatus: 431 }));
  cases.push(wireCase('an Authorization header of 20 KB', 'GET', '/api/v1/me', baseUrl, { authorization: `Bearer ${'a'.repeat(20_000)}` }, { expectedStatus: 431 }));
  cases.push(wireCase('a query of 30 KB on POST /mcp', 'POST', `/mcp?fuzz=${'q'.repeat(30_000)}`, baseUrl, mcpHeaders(context.tokenFor(routes[0]!)), { body: '{}', expectedStatus: 431 }));

  // Bodies past the limit (1 MB), uploaded: 413 in the envelope, never a reset connection. Each twice, as the
  // reset came and went.
  const task = withId.find((route) => route.method === 'PATCH' && route.template === '/v1/tasks/{id}')!;
  const taskUrl = fillPath(task.template, { id: context.recordId(task) });
  const mcp = mcpHeaders(context.tokenFor(routes[0]!));
  for (const attempt of [1, 2]) {
    for (const [label, bytes] of [['1.5 MB', 1.5 * megabyte], ['8 MB', 8 * megabyte]] as const) {
      const body = () => bigTask(bytes);
      const bodyLabel = `<${label} of JSON>`;
      const tooLarge = { expectedStatus: 413, expectedCode: 'payload_too_large' };
      const lengthOf = { 'content-length': String(bigTaskLength(bytes)) };
      cases.push(wireCase(`POST /v1/tasks, ${label} at once (${attempt})`, 'POST', '/api/v1/tasks', baseUrl, { ...json, ...lengthOf }, { body, bodyLabel, ...tooLarge, dimension: 'upload POST /v1/tasks' }));
      cases.push(wireCase(`POST /v1/tasks, ${label} in 64 KB writes (${attempt})`, 'POST', '/api/v1/tasks', baseUrl, { ...json, ...lengthOf }, { body, chunkSize: 65_536, bodyLabel, ...tooLarge, dimension: 'upload POST /v1/tasks' }));
      cases.push(wireCase(`POST /v1/tasks, ${label} chunked (${attempt})`, 'POST', '/api/v1/tasks', baseUrl, { ...json, 'transfer-encoding': 'chunked' }, { body: () => chunked(body()), chunkSize: 65_536 + 8, bodyLabel, ...tooLarge, dimension: 'upload POST /v1/tasks chunked' }));
      cases.push(wireCase(`PATCH /v1/tasks/{id}, ${label} in 64 KB writes (${attempt})`, 'PATCH', taskUrl, baseUrl, { ...json, ...lengthOf }, { body, chunkSize: 65_536, bodyLabel, ...tooLarge, dimension: 'upload PATCH' }));
      const call = () => Buffer.from(JSON.stringify(toolCall(bytes)));
      cases.push(wireCase(`POST /mcp, ${label} in 64 KB writes (${attempt})`, 'POST', '/mcp', baseUrl, { ...mcp, 'content-length': String(Buffer.byteLength(JSON.stringify(toolCall(0))) + bytes) }, { body: call, chunkSize: 65_536, bodyLabel, mcp: true, expectedStatus: 413, dimension: 'upload /mcp' }));
      cases.push(wireCase(`POST /mcp, ${label} chunked (${attempt})`, 'POST', '/mcp', baseUrl, { ...mcp, 'transfer-encoding': 'chunked' }, { body: () => chunked(call()), chunkSize: 65_536 + 8, bodyLabel, mcp: true, expectedStatus: 413, dimension: 'upload /mcp chunked' }));
    }
  }
  const atTheLimit = () => Buffer.from(JSON.stringify({ title: 'fuzz', description: 'x'.repeat(megabyte - 40) }).padEnd(megabyte, ' '));
  cases.push(wireCase('POST /v1/tasks, exactly 1 MB', 'POST', '/api/v1/tasks', baseUrl, { ...json, 'content-length': String(megabyte) }, { body: atTheLimit, bodyLabel: '<1 MB of JSON>' }));

  // Methods: ones Node knows that no route has, one it does not know, and the MCP endpoint's.
  for (const method of ['PUT', 'PROPFIND', 'SEARCH', 'FOO', 'get']) {
    cases.push(wireCase(`${method} /api/v1/tasks`, method, '/api/v1/tasks', baseUrl, auth));
  }
  for (const method of ['PUT', 'PATCH', 'GET', 'DELETE']) {
    const body = method === 'PUT' || method === 'PATCH' ? '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' : undefined;
    cases.push(wireCase(`${method} /mcp`, method, '/mcp', baseUrl, mcp, { body, mcp: true, expectedStatus: 405, expectedRpcCode: -32000 }));
  }

  // Framing Node's parser refuses, and headers with bytes outside ASCII.
  const framing: [string, string, Record<string, string>, string?][] = [
    ['HTTP/9.9', 'GET /api/v1/me HTTP/9.9', {}],
    ['a header line without a colon', 'GET /api/v1/me HTTP/1.1', { 'x-no-colon-here\r\nx-fuzz': '1' }],
    ['Content-Length: abc', 'POST /api/v1/tasks HTTP/1.1', { 'content-type': 'application/json', 'content-length': 'abc' }, '{}'],
    ['Content-Length and Transfer-Encoding both', 'POST /api/v1/tasks HTTP/1.1', { 'content-type': 'application/json', 'content-length': '2', 'transfer-encoding': 'chunked' }, '{}'],
    ['two different Content-Lengths', 'POST /api/v1/tasks HTTP/1.1', { 'content-type': 'application/json', 'content-length': '2\r\ncontent-length: 3' }, '{}'],
    ['Transfer-Encoding: gzip', 'POST /api/v1/tasks HTTP/1.1', { 'content-type': 'application/json', 'transfer-encoding': 'gzip' }, '{}'],
    ['a space in the target', 'GET /api/v1/me x HTTP/1.1', {}],
    ['an absolute-form target', `GET http://elsewhere.example/api/v1/me HTTP/1.1`, {}],
    ['a target that is not a path', 'GET api/v1/me HTTP/1.1', {}],
    ['a NUL byte in the target', 'GET /api/v1/\u0000me HTTP/1.1', {}],
  ];
  for (const [label, requestLine, headers, body] of framing) {
    const head = [requestLine, `host: ${new URL(baseUrl).host}`, 'connection: close', `authorization: ${auth.authorization}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
    cases.push({ request: { label, method: requestLine.split(' ')[0]!, url: requestLine, headers, body }, raw: { head, body } });
  }
  const validTask = '{"title":"fuzz"}';
  cases.push(wireCase('an Authorization header in UTF-8', 'GET', '/api/v1/me', baseUrl, { authorization: 'Bearer gäte_k_ключ' }, { expectedStatus: 401, expectedCode: 'unauthorized' }));
  cases.push(wireCase('an Idempotency-Key in UTF-8', 'POST', '/api/v1/tasks', baseUrl, { ...json, 'idempotency-key': 'ключ-🦀' }, { body: validTask, expectedStatus: 422, expectedCode: 'validation_failed' }));
  cases.push(wireCase('an If-Match in UTF-8', 'PATCH', taskUrl, baseUrl, { ...json, 'if-match': '"ü"' }, { body: '{}' }));
  const notUtf8 = Buffer.from([...Buffer.from('{"title":"'), 0xff, 0xfe, 0xc0, 0xaf, ...Buffer.from('"}')]);
  cases.push(wireCase('a JSON body that is not UTF-8', 'POST', '/api/v1/tasks', baseUrl, json, { body: notUtf8, bodyLabel: '{"title":"\\xff\\xfe\\xc0\\xaf"}' }));
  const utf16 = Buffer.from(`\ufeff${validTask}`, 'utf16le');
  cases.push(wireCase('a JSON body in UTF-16', 'POST', '/api/v1/tasks', baseUrl, json, { body: utf16, bodyLabel: '<{"title":"fuzz"} in UTF-16LE>' }));
  return cases;
}
