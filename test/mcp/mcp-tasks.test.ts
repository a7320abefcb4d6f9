import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, type ResponseMessage } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { PostgresTaskStore } from '../../api/mcp/task-store';
import { createApiKey, revokeApiKey } from '../../domain/identity/api-keys';
import { insertFixtures } from '../support/fixtures';
import { json, publicUrl, startHarness, type Harness, type TestOrganization } from '../support/harness';
import { connectMcp, textOf } from '../support/mcp';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

let h: Harness;
let org: TestOrganization;
let other: TestOrganization;
let baseUrl: string;
const clients: Client[] = [];

async function client(token: string, url = baseUrl): Promise<Client> {
  const connected = await connectMcp(url, token);
  clients.push(connected);
  return connected;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

/** A task-augmented tools/call, as a client with task support sends it. */
function callAsTask(mcp: Client, name: string, args: Record<string, unknown>) {
  return mcp.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

const result = (mcp: Client, taskId: string): Promise<CallToolResult> => mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
const approve = (o: TestOrganization, reviewId: string) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: o.reviewerToken });
const deny = (o: TestOrganization, reviewId: string, comment: string) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/deny`, token: o.reviewerToken, payload: { comment } });
const taskRows = async (orgId: string) => (await h.db.query('SELECT count(*)::int AS n FROM mcp_tasks WHERE org_id = $1', [orgId])).rows[0].n as number;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await listen(h.app);
  org = await h.createOrganization();
  other = await h.createOrganization();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await h?.close();
});

describe('task support', () => {
  it('the server declares task-augmented tools/call; gated writes take tasks optionally, reads not at all', async () => {
    const mcp = await client(org.readWriteToken);
    expect(mcp.getServerCapabilities()?.tasks).toEqual({ list: {}, requests: { tools: { call: {} } } });
    const { tools } = await mcp.listTools();
    expect(tools.find((tool) => tool.name === 'create_task')!.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((tool) => tool.name === 'delete_task')!.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((tool) => tool.name === 'list_tasks')!.execution?.taskSupport).not.toBe('optional');
    expect(tools.find((tool) => tool.name === 'get_review_status')!.execution?.taskSupport).not.toBe('optional');
  });

  it('a client without task support gets the immediate answer, and no task is recorded', async () => {
    const before = await taskRows(org.organization.id);
    const mcp = await client(org.readWriteToken);
    const held = await mcp.callTool({ name: 'create_task', arguments: { title: 'review without a task' } });
    expect(held.isError).toBeFalsy();
    expect(held.structuredContent).toMatchObject({ status: 'pending_review', review: { id: expect.stringMatching(/^rev_/) } });
    const applied = await mcp.callTool({ name: 'create_task', arguments: { title: 'applied without a task' } });
    expect(applied.structuredContent).toMatchObject({ status: 'applied', record: { title: 'applied without a task' } });
    expect(await taskRows(org.organization.id)).toBe(before);
  });
});

describe('a gated write as a task', () => {
  it('Allow: the task completes at once with the tool result (callToolStream)', async () => {
    const mcp = await client(org.readWriteToken);
    await mcp.listTools(); // the client learns which tools take tasks
    const messages: ResponseMessage<CallToolResult>[] = [];
    for await (const message of mcp.experimental.tasks.callToolStream({ name: 'create_task', arguments: { title: 'allowed as a task' } })) {
      messages.push(message as ResponseMessage<CallToolResult>);
    }
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', 'taskStatus', 'result']);
    const created = messages[0] as Extract<ResponseMessage<CallToolResult>, { type: 'taskCreated' }>;
    expect(created.task).toMatchObject({ status: 'completed', ttl: null, statusMessage: 'Done: create a task.' });
    expect(created.task.taskId).toMatch(new RegExp(`^${org.organization.slug}:tasks.create:`)); // the workflow id
    const final = (messages[2] as Extract<ResponseMessage<CallToolResult>, { type: 'result' }>).result;
    expect(final.isError).toBeFalsy();
    expect(final.structuredContent).toMatchObject({ status: 'applied', record: { title: 'allowed as a task' } });
    expect(final._meta).toMatchObject({ 'io.modelcontextprotocol/related-task': { taskId: created.task.taskId } });
  });

  it('Deny by policy: the task fails at once, and tasks/result gives the error result with the rule that decided (not its text)', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'deny as a task' });
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toContain("Denied by the organization's policy");
    const denied = await result(mcp, task.taskId);
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('The title asks to be denied');
    expect(textOf(denied)).toContain('"policy_id":"deny-when-asked"');
    expect(textOf(denied)).not.toContain('forbid');
  });

  it('Review: working while held, with the review link; a person approves through REST; the task completes with the write', async () => {
    const mcp = await client(org.readWriteToken);
    const created = await callAsTask(mcp, 'create_task', { title: 'review as a task' });
    const { task } = created;
    expect(task).toMatchObject({ taskId: expect.stringMatching(/^rev_/), status: 'working', pollInterval: 5000, ttl: null });
    expect(task.statusMessage).toContain(`in the console at ${publicUrl}/reviews/${task.taskId}`);
    expect(task.statusMessage).toContain('The title asks for a review');
    expect(created._meta?.['io.modelcontextprotocol/model-immediate-response']).toMatch(/^Held for review, not written yet\./);

    const working = await mcp.experimental.tasks.getTask(task.taskId);
    expect(working).toMatchObject({ status: 'working', createdAt: task.createdAt });
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review as a task'`, [org.organization.id])).rowCount).toBe(0);

    expect((await approve(org, task.taskId)).statusCode).toBe(200);
    await expect.poll(async () => (await mcp.experimental.tasks.getTask(task.taskId)).status, { timeout: 10_000 }).toBe('completed');
    const done = await result(mcp, task.taskId);
    expect(done.isError).toBeFalsy();
    // The same shape as an applied tool result.
    expect(done.structuredContent).toMatchObject({ status: 'applied', record: { id: expect.stringMatching(/^task_/), title: 'review as a task' } });
    expect(textOf(done)).toContain(`approved by a person in review ${task.taskId}`);
    const { rows } = await h.db.query(`SELECT id FROM tasks WHERE org_id = $1 AND title = 'review as a task'`, [org.organization.id]);
    expect(rows).toEqual([{ id: (done.structuredContent as { record: { id: string } }).record.id }]);
  });

  it('Review followed with callToolStream: working, a person approves, then completed with the write', async () => {
    const mcp = await client(org.readWriteToken);
    await mcp.listTools();
    const statuses: string[] = [];
    let final: CallToolResult | undefined;
    for await (const message of mcp.experimental.tasks.callToolStream({ name: 'create_task', arguments: { title: 'review streamed' } })) {
      if (message.type === 'taskCreated') statuses.push(`created:${message.task.status}`);
      if (message.type === 'taskStatus') {
        statuses.push(message.task.status);
        if (message.task.status === 'working') expect((await approve(org, message.task.taskId)).statusCode).toBe(200);
      }
      if (message.type === 'result') final = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(statuses).toEqual(['created:working', 'working', 'completed']);
    expect(final!.structuredContent).toMatchObject({ status: 'applied', record: { title: 'review streamed' } });
  }, 30_000);

  it('tasks/result on a held write waits, and answers once a person approves', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review awaited' });
    let settled = false;
    const waiting = result(mcp, task.taskId).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);
    expect((await approve(org, task.taskId)).statusCode).toBe(200);
    const done = await waiting;
    expect(done.structuredContent).toMatchObject({ status: 'applied', record: { title: 'review awaited' } });
    expect(done._meta).toMatchObject({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
  }, 30_000);

  it('arguments the input schema refuses: a protocol error (-32602), no task, nothing written', async () => {
    const before = await taskRows(org.organization.id);
    const mcp = await client(org.readWriteToken);
    const error = await callAsTask(mcp, 'create_task', { title: 'bad date as a task', due_on: 'soon' }).catch((e: unknown) => e);
    // The SDK masks the validation message for task-augmented calls (modelcontextprotocol/typescript-sdk#1385).
    expect(error).toMatchObject({ code: -32602 });
    expect(await taskRows(org.organization.id)).toBe(before);
    expect((await h.db.query(`SELECT 1 FROM gate_decisions WHERE org_id = $1 AND input->>'title' = 'bad date as a task'`, [org.organization.id])).rowCount).toBe(0);
  });

  it('Review then deny: the task fails with the person’s comment, and nothing is written', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review then deny as a task' });
    expect(task.status).toBe('working');
    expect((await deny(org, task.taskId, 'not this quarter')).statusCode).toBe(200);
    const failed = await mcp.experimental.tasks.getTask(task.taskId);
    expect(failed.status).toBe('failed');
    expect(failed.statusMessage).toContain(`Denied by a person in review ${task.taskId}`);
    const denied = await result(mcp, task.taskId);
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('not this quarter');
    expect(textOf(denied)).toContain('Nothing was written');
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review then deny as a task'`, [org.organization.id])).rowCount).toBe(0);
  });

  it('Review that nobody decides in time: the task fails as expired', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review then expire as a task' });
    await h.db.query(`UPDATE reviews SET expires_at = now() - interval '1 second' WHERE id = $1`, [task.taskId]);
    const expired = await mcp.experimental.tasks.getTask(task.taskId);
    expect(expired.status).toBe('failed');
    expect(expired.statusMessage).toMatch(/before it expired/);
    expect((await result(mcp, task.taskId)).isError).toBe(true);
  });

  it('Review, then the key revoked: the task is cancelled, saying the write was withdrawn and nothing was written', async () => {
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'Agent revoked while its task waits', access: 'read_write' });
    const apiKeyId = key.key.id;
    const mcp = await client(key.token);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review as a task, then withdrawn' });
    expect(task.status).toBe('working');
    await revokeApiKey(h.db, withdrawReviewsOfKey, org.organization.id, apiKeyId);
    // The revoked key is refused from now on; what any api process would answer of the task (read from its review
    // by the store the tools/call handler uses) is that it ended.
    await expect(mcp.experimental.tasks.getTask(task.taskId)).rejects.toThrow();
    const store = new PostgresTaskStore({ db: h.db, orgId: org.organization.id, apiKeyId, apiBaseUrl: `${publicUrl}/api`, publicUrl });
    const ended = await store.getTask(task.taskId);
    expect(ended).toMatchObject({ taskId: task.taskId, status: 'cancelled', statusMessage: expect.stringMatching(/^Withdrawn: review rev_\w+ was withdrawn before anyone decided it, because the API key that made it was revoked/) });
    expect(ended).not.toHaveProperty('pollInterval');
    const final = (await store.getTaskResult(task.taskId)) as CallToolResult;
    expect(final.isError).toBe(true);
    expect(textOf(final)).toContain('Nothing was written');
    expect((await h.db.query(`SELECT 1 FROM tasks WHERE org_id = $1 AND title = 'review as a task, then withdrawn'`, [org.organization.id])).rows).toEqual([]);
  });

  it('approved but the write could not be applied: the task fails with the failure', async () => {
    const held = await h.createOrganization({
      policy: '@id("allow") permit (principal, action, resource); @id("hold-updates") @decision("review") permit (principal, action == Action::"customers.update", resource);',
    });
    const fx = await insertFixtures(h.db, held.organization.id);
    const mcp = await client(held.readWriteToken);
    const { task } = await callAsTask(mcp, 'update_customer', { id: fx.customer, notes: 'from the agent' });
    expect(task.status).toBe('working');
    await h.db.query(`UPDATE customers SET version = version + 1 WHERE id = $1`, [fx.customer]);
    expect((await approve(held, task.taskId)).statusCode).toBe(200);
    await expect.poll(async () => (await mcp.experimental.tasks.getTask(task.taskId)).status, { timeout: 10_000 }).toBe('failed');
    const failed = await result(mcp, task.taskId);
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^Error conflict: approved by a person in review rev_\w+, but the write could not be applied/);
  });

  it('tasks/list shows the key’s own tasks, newest first; tasks/cancel is refused (a person decides)', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review to list' });
    const { tasks } = await mcp.experimental.tasks.listTasks();
    expect(tasks[0]).toMatchObject({ taskId: task.taskId, status: 'working' });
    expect(tasks.length).toBeGreaterThan(3);
    await expect(mcp.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/cannot be moved to cancelled/);
    expect((await mcp.experimental.tasks.getTask(task.taskId)).status).toBe('working');
  });
});

