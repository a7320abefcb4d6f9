import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPerson, signIn } from '../support/console';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';

// Undo of applied gated writes, on the real Temporal server and PostgreSQL: an agent's undo decided by the policy
// over REST and MCP, a person's undo from the console, each restoring the record as it was before the write, and
// refused (409) when the record changed since, when undone already, or past the organization's window.

let h: Harness;
let acme: TestOrganization;
let globex: TestOrganization;

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.', policy: testPolicy });
  globex = await h.createOrganization({ name: 'Globex', policy: testPolicy });
});

afterAll(async () => {
  await h?.close();
});

async function write(method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, token = acme.readWriteToken) {
  const response = await h.request({ method, url: `/api/v1${url}`, token, payload });
  return { status: response.statusCode, body: json(response), write: response.headers['x-gatehouse-workflow-id'] as string };
}

const readTask = async (id: string, token = acme.readWriteToken) => h.request({ method: 'GET', url: `/api/v1/tasks/${id}`, token });
const agentUndo = (writeId: string, token = acme.readWriteToken) => h.request({ method: 'POST', url: '/api/v1/undo', token, payload: { write: writeId } });
const personUndo = (writeId: string, token = acme.reviewerToken) => h.request({ method: 'POST', url: `/api/v1/writes/${writeId}/undo`, token });

