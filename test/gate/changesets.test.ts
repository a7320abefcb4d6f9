import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

let h: Harness;
let org: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization();
});
afterAll(() => h?.close());

const submit = (body: unknown, token = org.readWriteToken, headers: Record<string, string> = {}) =>
  h.request({ method: 'POST', url: '/api/v1/changesets', token, payload: body as object, headers });

const createTask = async (title: string) =>
  json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } })).data as { id: string; version: number };

async function tasksOf(orgId: string): Promise<{ id: string; title: string; project_id: string | null; status: string }[]> {
  return (await h.db.query('SELECT id, title, project_id, status FROM tasks WHERE org_id = $1 ORDER BY id', [orgId])).rows;
}
async function projectNames(orgId: string): Promise<string[]> {
  return (await h.db.query('SELECT name FROM projects WHERE org_id = $1 ORDER BY id', [orgId])).rows.map((row) => row.name);
}

/** The mixed changeset of the issue: a project, a task in it, an update and a delete of existing tasks. */
async function mixedItems(tag: string, followUpTitle = `Follow up ${tag}`) {
  const toMove = await createTask(`Move ${tag}`);
  const toDrop = await createTask(`Drop ${tag}`);
  return {
    toMove,
    toDrop,
    items: [
      { ref: 'proj', operation: 'projects.create', input: { name: `Acme ${tag}` } },
      { ref: 'follow', operation: 'tasks.create', input: { title: followUpTitle, project_id: '$ref:proj' } },
      { operation: 'tasks.update', input: { id: toMove.id, status: 'done', project_id: '$ref:proj' } },
      { operation: 'tasks.delete', input: { id: toDrop.id } },
    ],
  };
}

