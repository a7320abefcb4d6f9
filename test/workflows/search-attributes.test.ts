import type { WorkflowExecutionInfo } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { searchAttributes } from '../../workflows/messages';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// An operator finds any gated write in Temporal by what it is: the README's queries, run against the real dev
// server (the test's global setup starts it as `gatehouse dev` does, with the search attributes registered).

let h: Harness;
/** A second api and worker on the same database and server, whose reviews expire in seconds. */
let expiring: Harness;
let acme: TestOrganization;
let globex: TestOrganization;
const ids: Record<'allow' | 'deny' | 'approved' | 'expired' | 'pending' | 'mcpAllow' | 'globexAllow', string> = {} as never;

beforeAll(async () => {
  h = await startHarness();
  expiring = await startHarness({ reviewExpiryMs: 3000, reviewRecheckMs: 500 });
  [acme, globex] = [await h.createOrganization(), await h.createOrganization()];
});

afterAll(async () => {
  await expiring.close();
  await h.close();
});

async function submit(org: TestOrganization, title: string, through = h): Promise<{ workflowId: string; reviewId?: string }> {
  const response = await through.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect(response.statusCode, response.body).toBe(title.startsWith('review') ? 202 : title.startsWith('deny') ? 403 : 201);
  return { workflowId: response.headers['x-gatehouse-workflow-id'] as string, reviewId: json(response).review?.id };
}

/** The search attributes of one workflow as Temporal describes it. */
function attributesOf(info: Pick<WorkflowExecutionInfo, 'typedSearchAttributes'>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(searchAttributes).map(([name, key]) => [name, info.typedSearchAttributes.get(key)]));
}

/** The ids a visibility query returns, once Temporal's visibility has caught up with what the test expects. */
async function listed(query: string, expected: string[]): Promise<string[]> {
  let found: string[] = [];
  await vi.waitFor(
    async () => {
      found = [];
      for await (const info of h.temporal.workflow.list({ query })) found.push(info.workflowId);
      expect(found.sort()).toEqual([...expected].sort());
    },
    { timeout: 15_000, interval: 300 },
  );
  return found;
}

describe('search attributes of the gated write', () => {
  it('each path sets them at the start and keeps the decision and the review status current', async () => {
    ids.allow = (await submit(acme, 'plain write')).workflowId;
    ids.deny = (await submit(acme, 'deny this one')).workflowId;
    const approved = await submit(acme, 'review and approve');
    ids.approved = approved.workflowId;
    const approval = await h.request({ method: 'POST', url: `/api/v1/reviews/${approved.reviewId}/approve`, token: acme.reviewerToken, payload: {} });
    expect(approval.statusCode).toBe(200);
    ids.expired = (await submit(acme, 'review and let it expire', expiring)).workflowId;
    const mcp = await h.mcp(acme.readWriteToken);
    const viaMcp = await mcp.callTool({ name: 'create_task', arguments: { title: 'plain over MCP' } });
    expect(viaMcp.isError).toBeFalsy();
    const { rows } = await h.db.query(`SELECT workflow_id FROM gate_decisions WHERE org_id = $1 AND interface = 'mcp'`, [acme.organization.id]);
    ids.mcpAllow = rows[0]!.workflow_id as string;
    ids.globexAllow = (await submit(globex, 'plain write')).workflowId;
    // Held, and never decided in this file.
    ids.pending = (await submit(acme, 'review, still waiting')).workflowId;
    expect(Object.values(ids).every(Boolean)).toBe(true);

    const keyOf = async (workflowId: string) => (await h.temporal.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(searchAttributes.apiKey);
    const acmeKey = await keyOf(ids.allow);
    expect(acmeKey).toMatch(/^key_/);

    const common = { organization: acme.organization.slug, operation: 'tasks.create', resource: 'tasks', apiKey: acmeKey };
    const described = async (workflowId: string) => attributesOf(await h.temporal.workflow.getHandle(workflowId).describe());

    expect(await described(ids.allow)).toEqual({ ...common, interface: 'rest', decision: 'allow', reviewStatus: undefined });
    expect(await described(ids.deny)).toEqual({ ...common, interface: 'rest', decision: 'deny', reviewStatus: undefined });
    expect(await described(ids.approved)).toEqual({ ...common, interface: 'rest', decision: 'review', reviewStatus: 'approved' });
    expect(await described(ids.mcpAllow)).toEqual({ ...common, interface: 'mcp', decision: 'allow', reviewStatus: undefined });
    expect(await described(ids.pending)).toEqual({ ...common, interface: 'rest', decision: 'review', reviewStatus: 'pending' });

    // The expiry is a durable timer in the workflow: wait for it, then the status says so.
    await h.temporal.workflow.getHandle(ids.expired).result();
    expect(await described(ids.expired)).toEqual({ ...common, interface: 'rest', decision: 'review', reviewStatus: 'expired' });
  });

  it("the README's queries find exactly the right workflows", async () => {
    const acmeOnly = `GatehouseOrganization = '${acme.organization.slug}'`;
    // All writes held for review in the organization, and those still waiting.
    await listed(`${acmeOnly} AND GatehouseDecision = 'review'`, [ids.approved, ids.expired, ids.pending]);
    await listed(`${acmeOnly} AND GatehouseReviewStatus = 'pending'`, [ids.pending]);
    await listed(`${acmeOnly} AND GatehouseReviewStatus IN ('approved', 'expired')`, [ids.approved, ids.expired]);
    // Every Deny of an operation.
    await listed(`${acmeOnly} AND GatehouseOperation = 'tasks.create' AND GatehouseDecision = 'deny'`, [ids.deny]);
    // Everything one key did today; over MCP only.
    const acmeKey = (await h.temporal.workflow.getHandle(ids.allow).describe()).typedSearchAttributes.get(searchAttributes.apiKey);
    const today = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    await listed(`GatehouseApiKey = '${acmeKey}' AND StartTime > '${today}'`, [ids.allow, ids.deny, ids.approved, ids.expired, ids.pending, ids.mcpAllow]);
    await listed(`${acmeOnly} AND GatehouseInterface = 'mcp'`, [ids.mcpAllow]);
    // Another organization's writes are its own.
    await listed(`GatehouseOrganization = '${globex.organization.slug}' AND GatehouseResource = 'tasks'`, [ids.globexAllow]);
  });
});