describe('an agent undoes its writes over REST, decided by the policy', () => {
  it('undo of a create removes the record; the write reads as undone, both ways in the audit trail', async () => {
    const created = await write('POST', '/tasks', { title: 'Call Acme back' });
    expect(created.status).toBe(201);
    const undone = await agentUndo(created.write);
    expect(undone.statusCode, undone.body).toBe(200);
    const undoId = undone.headers['x-gatehouse-workflow-id'];
    expect(json(undone).data).toMatchObject({ write: created.write, operation: 'tasks.create', outcome: 'removed', record: null, undone_by: undoId });
    expect((await readTask(created.body.data.id)).statusCode).toBe(404);

    const read = json(await h.request({ method: 'GET', url: `/api/v1/writes/${created.write}`, token: acme.readWriteToken })).data;
    expect(read).toMatchObject({ write: created.write, operation: 'tasks.create', undone_by: undoId, undoable_until: null });

    // The policy was asked with the undo's action, the record as the task it removes, and what it undoes.
    const { rows } = await h.db.query('SELECT operation, decision, resource, context FROM gate_decisions WHERE workflow_id = $1', [undoId]);
    expect(rows[0]).toMatchObject({ operation: 'writes.undo', decision: 'allow', resource: { title: 'Call Acme back' } });
    expect(rows[0].context.undoes).toMatchObject({ write: created.write, operation: 'tasks.create', kind: 'create', resource_type: 'Task' });

    const trail = json(await h.request({ method: 'GET', url: '/api/v1/audit-events?limit=20', token: acme.reviewerToken })).data as any[];
    const undoneEvent = trail.find((event) => event.type === 'write.undone' && event.data.undoes === created.write);
    expect(undoneEvent).toMatchObject({ workflow_id: undoId, actor: { type: 'api_key' }, resource_id: created.body.data.id, data: { outcome: 'removed' } });
    const appliedEvent = trail.find((event) => event.type === 'write.applied' && event.workflow_id === created.write);
    expect(appliedEvent).toMatchObject({ undone_by: undoId, undoable_until: null });
  });

  it('undo of an update reverts the fields (at a new version); of a delete restores the record with its id', async () => {
    const task = (await write('POST', '/tasks', { title: 'Draft the contract', priority: 'low', tags: ['legal'] })).body.data;
    const updated = await write('PATCH', `/tasks/${task.id}`, { title: 'Sign the contract', priority: 'urgent', due_on: '2026-05-01' });
    expect(updated.status).toBe(200);
    const reverted = await agentUndo(updated.write);
    expect(reverted.statusCode).toBe(200);
    expect(json(reverted).data).toMatchObject({ outcome: 'reverted', record: { id: task.id, title: 'Draft the contract', priority: 'low', due_on: null, version: 3 } });
    const back = json(await readTask(task.id)).data;
    expect(back).toMatchObject({ title: 'Draft the contract', priority: 'low', tags: ['legal'], due_on: null, version: 3, created_at: task.created_at });

    // Deletes are held for review by the test policy only when the title asks; this one is allowed.
    const deleted = await write('DELETE', `/tasks/${task.id}`);
    expect(deleted.status).toBe(200);
    expect((await readTask(task.id)).statusCode).toBe(404);
    const restored = await agentUndo(deleted.write);
    expect(restored.statusCode).toBe(200);
    expect(json(restored).data).toMatchObject({ outcome: 'restored', record: { id: task.id, title: 'Draft the contract', version: 4 } });
    expect(json(await readTask(task.id)).data).toMatchObject({ id: task.id, title: 'Draft the contract', tags: ['legal'], created_at: task.created_at, version: 4 });
  });

  it('an undo the policy holds waits for a person, then applies; context.undoes names the original', async () => {
    // Created as "review…" it is held; approved, there is an applied write to undo.
    const rows = [{ id: (await write('POST', '/tasks', { title: 'review the budget' })).body.review.id as string }];
    const approved = json(await h.request({ method: 'POST', url: `/api/v1/reviews/${rows[0]!.id}/approve`, token: acme.reviewerToken })).data;
    expect(approved).toMatchObject({ status: 'approved', result: { title: 'review the budget' }, undone_by: null });
    expect(approved.undoable_until).toBeTruthy();

    // The undo's resource is the record as it would be after: removed, it is the task titled "review…": held.
    const held = await agentUndo(approved.workflow_id);
    expect(held.statusCode).toBe(202);
    const undoReview = json(held).review.id as string;
    const seen = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${undoReview}`, token: acme.reviewerToken })).data;
    expect(seen).toMatchObject({ operation: 'writes.undo', proposed: { write: approved.workflow_id } });
    expect((await readTask(approved.result.id)).statusCode).toBe(200);
    const done = json(await h.request({ method: 'POST', url: `/api/v1/reviews/${undoReview}/approve`, token: acme.reviewerToken })).data;
    expect(done).toMatchObject({ status: 'approved', result: { write: approved.workflow_id, outcome: 'removed' } });
    expect((await readTask(approved.result.id)).statusCode).toBe(404);
    // The original's review now says it was undone, by the undo's workflow.
    const original = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${rows[0]!.id}`, token: acme.reviewerToken })).data;
    expect(original).toMatchObject({ undone_by: done.workflow_id, undoable_until: null });
  });

  it('refuses an undo after a later change (409 with the fields and the version), twice (409), and without the family ability', async () => {
    const task = (await write('POST', '/tasks', { title: 'Book the venue' })).body.data;
    const first = await write('PATCH', `/tasks/${task.id}`, { title: 'Book the big venue' });
    await write('PATCH', `/tasks/${task.id}`, { status: 'in_progress' });
    const stale = await agentUndo(first.write);
    expect(stale.statusCode).toBe(409);
    expect(json(stale).error).toMatchObject({ code: 'conflict', details: { reason: 'changed_since', changed_fields: ['status'], current_version: 3, undone_version: 2 } });
    expect(json(await readTask(task.id)).data).toMatchObject({ title: 'Book the big venue', status: 'in_progress' });

    const last = await write('PATCH', `/tasks/${task.id}`, { priority: 'high' });
    expect((await agentUndo(last.write)).statusCode).toBe(200);
    const again = await agentUndo(last.write);
    expect(again.statusCode).toBe(409);
    expect(json(again).error.details).toMatchObject({ reason: 'already_undone' });

    const projectsOnly = await acme.keyWith(['projects.read', 'projects.write']);
    const other = await write('PATCH', `/tasks/${task.id}`, { priority: 'low' });
    const refused = await agentUndo(other.write, projectsOnly);
    // A key reads and undoes only what its family abilities reach.
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('insufficient_ability');
  });

  it("tells a key that may not read another key's write only that its record changed, not which fields", async () => {
    const task = (await write('POST', '/tasks', { title: 'Plan the offsite' })).body.data;
    const renamed = await write('PATCH', `/tasks/${task.id}`, { title: 'Plan the offsite in May' });
    await write('PATCH', `/tasks/${task.id}`, { status: 'in_progress', description: 'Venue shortlist attached' });

    // Without reviews.read a key reads only its own writes (writes.get says not found) ...
    const narrow = await acme.keyWith(['tasks.read', 'tasks.write']);
    expect((await h.request({ method: 'GET', url: `/api/v1/writes/${renamed.write}`, token: narrow })).statusCode).toBe(404);
    const refused = await agentUndo(renamed.write, narrow);
    expect(refused.statusCode).toBe(409);
    const error = json(refused).error;
    expect(error.details).toEqual({ write: renamed.write, reason: 'changed_since' });
    expect(error.message).toBe(`tasks.update ${renamed.write} cannot be undone: its record changed since the write; nothing was undone`);
    for (const hidden of ['status', 'description', 'version']) expect(error.message).not.toContain(hidden);

    // ... and with it, it reads them all, and is told what changed.
    const reader = await acme.keyWith(['tasks.read', 'tasks.write', 'reviews.read']);
    const told = await agentUndo(renamed.write, reader);
    expect(told.statusCode).toBe(409);
    expect(json(told).error.details).toMatchObject({ reason: 'changed_since', changed_fields: ['description', 'status'], current_version: 3 });
    expect(json(await readTask(task.id)).data).toMatchObject({ title: 'Plan the offsite in May', status: 'in_progress' });
  });

  it("refuses an undo past the organization's window, which owners set", async () => {
    const created = await write('POST', '/tasks', { title: 'Old news' });
    await h.db.query(`UPDATE applied_writes SET applied_at = now() - interval '8 days' WHERE workflow_id = $1`, [created.write]);
    const late = await agentUndo(created.write);
    expect(late.statusCode).toBe(409);
    expect(json(late).error.details).toMatchObject({ reason: 'undo_window_passed', undo_window_days: 7 });

    const owner = await addPerson(h.db, acme.organization, 'owner');
    const session = await signIn(h.app, acme.organization, owner);
    const widened = await session.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { undo_window_days: 30 } });
    expect(widened.statusCode).toBe(200);
    expect(widened.json().data.undo_window_days).toBe(30);
    const bad = await session.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { undo_window_days: 0 } });
    expect(bad.statusCode).toBe(422);
    expect((await agentUndo(created.write)).statusCode).toBe(200);
    await session.request({ method: 'PATCH', url: '/console/api/v1/organization', payload: { undo_window_days: 7 } });
  });
});