describe('a changeset', () => {
  it('of mixed items with references is decided item by item and applied atomically (201 with each result)', async () => {
    const { toMove, toDrop, items } = await mixedItems('one');
    const response = await submit({ items });
    expect(response.statusCode).toBe(201);
    const body = json(response);
    const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
    expect(workflowId).toMatch(new RegExp(`^${org.organization.slug}:changesets\\.submit:`));
    expect(body.data.items.map((item: { decision: string }) => item.decision)).toEqual(['allow', 'allow', 'allow', 'allow']);
    const [project, followUp, moved, dropped] = body.data.items.map((item: { result: Record<string, unknown> }) => item.result);
    expect(project).toMatchObject({ name: 'Acme one' });
    expect(followUp).toMatchObject({ title: 'Follow up one', project_id: project.id });
    expect(moved).toMatchObject({ id: toMove.id, status: 'done', project_id: project.id });
    expect(dropped).toMatchObject({ id: toDrop.id });

    const tasks = await tasksOf(org.organization.id);
    expect(tasks.find((task) => task.id === toDrop.id)).toBeUndefined();
    expect(tasks.find((task) => task.id === toMove.id)).toMatchObject({ status: 'done', project_id: project.id });
    expect(tasks.filter((task) => task.title === 'Follow up one')).toHaveLength(1);

    // Every item's decision and applied write is recorded; the changeset is one write in applied_writes.
    const { rows: recorded } = await h.db.query(
      `SELECT i.idx, i.decision, i.applied_id, i.resource_type, i.applied_before IS NOT NULL AS has_before
       FROM changeset_items i JOIN changesets c ON c.id = i.changeset_id WHERE c.workflow_id = $1 ORDER BY i.idx`,
      [workflowId],
    );
    expect(recorded).toEqual([
      { idx: 0, decision: 'allow', applied_id: project.id, resource_type: 'Project', has_before: false },
      { idx: 1, decision: 'allow', applied_id: followUp.id, resource_type: 'Task', has_before: false },
      { idx: 2, decision: 'allow', applied_id: toMove.id, resource_type: 'Task', has_before: true },
      { idx: 3, decision: 'allow', applied_id: toDrop.id, resource_type: 'Task', has_before: true },
    ]);
    const { rows: applied } = await h.db.query('SELECT operation, resource_type FROM applied_writes WHERE workflow_id = $1', [workflowId]);
    expect(applied).toEqual([{ operation: 'changesets.submit', resource_type: 'Changeset' }]);
    const { rows: audit } = await h.db.query('SELECT type FROM audit_events WHERE workflow_id = $1 ORDER BY id', [workflowId]);
    expect(audit.map((row) => row.type)).toEqual([
      'gate.decided',
      ...Array(4).fill('changeset.item_decided'),
      ...Array(4).fill('changeset.item_applied'),
      'write.applied',
    ]);
    // Findable in Temporal like a gated write.
    const described = await h.temporal.workflow.getHandle(workflowId).describe();
    expect(described.type).toBe('changesetV1');
    expect(described.searchAttributes.GatehouseOperation).toEqual(['changesets.submit']);
    expect(described.searchAttributes.GatehouseDecision).toEqual(['allow']);
  });

  it('with one denied item changes nothing, and names the item with its reason and remediation (403)', async () => {
    const { toMove, toDrop, items } = await mixedItems('two', 'deny this follow-up');
    const projectsBefore = await projectNames(org.organization.id);
    const response = await submit({ items });
    expect(response.statusCode).toBe(403);
    const body = json(response);
    expect(body.error.code).toBe('policy_denied');
    expect(body.error.message).toContain('item 1 (tasks.create): The title asks to be denied');
    expect(body.error.details.denied_items).toEqual([1]);
    expect(body.error.details.items[1]).toMatchObject({
      index: 1,
      decision: 'deny',
      reason: 'The title asks to be denied',
      policy_ids: ['deny-when-asked'],
      remediation: { next_step: expect.stringContaining('does not start with "deny"') },
    });
    expect(body.error.details.items[0]).toMatchObject({ decision: 'allow', result: null });
    expect(await projectNames(org.organization.id)).toEqual(projectsBefore);
    const tasks = await tasksOf(org.organization.id);
    expect(tasks.find((task) => task.id === toMove.id)).toMatchObject({ status: 'todo', project_id: null });
    expect(tasks.find((task) => task.id === toDrop.id)).toBeDefined();
  });

  it('refuses unknown and forward refs, duplicate refs, bad item input and too many items (422 naming the item)', async () => {
    const forward = await submit({
      items: [
        { operation: 'tasks.create', input: { title: 'In a later project', project_id: '$ref:later' } },
        { ref: 'later', operation: 'projects.create', input: { name: 'Later' } },
      ],
    });
    expect(forward.statusCode).toBe(422);
    expect(json(forward).error.details.fields).toEqual([{ field: 'items.0.input.project_id', message: expect.stringContaining('$ref:later') }]);

    const invalid = await submit({ items: [{ operation: 'tasks.create', input: { title: 'ok' } }, { operation: 'tasks.create', input: { priority: 'urgent!' } }] });
    expect(invalid.statusCode).toBe(422);
    expect(json(invalid).error.details.fields.map((f: { field: string }) => f.field)).toEqual(expect.arrayContaining(['items.1.input.title']));

    const duplicate = await submit({
      items: [
        { ref: 'a', operation: 'projects.create', input: { name: 'A' } },
        { ref: 'a', operation: 'projects.create', input: { name: 'B' } },
      ],
    });
    expect(json(duplicate).error.details.fields).toEqual([{ field: 'items.1.ref', message: expect.stringContaining('already item 0') }]);

    const unknown = await submit({ items: [{ operation: 'invoices.create', input: {} }] });
    expect(unknown.statusCode).toBe(422);

    const tooMany = await submit({ items: Array.from({ length: 21 }, (_, i) => ({ operation: 'tasks.create', input: { title: `Task ${i}` } })) });
    expect(tooMany.statusCode).toBe(422);
    expect(json(tooMany).error.details.fields[0].field).toBe('items');
  });
});
