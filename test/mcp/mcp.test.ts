import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation';
import { catalog } from '../../api/catalog';
import { insertFixtures, type Fixtures } from '../support/fixtures';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { textOf } from '../support/mcp';

let h: Harness;
let org: TestOrganization;
let other: TestOrganization;
let fx: Fixtures;
let baseUrl: string;


beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.listen();
  org = await h.createOrganization();
  other = await h.createOrganization();
  fx = await insertFixtures(h.db, org.organization.id);
});
afterAll(() => h?.close());

describe('tools/list', () => {
  it('a read-write key sees every tool of the catalog open to keys', async () => {
    const { tools } = await (await h.mcp(org.readWriteToken)).listTools();
    const names = tools.map((tool) => tool.name).sort();
    const expected = catalog.filter((op) => op.tool && op.name !== 'reviews.list' && op.name !== 'reviews.get').map((op) => op.tool!);
    expect(names).toEqual([...expected, 'get_review', 'list_reviews'].sort());
    const create = tools.find((tool) => tool.name === 'create_task')!;
    expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
    expect(create.inputSchema.properties).toHaveProperty('title');
    for (const tool of tools) {
      expect(Object.keys(tool.inputSchema.properties ?? {}).filter((name) => /org|slug/.test(name)), tool.name).toEqual([]);
    }
    expect(tools.find((tool) => tool.name === 'delete_task')!.annotations).toMatchObject({ destructiveHint: true });
    expect(tools.find((tool) => tool.name === 'list_tasks')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('a read-only key sees no write tools, and calling one is refused all the same', async () => {
    const reader = await h.mcp(org.readOnlyToken);
    const { tools } = await reader.listTools();
    const writes = catalog.filter((op) => op.kind === 'gated_write').map((op) => op.tool);
    expect(tools.filter((tool) => writes.includes(tool.name))).toEqual([]);
    const attempt = await reader.callTool({ name: 'create_task', arguments: { title: 'sneaky' } }).catch((error: Error) => error);
    expect(attempt instanceof Error ? attempt.message : textOf(attempt as never)).toMatch(/not found|create_task/i);
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'sneaky'`, [org.organization.id])).rowCount).toBe(0);
  });

  it('a narrow key sees only the tools of its abilities', async () => {
    const narrow = await h.mcp(await org.keyWith(['customers.read']));
    const names = (await narrow.listTools()).tools.map((tool) => tool.name).sort();
    // Any key follows its own writes (a held one's review, an applied one); undoing needs a write ability.
    expect(names).toEqual(['get_applied_write', 'get_customer', 'get_review_status', 'search_customers', 'whoami']);
  });
});

describe('tools/call', () => {
  it('a read answers structured content matching its output schema', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const result = await mcp.callTool({ name: 'list_tasks', arguments: { project_id: fx.project } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { items: { id: string }[]; next_cursor: string | null };
    expect(structured.items.map((t) => t.id)).toContain(fx.task);
    const who = await mcp.callTool({ name: 'whoami', arguments: {} });
    expect((who.structuredContent as { organization: { slug: string } }).organization.slug).toBe(org.organization.slug);
  });

  it("every read tool answers structured content its output schema accepts, on an organization's real records", async () => {
    // The server does not check its answers against the output schemas; this test does, for every read tool,
    // on a record of every kind, a held write and a memory.
    const mcp = await h.mcp(org.readWriteToken);
    const held = await mcp.callTool({ name: 'create_task', arguments: { title: 'review the contract check' } });
    expect(held.structuredContent).toMatchObject({ status: 'pending_review' });
    const remembered = await mcp.callTool({ name: 'remember', arguments: { content: 'The client prefers mornings', tags: ['client'] } });
    expect(remembered.isError, textOf(remembered)).toBeFalsy();

    const { tools } = await mcp.listTools();
    const reads = tools.filter((tool) => tool.annotations?.readOnlyHint);
    const validator = new AjvJsonSchemaValidator();
    const answers = new Map<string, Record<string, unknown>>();
    const call = async (name: string, args: Record<string, unknown>) => {
      const tool = reads.find((candidate) => candidate.name === name)!;
      // The SDK's client checks the structured content too, and throws when it does not fit.
      const result = await mcp.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      const checked = validator.getValidator(tool.outputSchema as JsonSchemaType)(result.structuredContent);
      expect(checked.errorMessage, name).toBeUndefined();
      answers.set(name, result.structuredContent as Record<string, unknown>);
      return result.structuredContent as { items?: { id: string }[] };
    };
    // Lists and other reads without required arguments first, each with a record to show; then each get_* with
    // an id from its list.
    const listOf: Record<string, string> = { get_customer: 'search_customers', get_event: 'list_events', get_review_status: 'list_reviews' };
    // An applied write is named by its workflow id, which the write's answer carries.
    const applied = await mcp.callTool({ name: 'create_task', arguments: { title: 'an applied write to read back' } });
    answers.set('applied writes', { items: [{ id: (applied.structuredContent as { write: string }).write }] });
    listOf.get_applied_write = 'applied writes';
    for (const tool of reads.filter((candidate) => !candidate.inputSchema.required?.length)) {
      const answer = await call(tool.name, {});
      if (answer.items) expect(answer.items.length, `${tool.name} lists a record`).toBeGreaterThan(0);
    }
    for (const tool of reads.filter((candidate) => candidate.inputSchema.required?.length)) {
      const list = listOf[tool.name] ?? tool.name.replace(/^get_(.*)$/, 'list_$1s');
      const items = (answers.get(list)?.items ?? []) as { id: string }[];
      expect(items.length, `${tool.name}: ${list} gives an id`).toBeGreaterThan(0);
      const [named] = tool.inputSchema.required!.filter((field) => ['review_id', 'write', 'id'].includes(field));
      await call(tool.name, { [named!]: items[0]!.id });
    }
    answers.delete('applied writes');
    expect([...answers.keys()].sort()).toEqual(reads.map((tool) => tool.name).sort());
  });

  it('Allow: the write runs through the same workflow, recorded as interface mcp', async () => {
    const result = await (await h.mcp(org.readWriteToken)).callTool({ name: 'create_task', arguments: { title: 'From an agent', priority: 'high' } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { status: string; record: { id: string; title: string } };
    expect(structured).toMatchObject({ status: 'applied', record: { title: 'From an agent' } });
    const { rows } = await h.db.query(`SELECT interface FROM gate_decisions WHERE org_id = $1 AND input->>'title' = 'From an agent'`, [org.organization.id]);
    expect(rows).toEqual([{ interface: 'mcp' }]);
  });

  it('Deny: an error result with the reason and the remediation (rule, what it reads, its hint), never the policy text', async () => {
    const result = await (await h.mcp(org.readWriteToken)).callTool({ name: 'create_task', arguments: { title: 'deny me' } });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain('Denied by the organization');
    expect(text).toContain('The title asks to be denied');
    expect(text).toContain('A title that does not start with "deny" is allowed');
    const content = result.content as { text: string }[];
    expect(JSON.parse(content[1]!.text)).toEqual({
      remediation: {
        rules: [
          {
            policy_id: 'deny-when-asked',
            effect: 'deny',
            reason: 'The title asks to be denied',
            hint: 'A title that does not start with "deny" is allowed',
            looks_at: ['resource.title'],
          },
        ],
        next_step: expect.stringContaining('A title that does not start with "deny" is allowed'),
      },
    });
    expect(text).not.toContain('forbid');
  });

  it('Review: a plain result saying the write is held, followed with get_review_status until a person approves through REST', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const held = await mcp.callTool({ name: 'create_task', arguments: { title: 'review from an agent' } });
    expect(held.isError).toBeFalsy();
    expect(textOf(held)).toMatch(/Held for review, not written yet/);
    const review = (held.structuredContent as { review: { id: string; url: string } }).review;
    expect(review.url).toContain(`/v1/reviews/${review.id}`);

    const pending = await mcp.callTool({ name: 'get_review_status', arguments: { review_id: review.id } });
    expect(pending.structuredContent).toMatchObject({ status: 'pending', applied: false });

    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${review.id}/approve`, token: org.reviewerToken });
    expect(approved.statusCode).toBe(200);
    const done = await mcp.callTool({ name: 'get_review_status', arguments: { review_id: review.id } });
    expect(done.structuredContent).toMatchObject({ status: 'approved', applied: true, result: { title: 'review from an agent' } });
  });

  it('validation errors name the field, as an error result', async () => {
    const result = await (await h.mcp(org.readWriteToken)).callTool({ name: 'create_task', arguments: { title: 'x', due_on: 'soon' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/due_on/);
  });

  it("one organization's key never reaches another's data", async () => {
    const outsider = await h.mcp(other.readWriteToken);
    const read = await outsider.callTool({ name: 'get_task', arguments: { id: fx.task } });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain('not_found');
    const write = await outsider.callTool({ name: 'update_task', arguments: { id: fx.task, title: 'hijacked' } });
    expect(write.isError).toBe(true);
    const held = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'review private' } }));
    const status = await outsider.callTool({ name: 'get_review_status', arguments: { review_id: held.review.id } });
    expect(status.isError).toBe(true);
    expect(json(await h.request({ method: 'GET', url: `/api/v1/tasks/${fx.task}`, token: org.readOnlyToken })).data.title).toBe('Draft the plan');
  });
});

