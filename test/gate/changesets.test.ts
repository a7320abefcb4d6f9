import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, textOf } from '../support/mcp';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';
import { newId } from '../../domain/kit/ids';

let h: Harness;
let org: TestOrganization;
let other: TestOrganization;
let baseUrl: string;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness();
  [org, other] = await Promise.all([h.createOrganization(), h.createOrganization()]);
  baseUrl = await h.listen();
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await h?.close();
});

const approve = (reviewId: string, payload: object = {}) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token: org.reviewerToken, payload });

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

  it('refuses an item input nested too deep (422 naming the field), never walking it into a stack overflow; nothing written', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const before = await tasksOf(org.organization.id);
    // 33 levels is one too many; 200,000 would overflow any recursive walk (the JSON parser takes it).
    for (const depth of [32, 200_000]) {
      for (const [field, input] of [
        ['project_id', `{"title":"Too deep","project_id":${nested(depth)}}`],
        ['extra', `{"title":"Too deep","extra":{"a":${nested(depth)}}}`],
      ]) {
        const response = await h.request({
          method: 'POST',
          url: '/api/v1/changesets',
          token: org.readWriteToken,
          headers: { 'content-type': 'application/json', 'idempotency-key': `deep-${depth}-${field}` },
          payload: `{"items":[{"operation":"tasks.create","input":{"title":"fine"}},{"operation":"tasks.create","input":${input}}]}`,
        });
        expect(response.statusCode, response.body).toBe(422);
        expect(json(response).error.details.fields).toEqual([{ field: `items.1.input.${field}`, message: 'nests more than 32 levels deep (objects and lists inside each other)' }]);
      }
    }
    // 32 levels in all (the input itself and 31 inside it) is within the bound: the write's own schema answers.
    const within = await submit({ items: [{ operation: 'tasks.create', input: { title: 'Deep enough', project_id: JSON.parse(nested(31)) } }] });
    expect(within.statusCode).toBe(422);
    expect(json(within).error.details.fields).toEqual([{ field: 'items.0.input.project_id', message: expect.stringContaining('expected string') }]);

    const mcp = await connectMcp(baseUrl, org.readWriteToken);
    clients.push(mcp);
    const overMcp = await mcp.callTool({
      name: 'submit_changeset',
      arguments: { items: [{ operation: 'tasks.create', input: { title: 'Too deep', project_id: JSON.parse(nested(100)) } }] },
    });
    expect(overMcp.isError).toBe(true);
    expect(textOf(overMcp)).toContain('items.0.input.project_id: nests more than 32 levels deep');
    expect(await tasksOf(org.organization.id)).toEqual(before);
  });

  it('Idempotency-Key: the same changeset again replays the answer and applies nothing twice; another body under the key is refused', async () => {
    const items = [
      { ref: 'p', operation: 'projects.create', input: { name: 'Idempotent project' } },
      { operation: 'tasks.create', input: { title: 'Idempotent task', project_id: '$ref:p' } },
    ];
    const first = await submit({ items }, org.readWriteToken, { 'idempotency-key': 'cs-replay-1' });
    const again = await submit({ items }, org.readWriteToken, { 'idempotency-key': 'cs-replay-1' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-gatehouse-workflow-id']).toBe(first.headers['x-gatehouse-workflow-id']);
    expect(json(again).data).toEqual(json(first).data);
    expect((await projectNames(org.organization.id)).filter((name) => name === 'Idempotent project')).toHaveLength(1);
    const reused = await submit({ items: items.slice(0, 1) }, org.readWriteToken, { 'idempotency-key': 'cs-replay-1' });
    expect(json(reused).error.code).toBe('idempotency_key_reused');
  });

  it('held: one item for review holds the whole as ONE review listing every item; approved via the review API, all items are applied in one transaction', async () => {
    const { toMove, toDrop, items } = await mixedItems('held', 'review this follow-up');
    const response = await submit({ items });
    expect(response.statusCode).toBe(202);
    const body = json(response);
    expect(body.error.code).toBe('pending_review');
    expect(body.error.details.held_items).toEqual([1]);
    expect(body.error.details.items.map((item: { decision: string }) => item.decision)).toEqual(['allow', 'review', 'allow', 'allow']);
    const reviewId = body.review.id as string;
    expect(await projectNames(org.organization.id)).not.toContain('Acme held');

    const queue = json(await h.request({ method: 'GET', url: '/api/v1/reviews?status=pending&operation=changesets.submit', token: org.reviewerToken })).data;
    const card = queue.find((review: { id: string }) => review.id === reviewId);
    expect(card.changeset.mode).toBe('all_or_nothing');
    expect(card.changeset.items.map((item: { operation: string; decision: string }) => `${item.operation}:${item.decision}`)).toEqual([
      'projects.create:allow',
      'tasks.create:review',
      'tasks.update:allow',
      'tasks.delete:allow',
    ]);
    expect(card.changeset.items[2].before).toMatchObject({ id: toMove.id, status: 'todo' });
    // The input keeps "$ref:proj"; references say which earlier item makes the record it is proposed under.
    const proposedProject = card.changeset.items[0].resource_id;
    expect(card.changeset.items[1].input.project_id).toBe('$ref:proj');
    expect(card.changeset.items[1].resource.project_id).toBe(proposedProject);
    expect(card.changeset.items.map((item: { references: unknown[] }) => item.references)).toEqual([
      [],
      [{ field: 'project_id', ref: 'proj', item: 0, resource_type: 'Project' }],
      [{ field: 'project_id', ref: 'proj', item: 0, resource_type: 'Project' }],
      [],
    ]);

    // An all-or-nothing changeset is decided whole: per-item verdicts are refused.
    const divided = await approve(reviewId, { items: [{ index: 1, verdict: 'rejected', reason: 'no' }] });
    expect(divided.statusCode).toBe(422);

    const approved = await approve(reviewId, { comment: 'All of it' });
    expect(approved.statusCode).toBe(200);
    const review = json(approved).data;
    expect(review.status).toBe('approved');
    expect(review.applied_at).not.toBeNull();
    const project = review.result.items[0].result;
    expect(project).toMatchObject({ name: 'Acme held' });
    expect(review.result.items[1].result).toMatchObject({ title: 'review this follow-up', project_id: project.id });
    const tasks = await tasksOf(org.organization.id);
    expect(tasks.find((task) => task.id === toMove.id)).toMatchObject({ status: 'done', project_id: project.id });
    expect(tasks.find((task) => task.id === toDrop.id)).toBeUndefined();
    // One transaction: every item's applied row carries the same transaction's time.
    const { rows } = await h.db.query('SELECT DISTINCT applied_at FROM changeset_items WHERE changeset_id = $1', [review.changeset.id]);
    expect(rows).toHaveLength(1);
    const outcome = await h.temporal.workflow.getHandle(review.workflow_id).result();
    expect(outcome.resolution).toMatchObject({ status: 'approved' });
  });

  it('divisible: a reviewer rejects one item (with a reason) and the rest is applied together; a dependant of a rejected item is refused', async () => {
    const items = [
      { ref: 'proj', operation: 'projects.create', input: { name: 'Divisible project' } },
      { operation: 'tasks.create', input: { title: 'review divisible task', project_id: '$ref:proj' } },
      { operation: 'tasks.create', input: { title: 'Divisible standalone' } },
    ];
    const held = json(await submit({ mode: 'divisible', items }));
    const reviewId = held.review.id as string;

    const noReason = await approve(reviewId, { items: [{ index: 2, verdict: 'rejected' }] });
    expect(noReason.statusCode).toBe(422);
    expect(json(noReason).error.details.fields).toEqual([{ field: 'items.0.reason', message: 'a rejected item needs a reason' }]);
    const dependant = await approve(reviewId, { items: [{ index: 0, verdict: 'rejected', reason: 'No new project' }] });
    expect(dependant.statusCode).toBe(422);
    expect(json(dependant).error.message).toContain('item 1 (tasks.create) refers to $ref:proj, made by item 0, which is rejected');
    const everything = await approve(reviewId, {
      items: [0, 1, 2].map((index) => ({ index, verdict: 'rejected', reason: 'none of it' })),
    });
    expect(json(everything).error.details.fields[0].message).toContain('deny the review instead');

    const approved = await approve(reviewId, { items: [{ index: 2, verdict: 'rejected', reason: 'Not needed' }] });
    expect(approved.statusCode).toBe(200);
    const review = json(approved).data;
    expect(review.changeset.items.map((item: { verdict: string | null }) => item.verdict)).toEqual([null, null, 'rejected']);
    expect(review.changeset.items[2].verdict_reason).toBe('Not needed');
    expect(review.result.items[2].result).toBeNull();
    const project = review.result.items[0].result;
    expect(review.result.items[1].result).toMatchObject({ title: 'review divisible task', project_id: project.id });
    const titles = (await tasksOf(org.organization.id)).map((task) => task.title);
    expect(titles).toContain('review divisible task');
    expect(titles).not.toContain('Divisible standalone');
    const { rows: audit } = await h.db.query(`SELECT data FROM audit_events WHERE review_id = $1 AND type = 'changeset.item_rejected'`, [reviewId]);
    expect(audit).toEqual([{ data: expect.objectContaining({ item: 2, reason: 'Not needed' }) }]);
  });

  it('divisible: a kept item the policy allowed only because of a rejected one is asked again, and refuses the whole (409, nothing applied)', async () => {
    // Deleting an event waits for a person; a double booking is denied. The booking was allowed because the
    // changeset deleted the event in its slot first: without that delete it would be a double booking.
    const site = await h.createOrganization({
      policy: `
@id("allow-writes") permit (principal, action, resource);
@id("deletes-wait") @decision("review") @reason("Deleting an event waits for a person") permit (principal, action == Action::"calendar.delete", resource);
@id("no-double-booking") @reason("That time is taken") forbid (principal, action == Action::"calendar.book", resource) when { context.double_booked };`,
    });
    const member = newId('mem');
    await h.db.query(`INSERT INTO team_members (id, org_id, name) VALUES ($1, $2, 'Grace Hopper')`, [member, site.organization.id]);
    const slot = { starts_at: '2027-03-01T09:00:00Z', ends_at: '2027-03-01T10:00:00Z', attendee_ids: [member] };
    const booked = await h.request({ method: 'POST', url: '/api/v1/calendar/events', token: site.readWriteToken, payload: { title: 'Standing meeting', ...slot } });
    expect(booked.statusCode, booked.body).toBe(201);
    const held = json(
      await submit(
        {
          mode: 'divisible',
          items: [
            { operation: 'calendar.delete', input: { id: json(booked).data.id } },
            { operation: 'calendar.book', input: { title: 'Customer call', ...slot } },
          ],
        },
        site.readWriteToken,
      ),
    );
    expect(held.error.code).toBe('pending_review');
    const rejected = await h.request({
      method: 'POST',
      url: `/api/v1/reviews/${held.review.id}/approve`,
      token: site.reviewerToken,
      payload: { items: [{ index: 0, verdict: 'rejected', reason: 'Keep the standing meeting' }] },
    });
    const review = json(rejected).data;
    expect(review).toMatchObject({ status: 'approved', failure: { code: 'conflict', message: expect.stringContaining('the policy would now deny it (That time is taken)') } });
    const { rows } = await h.db.query('SELECT title FROM events WHERE org_id = $1 ORDER BY title', [site.organization.id]);
    expect(rows.map((row) => row.title)).toEqual(['Standing meeting']);
  });

  it('cannot hold an undo as an item: an undo takes back an applied write on its own (422)', async () => {
    const task = await createTask('Undo me later');
    const { rows } = await h.db.query(`SELECT workflow_id FROM applied_writes WHERE org_id = $1 AND resource_id = $2`, [org.organization.id, task.id]);
    const refused = await submit({ items: [{ operation: 'writes.undo', input: { write: rows[0].workflow_id } }] });
    expect(refused.statusCode).toBe(422);
    expect(json(refused).error.code).toBe('validation_failed');
    expect((await tasksOf(org.organization.id)).map((row) => row.id)).toContain(task.id);
  });

  it('a failure in the middle of applying a held changeset leaves nothing applied, and the retry applies it exactly once', async () => {
    // A fault on the 3rd item, armed after the decision: every attempt fails there until it is disarmed.
    await h.db.query(`
      CREATE SEQUENCE IF NOT EXISTS changeset_faults;
      CREATE TABLE IF NOT EXISTS changeset_fault_armed (title text PRIMARY KEY, times int NOT NULL);
      CREATE OR REPLACE FUNCTION changeset_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM changeset_fault_armed WHERE title = NEW.title)
           AND nextval('changeset_faults') <= (SELECT times FROM changeset_fault_armed WHERE title = NEW.title) THEN
          RAISE EXCEPTION 'injected fault while applying %', NEW.title;
        END IF;
        RETURN NEW;
      END $$;
      DROP TRIGGER IF EXISTS changeset_fault ON tasks;
      CREATE TRIGGER changeset_fault BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION changeset_fault();`);
    const items = [
      { ref: 'proj', operation: 'projects.create', input: { name: 'Faulty project' } },
      { operation: 'tasks.create', input: { title: 'review faulty first', project_id: '$ref:proj' } },
      { operation: 'tasks.create', input: { title: 'Faulty third', project_id: '$ref:proj' } },
      { operation: 'tasks.create', input: { title: 'Faulty fourth' } },
    ];
    const held = json(await submit({ items }));
    await h.db.query(`INSERT INTO changeset_fault_armed VALUES ('Faulty third', 1000000)`);
    const approval = approve(held.review.id);
    await expect.poll(async () => Number((await h.db.query('SELECT last_value FROM changeset_faults')).rows[0].last_value), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    // Two attempts failed on the 3rd item: nothing of the changeset is written.
    expect(await projectNames(org.organization.id)).not.toContain('Faulty project');
    expect((await tasksOf(org.organization.id)).map((task) => task.title)).not.toContain('review faulty first');
    expect((await h.db.query('SELECT applied_at FROM reviews WHERE id = $1', [held.review.id])).rows[0].applied_at).toBeNull();
    await h.db.query(`DELETE FROM changeset_fault_armed WHERE title = 'Faulty third'`);

    const review = json(await approval).data;
    expect(review.status).toBe('approved');
    expect(review.failure).toBeNull();
    await expect.poll(async () => (await h.db.query('SELECT applied_at FROM reviews WHERE id = $1', [held.review.id])).rows[0].applied_at, { timeout: 15_000 }).not.toBeNull();
    expect((await projectNames(org.organization.id)).filter((name) => name === 'Faulty project')).toHaveLength(1);
    const titles = (await tasksOf(org.organization.id)).map((task) => task.title);
    for (const title of ['review faulty first', 'Faulty third', 'Faulty fourth']) expect(titles.filter((t) => t === title)).toHaveLength(1);
    const { rows: audit } = await h.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE review_id = $1 AND type = 'changeset.item_applied'`, [held.review.id]);
    expect(audit[0].n).toBe(4);
    await h.db.query('DROP TRIGGER changeset_fault ON tasks');
  }, 60_000);

  it('a failure while an allowed changeset is decided and applied (the local activity) is retried: applied once', async () => {
    await h.db.query(`
      ALTER SEQUENCE changeset_faults RESTART;
      DROP TRIGGER IF EXISTS changeset_fault ON tasks;
      CREATE TRIGGER changeset_fault BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION changeset_fault();
      INSERT INTO changeset_fault_armed VALUES ('Allowed faulty third', 2);`);
    const response = await submit({
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Allowed faulty project' } },
        { operation: 'tasks.create', input: { title: 'Allowed faulty second', project_id: '$ref:proj' } },
        { operation: 'tasks.create', input: { title: 'Allowed faulty third', project_id: '$ref:proj' } },
      ],
    });
    await h.db.query('DROP TRIGGER changeset_fault ON tasks');
    expect(response.statusCode).toBe(201);
    expect(Number((await h.db.query('SELECT last_value FROM changeset_faults')).rows[0].last_value)).toBe(3);
    expect((await projectNames(org.organization.id)).filter((name) => name === 'Allowed faulty project')).toHaveLength(1);
    expect((await tasksOf(org.organization.id)).filter((task) => task.title.startsWith('Allowed faulty'))).toHaveLength(2);
  }, 60_000);

  it("refuses another organization's records in an item, naming the item (and writes nothing)", async () => {
    const theirs = json(await h.request({ method: 'POST', url: '/api/v1/projects', token: other.readWriteToken, payload: { name: 'Theirs' } })).data;
    const before = await projectNames(org.organization.id);
    const update = await submit({
      items: [
        { operation: 'projects.create', input: { name: 'Ours before theirs' } },
        { operation: 'projects.update', input: { id: theirs.id, name: 'Taken over' } },
      ],
    });
    expect(update.statusCode).toBe(404);
    expect(json(update).error).toMatchObject({ code: 'not_found', details: { item: 1, operation: 'projects.update' } });
    const reference = await submit({ items: [{ operation: 'tasks.create', input: { title: 'In their project', project_id: theirs.id } }] });
    expect(reference.statusCode).toBe(422);
    expect(json(reference).error.details.fields).toEqual([{ field: 'items.0.input.project_id', message: expect.any(String) }]);
    expect(await projectNames(org.organization.id)).toEqual(before);
    expect((await h.db.query('SELECT name FROM projects WHERE id = $1', [theirs.id])).rows[0].name).toBe('Theirs');
  });

  it("needs each item's own write ability, refused before any policy runs", async () => {
    const tasksOnly = await org.keyWith(['tasks.read', 'tasks.write']);
    const response = await submit({ items: [{ operation: 'tasks.create', input: { title: 'fine' } }, { operation: 'projects.create', input: { name: 'not allowed' } }] }, tasksOnly);
    expect(response.statusCode).toBe(403);
    expect(json(response).error.message).toContain('item 1 (projects.create)');
    expect(json(response).error.details).toMatchObject({ item: 1 });
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM gate_decisions WHERE org_id = $1 AND input::text LIKE '%not allowed%'`, [org.organization.id]);
    expect(rows[0].n).toBe(0);
    const readOnly = await submit({ items: [{ operation: 'tasks.create', input: { title: 'nope' } }] }, org.readOnlyToken);
    expect(readOnly.statusCode).toBe(403);
  });
});

