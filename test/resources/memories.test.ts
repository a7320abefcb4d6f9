import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { textOf } from '../support/mcp';

// What agents remember: notes scoped to the organization and to the key that wrote them, through REST and
// MCP alike, and gated like every other write.

const noMemories = `@id("allow-writes") permit (principal, action, resource);
@id("no-memories") @reason("Agents keep no memories here")
forbid (principal, action == Action::"memories.remember", resource);`;

const reviewMemories = `@id("allow-writes") permit (principal, action, resource);
@id("review-memories") @decision("review") @reason("A person reads what agents remember")
permit (principal, action == Action::"memories.remember", resource);`;

interface Memory {
  id: string;
  api_key_id: string;
  content: string;
  tags: string[];
  version: number;
}

let h: Harness;
let org: TestOrganization;
let other: TestOrganization;
let siblingToken: string;


const remember = (token: string, payload: Record<string, unknown>) => h.request({ method: 'POST', url: '/api/v1/memories', token, payload });
const forget = (token: string, id: string) => h.request({ method: 'DELETE', url: `/api/v1/memories/${id}`, token });
async function recall(token: string, query: Record<string, string> = {}): Promise<Memory[]> {
  const response = await h.request({ method: 'GET', url: `/api/v1/memories?${new URLSearchParams(query)}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return json(response).data;
}
const ids = (memories: { id: string }[]) => memories.map((memory) => memory.id);
const stored = async (id: string) => (await h.db.query('SELECT 1 FROM agent_memories WHERE id = $1', [id])).rowCount;

beforeAll(async () => {
  h = await startHarness();
  await h.listen();
  org = await h.createOrganization();
  other = await h.createOrganization();
  siblingToken = await org.keyWith(['memories.read', 'memories.write']);
});
afterAll(() => h?.close());

describe('through REST', () => {
  it('remember, recall by tag and by search, then forget', async () => {
    const created = await remember(org.readWriteToken, { content: 'Ada prefers calls before 10:00', tags: ['customer', 'Preference'] });
    expect(created.statusCode, created.body).toBe(201);
    const memory: Memory = json(created).data;
    expect(memory).toMatchObject({ content: 'Ada prefers calls before 10:00', tags: ['customer', 'Preference'], version: 1 });
    expect(memory.id).toMatch(/^mry_[0-9a-z]{26}$/);
    expect(memory.api_key_id).toBe(org.taskRequest('').apiKey.id);
    await remember(org.readWriteToken, { content: 'Invoices go out on Fridays', tags: ['billing'] });

    expect(ids(await recall(org.readWriteToken, { tags: 'customer,Preference' }))).toEqual([memory.id]);
    expect(ids(await recall(org.readWriteToken, { search: 'CALLS before' }))).toEqual([memory.id]);
    expect(await recall(org.readWriteToken, { tags: 'customer,billing' })).toEqual([]);
    expect(await recall(org.readWriteToken, { search: '100%' })).toEqual([]);

    const newest = await h.request({ method: 'GET', url: '/api/v1/memories?limit=1', token: org.readWriteToken });
    expect(json(newest).data.map((m: Memory) => m.content)).toEqual(['Invoices go out on Fridays']);
    const cursor = json(newest).page.next_cursor;
    expect(cursor).toBeTruthy();
    const next = await h.request({ method: 'GET', url: `/api/v1/memories?limit=1&cursor=${cursor}`, token: org.readWriteToken });
    expect(ids(json(next).data)).toEqual([memory.id]);

    const forgotten = await forget(org.readWriteToken, memory.id);
    expect(forgotten.statusCode, forgotten.body).toBe(200);
    expect(json(forgotten).data).toMatchObject({ id: memory.id, content: memory.content });
    expect(ids(await recall(org.readWriteToken))).not.toContain(memory.id);
    expect((await forget(org.readWriteToken, memory.id)).statusCode).toBe(404);
  });

  it('another key of the same organization neither recalls nor forgets it', async () => {
    const memory: Memory = json(await remember(org.readWriteToken, { content: 'Only mine', tags: ['private'] })).data;
    expect(ids(await recall(siblingToken, { tags: 'private' }))).toEqual([]);
    expect(ids(await recall(siblingToken))).not.toContain(memory.id);
    const attempt = await forget(siblingToken, memory.id);
    expect(attempt.statusCode).toBe(404);
    expect(json(attempt).error).toMatchObject({ code: 'not_found', message: `memory ${memory.id} was not found` });
    expect(await stored(memory.id)).toBe(1);

    // The sibling's own memory stays its own the other way round, too.
    const theirs: Memory = json(await remember(siblingToken, { content: 'The sibling notes this', tags: ['private'] })).data;
    expect(ids(await recall(siblingToken, { tags: 'private' }))).toEqual([theirs.id]);
    expect(ids(await recall(org.readWriteToken, { tags: 'private' }))).toEqual([memory.id]);
  });

  it("another organization's key neither recalls nor forgets it", async () => {
    const memory: Memory = json(await remember(org.readWriteToken, { content: 'Inside the organization', tags: ['internal'] })).data;
    expect(await recall(other.readWriteToken, { tags: 'internal' })).toEqual([]);
    const attempt = await forget(other.readWriteToken, memory.id);
    expect(attempt.statusCode).toBe(404);
    expect(json(attempt).error.code).toBe('not_found');
    const explicit = await h.request({ method: 'GET', url: `/api/v1/organizations/${org.organization.slug}/memories`, token: other.readWriteToken });
    expect(json(explicit).error.code).toBe('organization_mismatch');
    expect(await stored(memory.id)).toBe(1);
  });

  it('a read-only key recalls but never remembers', async () => {
    expect((await h.request({ method: 'GET', url: '/api/v1/memories', token: org.readOnlyToken })).statusCode).toBe(200);
    const attempt = await remember(org.readOnlyToken, { content: 'sneaky' });
    expect(attempt.statusCode).toBe(403);
    expect(json(attempt).error.code).toBe('read_only_key');
  });

  it('refuses an empty note', async () => {
    const attempt = await remember(org.readWriteToken, { content: '   ' });
    expect(attempt.statusCode).toBe(422);
    expect(json(attempt).error.details.fields.map((f: { field: string }) => f.field)).toContain('content');
  });
});

describe('through MCP', () => {
  it('remember, recall by tag and by search, then forget, as interface mcp', async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const remembered = await mcp.callTool({ name: 'remember', arguments: { content: 'Grace wants the weekly report on Mondays', tags: ['report'] } });
    expect(remembered.isError, textOf(remembered)).toBeFalsy();
    const { status, record } = remembered.structuredContent as { status: string; record: Memory };
    expect(status).toBe('applied');
    expect(record).toMatchObject({ content: 'Grace wants the weekly report on Mondays', tags: ['report'] });

    const byTag = await mcp.callTool({ name: 'recall', arguments: { tags: 'report' } });
    expect(ids((byTag.structuredContent as { items: Memory[] }).items)).toEqual([record.id]);
    const bySearch = await mcp.callTool({ name: 'recall', arguments: { search: 'weekly report' } });
    expect(ids((bySearch.structuredContent as { items: Memory[] }).items)).toEqual([record.id]);

    const { rows } = await h.db.query(`SELECT interface FROM gate_decisions WHERE org_id = $1 AND operation = 'memories.remember' AND input->>'content' = $2`, [
      org.organization.id,
      record.content,
    ]);
    expect(rows).toEqual([{ interface: 'mcp' }]);

    const forgotten = await mcp.callTool({ name: 'forget', arguments: { id: record.id } });
    expect(forgotten.isError, textOf(forgotten)).toBeFalsy();
    expect(forgotten.structuredContent).toMatchObject({ status: 'applied', record: { id: record.id } });
    const after = await mcp.callTool({ name: 'recall', arguments: { tags: 'report' } });
    expect((after.structuredContent as { items: Memory[] }).items).toEqual([]);
  });

  it('the tools say what they do: recall reads, forget destroys', async () => {
    const { tools } = await (await h.mcp(org.readWriteToken)).listTools();
    expect(tools.find((tool) => tool.name === 'recall')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'remember')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(tools.find((tool) => tool.name === 'forget')!.annotations).toMatchObject({ destructiveHint: true });
    const readOnly = (await (await h.mcp(org.readOnlyToken)).listTools()).tools.map((tool) => tool.name);
    expect(readOnly).toContain('recall');
    expect(readOnly).not.toContain('remember');
    expect(readOnly).not.toContain('forget');
  });

  it('another key, of the same organization or another, neither recalls nor forgets it', async () => {
    const memory: Memory = json(await remember(org.readWriteToken, { content: 'Kept from other agents', tags: ['secret'] })).data;
    for (const token of [siblingToken, other.readWriteToken]) {
      const mcp = await h.mcp(token);
      const recalled = await mcp.callTool({ name: 'recall', arguments: { tags: 'secret' } });
      expect((recalled.structuredContent as { items: Memory[] }).items).toEqual([]);
      const attempt = await mcp.callTool({ name: 'forget', arguments: { id: memory.id } });
      expect(attempt.isError).toBe(true);
      expect(textOf(attempt)).toContain('not_found');
    }
    expect(await stored(memory.id)).toBe(1);
  });
});

describe('memory writes are gated', () => {
  it('a policy that forbids memories.remember: policy_denied over REST and an error result over MCP, nothing kept', async () => {
    const strict = await h.createOrganization({ policy: noMemories });
    const denied = await remember(strict.readWriteToken, { content: 'Remember me' });
    expect(denied.statusCode).toBe(403);
    expect(json(denied).error).toMatchObject({ code: 'policy_denied', details: { reason: 'Agents keep no memories here', policy_ids: ['no-memories'] } });

    const result = await (await h.mcp(strict.readWriteToken)).callTool({ name: 'remember', arguments: { content: 'Remember me too' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Agents keep no memories here');
    expect((await h.db.query('SELECT 1 FROM agent_memories WHERE org_id = $1', [strict.organization.id])).rowCount).toBe(0);
  });

  it("a held memory is kept, as the submitting key's, once a person approves it", async () => {
    const reviewed = await h.createOrganization({ policy: reviewMemories });
    const held = await remember(reviewed.readWriteToken, { content: 'Held note', tags: ['held'] });
    expect(held.statusCode).toBe(202);
    expect(await recall(reviewed.readWriteToken, { tags: 'held' })).toEqual([]);

    const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${json(held).review.id}/approve`, token: reviewed.reviewerToken });
    expect(approved.statusCode, approved.body).toBe(200);
    const [memory] = await recall(reviewed.readWriteToken, { tags: 'held' });
    expect(memory).toMatchObject({ content: 'Held note', api_key_id: reviewed.taskRequest('').apiKey.id });
  });
});