describe('durable and scoped', () => {
  it('a held task survives the api: created on one instance, answered after it is gone by another, from the database', async () => {
    const first = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', secrets: h.secrets });
    const firstUrl = await listen(first);
    const before = await client(org.readWriteToken, firstUrl);
    const { task } = await callAsTask(before, 'create_task', { title: 'review across a restart' });
    expect(task.status).toBe('working');
    await before.close();
    await first.close();

    expect((await approve(org, task.taskId)).statusCode).toBe(200);
    const after = await client(org.readWriteToken); // a new connection to another api process
    await expect.poll(async () => (await after.experimental.tasks.getTask(task.taskId)).status, { timeout: 10_000 }).toBe('completed');
    expect((await result(after, task.taskId)).structuredContent).toMatchObject({ status: 'applied', record: { title: 'review across a restart' } });
  });

  it('another key of the organization, or a key of another organization, cannot see the task', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review private to its key' });
    const applied = await callAsTask(mcp, 'create_task', { title: 'applied private to its key' });
    const sibling = await client(await org.keyWith(['tasks.read', 'tasks.write', 'reviews.read']));
    const outsider = await client(other.readWriteToken);
    for (const stranger of [sibling, outsider]) {
      for (const id of [task.taskId, applied.task.taskId]) {
        await expect(stranger.experimental.tasks.getTask(id)).rejects.toThrow(/not found/i);
        await expect(result(stranger, id)).rejects.toThrow(/not found/i);
        await expect(stranger.experimental.tasks.cancelTask(id)).rejects.toThrow(/not found/i);
      }
      expect((await stranger.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
    }
    expect((await mcp.experimental.tasks.getTask(task.taskId)).status).toBe('working');
  });

  it('tasks/list pages through a key\'s tasks with an opaque cursor', async () => {
    const token = await org.keyWith(['tasks.read', 'tasks.write']);
    const mcp = await client(token);
    const keyId = (await h.db.query(`SELECT id FROM api_keys WHERE org_id = $1 AND label = 'narrow tasks.read,tasks.write'`, [org.organization.id])).rows[0].id;
    const answer = JSON.stringify({ content: [{ type: 'text', text: 'Done: create a task.' }] });
    for (let i = 0; i < 55; i++) {
      await h.db.query(`INSERT INTO mcp_tasks (id, org_id, api_key_id, tool, status, result) VALUES ($1, $2, $3, 'create_task', 'completed', $4)`, [
        `paged-${i}`,
        org.organization.id,
        keyId,
        answer,
      ]);
    }
    const first = await mcp.experimental.tasks.listTasks();
    expect(first.tasks).toHaveLength(50);
    expect(first.tasks[0]).toMatchObject({ taskId: 'paged-54', status: 'completed', statusMessage: 'Done: create a task.' });
    const second = await mcp.experimental.tasks.listTasks(first.nextCursor);
    expect(second.tasks.map((t) => t.taskId)).toEqual(['paged-4', 'paged-3', 'paged-2', 'paged-1', 'paged-0']);
    expect(second.nextCursor).toBeUndefined();
  });

  it('an unknown task id is not found', async () => {
    const mcp = await client(org.readWriteToken);
    await expect(mcp.experimental.tasks.getTask('rev_00000000000000000000000000')).rejects.toThrow(/not found/i);
    await expect(mcp.experimental.tasks.listTasks('bm90IGEgY3Vyc29y')).rejects.toThrow(/cursor/);
  });
});

describe('held writes through REST and the task agree', () => {
  it('the task reads the review the REST API shows', async () => {
    const mcp = await client(org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review seen over REST' });
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${task.taskId}`, token: org.reviewerToken })).data;
    expect(review).toMatchObject({ id: task.taskId, status: 'pending', submitted_by: { interface: 'mcp' } });
  });
});

describe('review findings', () => {
  it('closing the api ends a tasks/result that waits on a review, rather than hanging until someone decides', async () => {
    const app = await buildApp({ db: h.db, gate: createGateClient(h.temporal, { taskQueue: h.taskQueue }), publicUrl, logLevel: 'silent', secrets: h.secrets });
    const url = await listen(app);
    const mcp = await connectMcp(url, org.readWriteToken);
    const { task } = await callAsTask(mcp, 'create_task', { title: 'review while the api stops' });
    const waiting = result(mcp, task.taskId).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await app.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await waiting).toBeInstanceOf(Error);
    await mcp.close().catch(() => {});
  });

  it('a task id with a NUL, or get_review_status with one, is not found: never a database error', async () => {
    const mcp = await client(org.readWriteToken);
    await expect(mcp.experimental.tasks.getTask('bad\u0000id')).rejects.toThrow(/not found/i);
    const status = await mcp.callTool({ name: 'get_review_status', arguments: { review_id: 'rev\u0000x' } });
    expect(status.isError).toBe(true);
    expect(textOf(status)).toMatch(/validation/i);
  });

  it("another key with reviews.read learns that a memory is held, not what it says", async () => {
    const holding = await h.createOrganization({
      policy: '@id("allow") permit (principal, action, resource); @id("hold-memories") @decision("review") permit (principal, action == Action::"memories.remember", resource);',
    });
    const writer = await client(holding.readWriteToken);
    const held = await writer.callTool({ name: 'remember', arguments: { content: 'the safe code is 1234' } });
    const reviewId = (held.structuredContent as { review: { id: string } }).review.id;
    const sibling = await holding.keyWith(['reviews.read']);
    const viaRest = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: sibling })).data;
    expect(JSON.stringify(viaRest)).not.toContain('1234');
    expect(viaRest.proposed).toEqual({ redacted: true });
    const listed = json(await h.request({ method: 'GET', url: '/api/v1/reviews', token: sibling })).data;
    expect(JSON.stringify(listed)).not.toContain('1234');
    const person = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token: holding.reviewerToken })).data;
    expect(person.proposed.content).toBe('the safe code is 1234');
    const own = await writer.callTool({ name: 'get_review_status', arguments: { review_id: reviewId } });
    expect(own.isError).toBeFalsy();
  });
});