describe('over MCP, with the SDK client', () => {
  it('an applied write names its id; undo_write takes it back, and a held undo says so', async () => {
    const mcp = await h.mcp(acme.readWriteToken);
    const created = (await mcp.callTool({ name: 'create_task', arguments: { title: 'Ping Globex' } })).structuredContent as any;
    expect(created).toMatchObject({ status: 'applied', write: expect.stringContaining(':tasks.create:') });
    const undone = (await mcp.callTool({ name: 'undo_write', arguments: { write: created.write } })).structuredContent as any;
    expect(undone).toMatchObject({ status: 'applied', record: { write: created.write, outcome: 'removed' } });
    expect((await readTask(created.record.id)).statusCode).toBe(404);
    const read = (await mcp.callTool({ name: 'get_applied_write', arguments: { write: created.write } })).structuredContent as any;
    expect(read).toMatchObject({ undone_by: undone.write });

    // Undoing a rename from "review…" gives a record titled "review…" back: the policy holds that undo.
    const task = (await mcp.callTool({ name: 'create_task', arguments: { title: 'Plain' } })).structuredContent as any;
    await h.db.query(`UPDATE tasks SET title = 'review me' WHERE id = $1`, [task.record.id]);
    await h.db.query(`UPDATE applied_writes SET undone_by = 'test' WHERE workflow_id = $1`, [task.write]);
    const renamed = (await mcp.callTool({ name: 'update_task', arguments: { id: task.record.id, title: 'Renamed' } })).structuredContent as any;
    expect(renamed.status).toBe('applied');
    const held = (await mcp.callTool({ name: 'undo_write', arguments: { write: renamed.write } })).structuredContent as any;
    expect(held).toMatchObject({ status: 'pending_review', review: { id: expect.stringMatching(/^rev_/) } });

    const again = (await mcp.callTool({ name: 'update_task', arguments: { id: task.record.id, title: 'Renamed twice' } })).structuredContent as any;
    await mcp.callTool({ name: 'update_task', arguments: { id: task.record.id, priority: 'high' } });
    const conflict = await mcp.callTool({ name: 'undo_write', arguments: { write: again.write } });
    expect(conflict.isError).toBe(true);
    expect(JSON.stringify(conflict.content)).toContain('changed since');
  });
});