describe('a changeset over MCP', () => {
  it("submit_changeset with the SDK's client: applied with each record; held as a task that completes once a person approves", async () => {
    const mcp = await connectMcp(baseUrl, org.readWriteToken);
    clients.push(mcp);
    const { tools } = await mcp.listTools();
    expect(tools.find((tool) => tool.name === 'submit_changeset')?.execution).toEqual({ taskSupport: 'optional' });

    const applied = await mcp.callTool({
      name: 'submit_changeset',
      arguments: { items: [{ ref: 'p', operation: 'projects.create', input: { name: 'MCP project' } }, { operation: 'tasks.create', input: { title: 'MCP task', project_id: '$ref:p' } }] },
    });
    expect(applied.isError).toBeFalsy();
    const record = (applied.structuredContent as { record: { items: { result: { id: string; project_id?: string } }[] } }).record;
    expect(record.items[1]!.result.project_id).toBe(record.items[0]!.result.id);

    const denied = await mcp.callTool({ name: 'submit_changeset', arguments: { items: [{ operation: 'tasks.create', input: { title: 'deny over mcp' } }] } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain("Denied by the organization's policy");
    expect(textOf(denied)).toContain('deny-when-asked');

    const created = await mcp.request(
      { method: 'tools/call', params: { name: 'submit_changeset', arguments: { items: [{ operation: 'tasks.create', input: { title: 'review over mcp' } }] }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({ taskId: expect.stringMatching(/^rev_/), status: 'working' });
    expect((await approve(created.task.taskId)).statusCode).toBe(200);
    await expect.poll(async () => (await mcp.experimental.tasks.getTask(created.task.taskId)).status, { timeout: 10_000 }).toBe('completed');
    const done = await mcp.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(done.isError).toBeFalsy();
    expect(JSON.stringify(done.structuredContent)).toContain('review over mcp');
  });
});

describe('undo of a changeset', () => {
  const personUndo = (writeId: string) => h.request({ method: 'POST', url: `/api/v1/writes/${writeId}/undo`, token: org.reviewerToken });
  const agentUndo = (writeId: string, token = org.readWriteToken) => h.request({ method: 'POST', url: '/api/v1/undo', token, payload: { write: writeId } });
  const taskRow = async (id: string) => (await h.db.query('SELECT * FROM tasks WHERE org_id = $1 AND id = $2', [org.organization.id, id])).rows[0];

  it('by a person: every applied item is taken back in reverse order, in one transaction, restoring each earlier version; linked both ways; once', async () => {
    const { toMove, toDrop, items } = await mixedItems('undo-one');
    const movedBefore = await taskRow(toMove.id);
    const droppedBefore = await taskRow(toDrop.id);
    const response = await submit({ items });
    expect(response.statusCode).toBe(201);
    const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
    const [project, followUp] = json(response).data.items.map((item: { result: Record<string, unknown> }) => item.result);

    const undone = await personUndo(workflowId);
    expect(undone.statusCode, undone.body).toBe(200);
    const body = json(undone).data;
    expect(body).toMatchObject({ write: workflowId, operation: 'changesets.submit', resource_type: 'Changeset', outcome: 'undone', record: null });
    expect(body.undone_by).toMatch(/^undo_/);
    expect(body.items.map((item: { index: number; outcome: string }) => [item.index, item.outcome])).toEqual([
      [0, 'removed'],
      [1, 'removed'],
      [2, 'reverted'],
      [3, 'restored'],
    ]);

    // Every earlier version is back: the project and its task gone, the moved task's fields as before, the dropped task with its id.
    expect((await h.db.query('SELECT 1 FROM projects WHERE id = $1', [project.id])).rowCount).toBe(0);
    expect(await taskRow(followUp.id)).toBeUndefined();
    const moved = await taskRow(toMove.id);
    expect(moved).toMatchObject({ status: movedBefore.status, project_id: null, title: movedBefore.title, version: movedBefore.version + 2 });
    const dropped = await taskRow(toDrop.id);
    expect(dropped).toMatchObject({ id: toDrop.id, title: droppedBefore.title, status: droppedBefore.status, version: droppedBefore.version + 1 });
    expect(dropped.created_at).toEqual(droppedBefore.created_at);

    // Linked both ways: the changeset reads as undone; the trail names the changeset it undoes, item by item in reverse.
    const read = json(await h.request({ method: 'GET', url: `/api/v1/writes/${workflowId}`, token: org.reviewerToken })).data;
    expect(read).toMatchObject({ write: workflowId, resource_type: 'Changeset', undone_by: body.undone_by, undoable_until: null });
    const { rows: trail } = await h.db.query('SELECT type, resource_type, resource_id, data FROM audit_events WHERE workflow_id = $1 ORDER BY id', [body.undone_by]);
    expect(trail.map((row) => [row.type, row.data.item ?? null])).toEqual([
      ['changeset.item_undone', 3],
      ['changeset.item_undone', 2],
      ['changeset.item_undone', 1],
      ['changeset.item_undone', 0],
      ['write.undone', null],
    ]);
    expect(trail[4]).toMatchObject({ resource_type: 'Changeset', data: { operation: 'changesets.submit', undoes: workflowId, outcome: 'undone' } });

    const again = await personUndo(workflowId);
    expect(again.statusCode).toBe(409);
    expect(json(again).error.details).toMatchObject({ reason: 'already_undone', undone_by: body.undone_by });
    const agentAgain = await agentUndo(workflowId);
    expect(agentAgain.statusCode).toBe(409);
  });

  it("after a later change to one item's record: 409 listing each changed item with what changed, and nothing undone", async () => {
    const { toMove, toDrop, items } = await mixedItems('undo-two');
    const response = await submit({ items });
    const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
    const [project, followUp] = json(response).data.items.map((item: { result: Record<string, unknown> }) => item.result);
    const later = await h.request({ method: 'PATCH', url: `/api/v1/tasks/${toMove.id}`, token: org.readWriteToken, payload: { priority: 'urgent' } });
    expect(later.statusCode).toBe(200);

    for (const refused of [await personUndo(workflowId), await agentUndo(workflowId)]) {
      expect(refused.statusCode).toBe(409);
      const error = json(refused).error;
      expect(error.code).toBe('conflict');
      expect(error.message).toContain('item 2 (tasks.update)');
      expect(error.details).toMatchObject({ write: workflowId, reason: 'changed_since' });
      expect(error.details.items).toEqual([
        expect.objectContaining({ item: 2, operation: 'tasks.update', resource_id: toMove.id, changed_fields: ['priority'], current_version: json(later).data.version }),
      ]);
    }
    // Nothing was undone.
    expect((await h.db.query('SELECT 1 FROM projects WHERE id = $1', [project.id])).rowCount).toBe(1);
    expect(await taskRow(followUp.id)).toBeDefined();
    expect(await taskRow(toDrop.id)).toBeUndefined();
    expect((await h.db.query('SELECT undone_by FROM applied_writes WHERE workflow_id = $1', [workflowId])).rows[0].undone_by).toBeNull();
  });

  it("by an agent: a gated write the policy sees as the Changeset with context.undoes listing the items; a record written twice in it is taken back too", async () => {
    const response = await submit({
      items: [
        { ref: 't', operation: 'tasks.create', input: { title: 'Draft undo-three' } },
        { operation: 'tasks.update', input: { id: '$ref:t', title: 'Final undo-three' } },
      ],
    });
    expect(response.statusCode).toBe(201);
    const workflowId = response.headers['x-gatehouse-workflow-id'] as string;
    const task = json(response).data.items[1].result;
    const undone = await agentUndo(workflowId);
    expect(undone.statusCode, undone.body).toBe(200);
    const undoId = undone.headers['x-gatehouse-workflow-id'] as string;
    expect(json(undone).data).toMatchObject({ write: workflowId, outcome: 'undone', undone_by: undoId, items: [{ index: 0, outcome: 'removed' }, { index: 1, outcome: 'reverted' }] });
    expect(await taskRow(task.id)).toBeUndefined();

    const { rows } = await h.db.query('SELECT operation, decision, resource, context FROM gate_decisions WHERE workflow_id = $1', [undoId]);
    expect(rows[0]).toMatchObject({ operation: 'writes.undo', decision: 'allow' });

    // A policy tells a changeset's undo by its type.
    const strict = await h.createOrganization({
      policy: `${testPolicy}\n@id("no-changeset-undos") @reason("Changesets are undone by people")\nforbid (principal, action == Action::"writes.undo", resource is Changeset);\n`,
    });
    const strictSubmitted = await submit({ items: [{ operation: 'tasks.create', input: { title: 'Strict undo-three' } }] }, strict.readWriteToken);
    expect(strictSubmitted.statusCode).toBe(201);
    const forbidden = await agentUndo(strictSubmitted.headers['x-gatehouse-workflow-id'] as string, strict.readWriteToken);
    expect(forbidden.statusCode).toBe(403);
    expect(json(forbidden).error.details).toMatchObject({ policy_ids: ['no-changeset-undos'] });
    expect(rows[0].resource.items).toEqual([
      expect.objectContaining({ index: 0, operation: 'tasks.create', kind: 'create', resource_id: task.id, restored: null }),
      expect.objectContaining({ index: 1, operation: 'tasks.update', kind: 'update', resource_id: task.id }),
    ]);
    expect(rows[0].context.undoes).toMatchObject({ write: workflowId, operation: 'changesets.submit', kind: 'changeset', resource_type: 'Changeset' });
    expect(rows[0].context.undoes.items).toHaveLength(2);
    expect(json(await h.request({ method: 'GET', url: `/api/v1/writes/${workflowId}`, token: org.readWriteToken })).data.undone_by).toBe(undoId);
  });
});