describe('transport security', () => {
  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
  const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

  it('refuses a missing or bad token with 401 and WWW-Authenticate', async () => {
    for (const headers of [{}, { authorization: 'Bearer gate_k_nonsense' }] as Record<string, string>[]) {
      const response = await post(headers, listTools);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/unauthorized/);
    }
  });

  it('refuses a personal token: MCP is for API keys', async () => {
    expect((await post({ authorization: `Bearer ${org.reviewerToken}` }, listTools)).status).toBe(403);
  });

  it('refuses a foreign Origin, and accepts its own', async () => {
    const foreign = await post({ authorization: `Bearer ${org.readWriteToken}`, origin: 'https://evil.example' }, listTools);
    expect(foreign.status).toBe(403);
  });

  it('refuses an oversized body', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_task', arguments: { title: 'x', description: 'y'.repeat(2 * 1024 * 1024) } } });
    const response = await post({ authorization: `Bearer ${org.readWriteToken}` }, huge);
    expect(response.status).toBe(413);
  });

  it('refuses a JSON-RPC batch: one message per request, so every call passes the limits on its own', async () => {
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_tasks', arguments: {} } });
    const response = await post({ authorization: `Bearer ${org.readWriteToken}` }, JSON.stringify([call(1), call(2), call(3)]));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it('answers every method but POST with a JSON-RPC 405: the server is stateless', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const response = await fetch(`${baseUrl}/mcp`, { method, headers: { authorization: `Bearer ${org.readWriteToken}` } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as { jsonrpc: string; error: { code: number } }).error.code).toBe(-32000);
    }
  });

  it('Streamable HTTP rules: a client that does not accept JSON and an event stream gets 406, an unknown protocol version 400; a notification gets 202 and no body', async () => {
    const token = `Bearer ${org.readWriteToken}`;
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      const response = await post({ authorization: token, accept }, listTools);
      expect(response.status, accept).toBe(406);
      expect(((await response.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32000, message: expect.stringMatching(/^Not Acceptable/) });
    }
    const old = await post({ authorization: token, 'mcp-protocol-version': '1999-01-01' }, listTools);
    expect(old.status).toBe(400);
    expect(((await old.json()) as { error: { message: string } }).error.message).toMatch(/Unsupported protocol version: 1999-01-01/);
    const known = await post({ authorization: token, 'mcp-protocol-version': '2025-06-18' }, listTools);
    expect(known.status).toBe(200);
    expect(known.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await known.json()) as { id: number; result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(10);

    const notification = await post({ authorization: token }, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe('');
  });

  it('params that do not fit the method: -32602 with a sentence, not -32603 with a zod dump', async () => {
    for (const args of [[1, 2], 'a string', 42, null]) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_tasks', arguments: args } });
      const response = await post({ authorization: `Bearer ${org.readWriteToken}` }, body);
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { id: number; error: { code: number; message: string } };
      expect(answer.id).toBe(7);
      expect(answer.error.code).toBe(-32602);
      expect(answer.error.message).toMatch(/^Invalid params for tools\/call: params\.arguments: /);
      expect(answer.error.message).not.toMatch(/[[{]/);
    }
    const nameless = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 3 } });
    const answer = (await (await post({ authorization: `Bearer ${org.readWriteToken}` }, nameless)).json()) as { error: { code: number; message: string } };
    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringContaining('params.name') });
  });
});