describe('a person undoes from the console API', () => {
  it('a reviewer undoes an update at once, recorded with them as actor; a member may not', async () => {
    const task = (await write('POST', '/tasks', { title: 'Send the quote' })).body.data;
    const updated = await write('PATCH', `/tasks/${task.id}`, { title: 'Send the revised quote' });
    const reviewer = await addPerson(h.db, acme.organization, 'reviewer');
    const session = await signIn(h.app, acme.organization, reviewer);
    const member = await addPerson(h.db, acme.organization, 'member');
    const memberSession = await signIn(h.app, acme.organization, member);
    expect((await memberSession.request({ method: 'POST', url: `/console/api/v1/writes/${updated.write}/undo` })).statusCode).toBe(403);

    const undone = await session.request({ method: 'POST', url: `/console/api/v1/writes/${updated.write}/undo` });
    expect(undone.statusCode, undone.body).toBe(200);
    const data = undone.json().data;
    expect(data).toMatchObject({ write: updated.write, outcome: 'reverted', record: { title: 'Send the quote' }, undone_by: expect.stringMatching(/^undo_/) });
    const { rows } = await h.db.query(`SELECT actor_type, actor_id, data FROM audit_events WHERE type = 'write.undone' AND workflow_id = $1`, [data.undone_by]);
    expect(rows[0]).toMatchObject({ actor_type: 'user', actor_id: reviewer.user.id, data: { undoes: updated.write, operation: 'tasks.update' } });
    expect((await session.request({ method: 'POST', url: `/console/api/v1/writes/${updated.write}/undo` })).statusCode).toBe(409);
  });

  it('over REST with a personal token too', async () => {
    const created = await write('POST', '/tasks', { title: 'Via token' });
    const undone = await personUndo(created.write);
    expect(undone.statusCode).toBe(200);
    expect((await readTask(created.body.data.id)).statusCode).toBe(404);
  });
});

describe('tenancy', () => {
  it("another organization's write is not found, to its keys and its people; its record is untouched", async () => {
    const created = await write('POST', '/tasks', { title: 'Acme only' });
    // Named in an agent's body, it is a reference the organization does not hold (422 naming write), as for any write.
    const agent = await agentUndo(created.write, globex.readWriteToken);
    expect(agent.statusCode).toBe(422);
    expect(json(agent).error.details.fields).toEqual([{ field: 'write', message: expect.stringContaining('not found') }]);
    for (const response of [
      await personUndo(created.write, globex.reviewerToken),
      await h.request({ method: 'GET', url: `/api/v1/writes/${created.write}`, token: globex.readWriteToken }),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(json(response).error.code).toBe('not_found');
    }
    expect((await readTask(created.body.data.id)).statusCode).toBe(200);
  });
});

describe('an undo racing a change of the same record', () => {
  /** Sessions waiting for an advisory lock (the customers' sync lock), across the database. */
  const advisoryWaiters = async () =>
    Number((await h.db.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n);
  async function until(check: () => Promise<boolean>) {
    for (let tries = 0; tries < 200 && !(await check()); tries++) await new Promise((resolve) => setTimeout(resolve, 25));
  }

  it('answers 409 when a customers.update takes the customers lock first, never a deadlock (500)', async () => {
    for (let round = 0; round < 3; round++) {
      const created = await write('POST', '/customers', { name: `Queued ${round}` });
      const customerId = created.body.data.id as string;
      const updated = await write('PATCH', `/customers/${customerId}`, { notes: 'to be undone' });
      expect(updated.status).toBe(200);
      // Another customer write of the organization holds the customers' lock (as an import would): the update
      // queues on it first, then the undo; once it is released the two meet on the same record.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const holder = h.db.transaction(async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(hashtext('gatehouse.customers:' || $1))`, [acme.organization.id]);
        await released;
      });
      await until(async () => (await h.db.query(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted`)).rows[0].n > 0);
      const waitingBefore = await advisoryWaiters();
      const change = write('PATCH', `/customers/${customerId}`, { notes: `changed while the undo waits ${round}` });
      await until(async () => (await advisoryWaiters()) > waitingBefore);
      const undo = personUndo(updated.write);
      await until(async () => (await advisoryWaiters()) > waitingBefore + 1);
      release();
      await holder;
      const [changed, undone] = await Promise.all([change, undo]);
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      expect(undone.statusCode, undone.body).toBe(409);
      expect(json(undone).error.details).toMatchObject({ reason: 'changed_since', changed_fields: ['notes'] });
      const customer = json(await h.request({ method: 'GET', url: `/api/v1/customers/${customerId}`, token: acme.readWriteToken })).data;
      expect(customer.notes).toBe(`changed while the undo waits ${round}`);
    }
  });

  it('answers 200 or 409, never a 500: a customer undone while customers.update runs on it, round after round', async () => {
    for (let round = 0; round < 12; round++) {
      const created = await write('POST', '/customers', { name: `Racer ${round}` });
      expect(created.status).toBe(201);
      const updated = await write('PATCH', `/customers/${created.body.data.id}`, { notes: 'first change' });
      expect(updated.status).toBe(200);
      const [undo, ...changes] = await Promise.all([
        personUndo(updated.write),
        write('PATCH', `/customers/${created.body.data.id}`, { notes: `racing change ${round}` }),
        write('PATCH', `/customers/${created.body.data.id}`, { tags: [`race-${round}`] }),
      ]);
      expect([200, 409], undo.body).toContain(undo.statusCode);
      for (const change of changes) expect([200, 409], JSON.stringify(change.body)).toContain(change.status);
    }
  });
});
