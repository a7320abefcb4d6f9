import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type fc from 'fast-check';
import type { SentRequest } from './answers';
import { malformedValues, objectFor, oddValues, validObject, type JsonSchema } from './schema-values';

// Raw POSTs to /mcp: messages that are not JSON, not JSON-RPC, not a method we have, calls whose params or
// arguments are of the wrong shape, and for each tool of tools/list the arguments its input schema rules out.

/** JSON-RPC's error codes (and MCP's use of -32602 for an unknown tool). */
export const rpc = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602 } as const;

export interface McpCase extends SentRequest {
  /** The JSON-RPC error the answer must carry. */
  expectedCode?: number;
  /** The HTTP status it must come with. */
  expectedStatus?: number;
  /** A tool call the tool must refuse: an error result in our words, or -32602. */
  refusedCall?: boolean;
  /** What of the tool the case varies, for sampling. */
  dimension?: string;
}

export function mcpHeaders(token: string | null, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
    ...extra,
  };
}

const message = (method: string, params?: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) });
const call = (name: unknown, args?: unknown) => message('tools/call', { name, ...(args === undefined ? {} : { arguments: args }) });

/** Messages that are not what JSON-RPC or MCP accept, each with the error code it must get. */
export function protocolCases(tokens: { key: string; readOnlyKey: string }): McpCase[] {
  const token = tokens.key;
  const cases: [string, string, number][] = [
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":"tools/list"', rpc.parseError],
    ['a lone brace', '{', rpc.parseError],
    ['a bare word', 'nul', rpc.parseError],
    ['single-quoted JSON', "{'jsonrpc':'2.0','id':1,'method':'tools/list'}", rpc.parseError],
    ['an empty object', '{}', rpc.invalidRequest],
    ['no jsonrpc member', '{"id":1,"method":"tools/list"}', rpc.invalidRequest],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', rpc.invalidRequest],
    ['an object for an id', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', rpc.invalidRequest],
    ['a number for a method', '{"jsonrpc":"2.0","id":1,"method":42}', rpc.invalidRequest],
    ['neither method nor result', '{"jsonrpc":"2.0","id":1}', rpc.invalidRequest],
    ['a number', '42', rpc.invalidRequest],
    ['a string', '"tools/list"', rpc.invalidRequest],
    ['null', 'null', rpc.invalidRequest],
    ['true', 'true', rpc.invalidRequest],
    ['an empty batch', '[]', rpc.invalidRequest],
    ['a batch of a number', '[1]', rpc.invalidRequest],
    ['an unknown method', message('fuzz/unknown'), rpc.methodNotFound],
    ['resources/list, which this server does not offer', message('resources/list'), rpc.methodNotFound],
    ['tools/call without params', message('tools/call'), rpc.invalidParams],
    ['tools/call with params that are an array', message('tools/call', []), rpc.invalidParams],
    ['tools/call with params that are a string', message('tools/call', 'list_tasks'), rpc.invalidParams],
    ['tools/call with null params', message('tools/call', null), rpc.invalidParams],
    ['tools/call without a name', message('tools/call', { arguments: {} }), rpc.invalidParams],
    ['tools/call with a number for a name', call(42, {}), rpc.invalidParams],
    ['arguments that are an array', call('list_tasks', []), rpc.invalidParams],
    ['arguments that are a string', call('list_tasks', 'status=todo'), rpc.invalidParams],
    ['arguments that are a number', call('create_task', 42), rpc.invalidParams],
    ['arguments that are true', call('create_task', true), rpc.invalidParams],
    ['arguments that are null', call('list_tasks', null), rpc.invalidParams],
    ['an unknown tool', call('no_such_tool', {}), rpc.invalidParams],
    ['an empty tool name', call('', {}), rpc.invalidParams],
    ['a tool name of 5,000 characters', call('x'.repeat(5000), {}), rpc.invalidParams],
    ['the tool __proto__', call('__proto__', {}), rpc.invalidParams],
    ['the tool constructor', call('constructor', {}), rpc.invalidParams],
    ['a tool name with a trailing space', call('create_task ', { title: 'fuzz' }), rpc.invalidParams],
    ['a tool name in capitals', call('LIST_TASKS', {}), rpc.invalidParams],
    ['initialize without params', message('initialize'), rpc.invalidParams],
    ['initialize with a number for the protocol version', message('initialize', { protocolVersion: 42, capabilities: {}, clientInfo: { name: 'f', version: '1' } }), rpc.invalidParams],
    ['prompts/get of an unknown prompt', message('prompts/get', { name: 'no_such_prompt' }), rpc.invalidParams],
  ];
  const expected = cases.map(([label, body, code]): McpCase => ({ label, method: 'POST', url: '/mcp', headers: mcpHeaders(token), body, expectedCode: code }));
  // To a key without the ability, a tool is as unknown as one that does not exist.
  expected.push({
    label: 'a tool this key does not have (a read-only key calls create_task)',
    method: 'POST',
    url: '/mcp',
    headers: mcpHeaders(tokens.readOnlyKey),
    body: call('create_task', { title: 'fuzz' }),
    expectedCode: rpc.invalidParams,
  });
  // Messages that need no answer or whose answer may be a result: they must not fail, whatever they carry.
  const tolerated: [string, string][] = [
    ['a notification with odd params', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: [1, 2] })],
    ['a response nobody asked for', JSON.stringify({ jsonrpc: '2.0', id: 99, result: {} })],
    ['ping with params', message('ping', { fuzz: true })],
    ['tasks/get of an unknown task', message('tasks/get', { taskId: 'no-such-task' })],
    ['tasks/get with a number for the task', message('tasks/get', { taskId: 42 })],
    ['tools/list with a garbled cursor', message('tools/list', { cursor: '!!!' })],
    ['a string id of 10,000 characters', JSON.stringify({ jsonrpc: '2.0', id: 'i'.repeat(10_000), method: 'tools/list' })],
    ['a fractional id', JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'tools/list' })],
  ];
  return [...expected, ...tolerated.map(([label, body]): McpCase => ({ label, method: 'POST', url: '/mcp', headers: mcpHeaders(token), body }))];
}

/** Headers and methods the transport must refuse in JSON-RPC, never in another shape. */
export function transportCases(tokens: { key: string; personal: string }): McpCase[] {
  const list = message('tools/list');
  const post = (label: string, headers: Record<string, string>, body = list): McpCase => ({ label, method: 'POST', url: '/mcp', headers, body });
  const withoutAccept = mcpHeaders(tokens.key);
  delete withoutAccept.accept;
  const withoutType = mcpHeaders(tokens.key);
  delete withoutType['content-type'];
  return [
    post('no Accept', withoutAccept),
    post('Accept: text/html', mcpHeaders(tokens.key, { accept: 'text/html' })),
    post('Accept: text/event-stream only', mcpHeaders(tokens.key, { accept: 'text/event-stream' })),
    post('Content-Type text/plain', mcpHeaders(tokens.key, { 'content-type': 'text/plain' })),
    post('no Content-Type', withoutType),
    post('a protocol version from 1999', mcpHeaders(tokens.key, { 'mcp-protocol-version': '1999-01-01' })),
    post('a garbled protocol version', mcpHeaders(tokens.key, { 'mcp-protocol-version': '!!' })),
    post('a session id nobody gave out', mcpHeaders(tokens.key, { 'mcp-session-id': 'no-such-session' })),
    post('no Authorization', mcpHeaders(null)),
    post('a garbled token', mcpHeaders(null, { authorization: 'Bearer gate_k_zzz' })),
    post('another scheme', mcpHeaders(null, { authorization: 'Basic ZnV6ejpmdXp6' })),
    post('a personal token', mcpHeaders(tokens.personal)),
    post('a foreign Origin', mcpHeaders(tokens.key, { origin: 'https://evil.example' })),
    post('a batch of two', mcpHeaders(tokens.key), `[${list},${list}]`),
    ...['GET', 'DELETE', 'PUT', 'PATCH'].map((method): McpCase => ({
      label: `${method} /mcp`,
      method,
      url: '/mcp',
      headers: mcpHeaders(tokens.key),
      body: method === 'PUT' || method === 'PATCH' ? list : undefined,
      expectedCode: -32000,
      expectedStatus: 405,
    })),
  ];
}

/** For each field of a tool's input schema, the values it rules out (each must be refused) and odd values it allows. */
export function toolArgumentCases(tool: Tool, token: string): McpCase[] {
  const schema = tool.inputSchema as JsonSchema;
  const valid = validObject(schema);
  const cases: McpCase[] = [];
  const add = (dimension: string, label: string, args: Record<string, unknown>, refused: boolean) =>
    cases.push({
      label: `${tool.name} ${label}`,
      method: 'POST',
      url: '/mcp',
      headers: mcpHeaders(token),
      body: call(tool.name, args),
      refusedCall: refused,
      dimension: `${tool.name} ${dimension}`,
    });
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    for (const { label, value } of malformedValues(field)) add(`${name} malformed`, `${name}: ${label}`, { ...valid, [name]: value }, true);
    for (const { label, value } of oddValues(field)) add(`${name} odd`, `${name}: ${label}`, { ...valid, [name]: value }, false);
  }
  for (const name of schema.required ?? []) {
    const { [name]: _left, ...rest } = valid;
    add('shape', `without ${name}`, rest, true);
  }
  add('shape', 'an unknown argument', { ...valid, fuzz_unknown: 1 }, true);
  return cases;
}

/** Random arguments for a tool: mostly malformed, now and then valid enough to reach the operation. */
export function randomArguments(tool: Tool): fc.Arbitrary<Record<string, unknown>> {
  return objectFor(tool.inputSchema as JsonSchema);
}
