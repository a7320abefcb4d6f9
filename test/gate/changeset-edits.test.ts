import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { json, quorumPolicy, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Edit-then-approve for a held changeset, on the real Temporal dev server and PostgreSQL: a reviewer changes fields
// of an item as they approve it; the changeset as edited is decided by the policy again, and what is applied is the
// edited item, atomically with the rest.

let h: Harness;
let org: TestOrganization;

/** Writes allowed; "review…" titles held for one person, "big…" task creates for two; "deny…" titles denied. */
const editPolicy = `${quorumPolicy}
@id("deny-when-asked") @reason("The title asks to be denied")
forbid (principal, action, resource) when { resource has title && resource.title like "deny*" };
`;

beforeAll(async () => {
  h = await startHarness();
  org = await h.createOrganization({ policy: editPolicy });
});
afterAll(async () => {
  await h?.close();
});

const submit = (body: object, token = org.readWriteToken) => h.request({ method: 'POST', url: '/api/v1/changesets', token, payload: body });
const approve = (reviewId: string, payload: object, token = org.reviewerToken) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token, payload });
const readReview = async (reviewId: string, token = org.reviewerToken) => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}`, token })).data;
const auditOf = async (reviewId: string) =>
  (await h.db.query('SELECT type, actor_id, data FROM audit_events WHERE review_id = $1 ORDER BY id', [reviewId])).rows as { type: string; actor_id: string; data: Record<string, unknown> }[];
const tasksTitled = async (orgId: string, title: string) =>
  (await h.db.query('SELECT id, title, due_on::text, project_id, status FROM tasks WHERE org_id = $1 AND title = $2', [orgId, title])).rows;

async function hold(body: object, token = org.readWriteToken): Promise<string> {
  const response = await submit(body, token);
  expect(response.statusCode, response.body).toBe(202);
  return json(response).review.id as string;
}

async function person(of: TestOrganization, role: 'reviewer' | 'admin', name: string) {
  const user = await createUser(h.db, { orgId: of.organization.id, email: `${name}@${of.organization.slug}.test`, role });
  return { user, token: (await createPersonalToken(h.db, user)).token };
}

describe('edit, then approve a held changeset', () => {
  it('applies the edited item, atomically with the rest; the review shows the edit, the audit records it, the agent learns of it', async () => {
    const existing = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'Send the Acme quote' } })).data;
    const reviewId = await hold({
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Acme follow-up' } },
        { operation: 'tasks.create', input: { title: 'review the Acme contract draft', project_id: '$ref:proj', due_on: '2027-02-01' } },
        { operation: 'tasks.update', input: { id: existing.id, status: 'done', project_id: '$ref:proj' } },
      ],
    });
    const reviewer = (await h.db.query('SELECT id FROM users WHERE email = $1', [`reviewer@${org.organization.slug}.test`])).rows[0].id;

    const approved = await approve(reviewId, {
      comment: 'Sooner, and name it plainly',
      items: [{ index: 1, verdict: 'approved', edit: { title: 'review the Acme contract', due_on: '2027-01-15' } }],
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const review = json(approved).data;
    expect(review).toMatchObject({
      status: 'approved',
      edit: { fields: ['items.1.due_on', 'items.1.title'], by: { user_id: reviewer }, decision: { decision: 'review' } },
      approvals: { required: 1, given: [{ user_id: reviewer, comment: 'Sooner, and name it plainly' }] },
    });
    // The agent's version is kept; the item shows what the reviewer changed, and the policy's word on it.
    expect(review.changeset.items[1]).toMatchObject({
      input: { title: 'review the Acme contract draft', due_on: '2027-02-01', project_id: '$ref:proj' },
      edit: {
        fields: ['due_on', 'title'],
        by: { user_id: reviewer, email: `reviewer@${org.organization.slug}.test` },
        input: { title: 'review the Acme contract', due_on: '2027-01-15', project_id: '$ref:proj' },
        resource: { title: 'review the Acme contract', due_on: '2027-01-15' },
        decision: 'review',
        policy_ids: ['review-when-asked'],
      },
    });
    expect(review.changeset.items[0].edit).toBeNull();
    expect(review.changeset.items[2].edit).toBeNull();

    // Applied: the edited item, with its $ref to the project made in the same transaction as the other items.
    await expect.poll(async () => (await readReview(reviewId)).applied_at, { timeout: 15_000 }).not.toBeNull();
    const applied = await readReview(reviewId);
    const project = applied.result.items[0].result;
    expect(applied.result.items[1].result).toMatchObject({ title: 'review the Acme contract', due_on: '2027-01-15', project_id: project.id });
    expect(await tasksTitled(org.organization.id, 'review the Acme contract')).toEqual([
      expect.objectContaining({ due_on: '2027-01-15', project_id: project.id }),
    ]);
    expect(await tasksTitled(org.organization.id, 'review the Acme contract draft')).toEqual([]);
    expect(await tasksTitled(org.organization.id, 'Send the Acme quote')).toEqual([expect.objectContaining({ status: 'done', project_id: project.id })]);
    const { rows: when } = await h.db.query('SELECT DISTINCT applied_at FROM changeset_items WHERE changeset_id = $1', [review.changeset.id]);
    expect(when).toHaveLength(1);

    const audit = await auditOf(reviewId);
    expect(audit.map((event) => event.type)).toEqual([
      'gate.decided',
      'changeset.item_decided',
      'changeset.item_decided',
      'changeset.item_decided',
      'review.edited',
      'changeset.item_edited',
      'review.approved',
      'changeset.item_applied',
      'changeset.item_applied',
      'changeset.item_applied',
      'write.applied',
    ]);
    expect(audit[4]!.data).toMatchObject({ edit_id: review.edit.id, fields: ['items.1.due_on', 'items.1.title'], decision: 'review' });
    expect(audit[5]).toMatchObject({
      actor_id: reviewer,
      data: { changeset_id: review.changeset.id, item: 1, operation: 'tasks.create', edit_id: review.edit.id, fields: ['due_on', 'title'], decision: 'review' },
    });
    expect(audit[6]!.data).toMatchObject({ edit_id: review.edit.id });

    const followed = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${reviewId}/status`, token: org.readWriteToken })).data;
    expect(followed).toMatchObject({ status: 'approved', applied: true, edited: { fields: ['items.1.due_on', 'items.1.title'] } });
  });

  it('an edit the policy denies refuses the approval with the item and its reason; nothing is applied, and the refused edit stays on record', async () => {
    const reviewId = await hold({
      items: [
        { operation: 'tasks.create', input: { title: 'review plan A' } },
        { operation: 'tasks.create', input: { title: 'Plan B' } },
      ],
    });
    const refused = await approve(reviewId, { items: [{ index: 1, verdict: 'approved', edit: { title: 'deny plan B' } }] });
    expect(refused.statusCode).toBe(403);
    const error = json(refused).error;
    expect(error.code).toBe('policy_denied');
    expect(error.message).toContain('item 1 (tasks.create): The title asks to be denied');
    expect(error.details).toMatchObject({
      denied_items: [1],
      policy_ids: ['deny-when-asked'],
      items: [{ index: 1, operation: 'tasks.create', decision: 'deny', reason: 'The title asks to be denied' }],
    });

    expect(await readReview(reviewId)).toMatchObject({ status: 'pending', edit: null, approvals: { given: [] } });
    const audit = await auditOf(reviewId);
    expect(audit.map((event) => event.type).slice(3)).toEqual(['review.edited', 'changeset.item_edited']);
    expect(audit[3]!.data).toMatchObject({ decision: 'deny', fields: ['items.1.title'] });
    expect(audit[4]!.data).toMatchObject({ item: 1, decision: 'deny', reason: 'The title asks to be denied', policyIds: ['deny-when-asked'] });
    const { rows: kept } = await h.db.query(`SELECT e.decision, i.idx, i.decision AS item_decision FROM review_edits e JOIN changeset_item_edits i ON i.edit_id = e.id WHERE e.review_id = $1 ORDER BY i.idx`, [reviewId]);
    expect(kept).toEqual([
      { decision: 'deny', idx: 0, item_decision: 'review' },
      { decision: 'deny', idx: 1, item_decision: 'deny' },
    ]);
    expect(await tasksTitled(org.organization.id, 'deny plan B')).toEqual([]);
    expect(await tasksTitled(org.organization.id, 'review plan A')).toEqual([]);

    // The changeset as the agent sent it is still there to approve.
    const approved = await approve(reviewId, {});
    expect(json(approved).data).toMatchObject({ status: 'approved', edit: null });
    await expect.poll(async () => (await tasksTitled(org.organization.id, 'Plan B')).length, { timeout: 15_000 }).toBe(1);
    expect(await tasksTitled(org.organization.id, 'review plan A')).toHaveLength(1);
  });

  it('refuses a bad edit with 422 naming the field (a bad value, an unknown field, the record it names, a ref, a delete item), and changes nothing', async () => {
    const existing = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'Keep the old brief' } })).data;
    const reviewId = await hold({
      items: [
        { ref: 't', operation: 'tasks.create', input: { title: 'review the new brief' } },
        { operation: 'tasks.update', input: { id: '$ref:t', priority: 'high' } },
        { operation: 'tasks.delete', input: { id: existing.id } },
      ],
    });
    const cases: [object, string, string][] = [
      [{ index: 0, verdict: 'approved', edit: { priority: 'sky-high' } }, 'items.0.edit.priority', ''],
      [{ index: 0, verdict: 'approved', edit: { no_such_field: 1 } }, 'items.0.edit.no_such_field', 'unknown field'],
      [{ index: 0, verdict: 'approved', edit: { title: '' } }, 'items.0.edit.title', ''],
      [{ index: 1, verdict: 'approved', edit: { id: 'task_other' } }, 'items.0.edit.id', 'cannot be edited'],
      [{ index: 0, verdict: 'approved', edit: { project_id: '$ref:nowhere' } }, 'items.0.edit.project_id', 'no earlier item defines'],
      [{ index: 2, verdict: 'approved', edit: { title: 'x' } }, 'items.0.edit', 'only a create or update item can be edited; item 2 is tasks.delete'],
      [{ index: 0, verdict: 'approved', edit: { title: 'review the new brief', status: 'todo' } }, 'items.0.edit', 'changes nothing'],
    ];
    for (const [item, field, message] of cases) {
      const refused = await approve(reviewId, { items: [item] });
      expect(refused.statusCode, JSON.stringify(item)).toBe(422);
      const error = json(refused).error;
      expect(error.code).toBe('validation_failed');
      expect(error.details.fields, JSON.stringify(item)).toContainEqual({ field, message: expect.stringContaining(message) });
    }
    // A changeset is edited item by item, never with the single write's `edit`.
    const whole = await approve(reviewId, { edit: { title: 'review it all' } });
    expect(whole.statusCode).toBe(422);
    expect(json(whole).error.details.fields).toEqual([{ field: 'edit', message: expect.stringContaining('items[k].edit') }]);

    expect(await readReview(reviewId)).toMatchObject({ status: 'pending', edit: null, approvals: { given: [] } });
    expect((await auditOf(reviewId)).map((event) => event.type)).toEqual(['gate.decided', ...Array(3).fill('changeset.item_decided')]);
    expect((await h.db.query('SELECT 1 FROM review_edits WHERE review_id = $1', [reviewId])).rowCount).toBe(0);
    expect((await h.db.query('SELECT verdict FROM changeset_items WHERE changeset_id = (SELECT changeset_id FROM reviews WHERE id = $1)', [reviewId])).rows).toEqual([
      { verdict: null },
      { verdict: null },
      { verdict: null },
    ]);
    expect(await tasksTitled(org.organization.id, 'Keep the old brief')).toHaveLength(1);
  });

  it("refuses the key maker's own edit-then-approve (403 self_approval); an edit of a delete item is told first (422)", async () => {
    const site = await h.createOrganization({ policy: editPolicy });
    const maker = await person(site, 'admin', 'maker');
    const key = await createApiKey(h.db, { orgId: site.organization.id, label: "maker's agent", access: 'read_write' }, { type: 'user', id: maker.user.id });
    const existing = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title: 'Old note' } })).data;
    const reviewId = await hold(
      { items: [{ operation: 'tasks.create', input: { title: 'review my agent' } }, { operation: 'tasks.delete', input: { id: existing.id } }] },
      key.token,
    );
    const own = await approve(reviewId, { items: [{ index: 0, verdict: 'approved', edit: { title: 'review my agent, edited' } }] }, maker.token);
    expect(own.statusCode).toBe(403);
    expect(json(own).error.code).toBe('self_approval');
    const deletion = await approve(reviewId, { items: [{ index: 1, verdict: 'approved', edit: { title: 'x' } }] }, maker.token);
    expect(deletion.statusCode).toBe(422);
    expect((await h.db.query('SELECT 1 FROM review_edits WHERE review_id = $1', [reviewId])).rowCount).toBe(0);
    expect(await readReview(reviewId, site.reviewerToken)).toMatchObject({ status: 'pending', approvals: { given: [] } });
  });

  it('an edit a stricter rule holds raises the approvals needed (the editor the first of two); a later approver must have seen the edit', async () => {
    const second = await person(org, 'admin', 'cosigner');
    const reviewId = await hold({ items: [{ operation: 'tasks.create', input: { title: 'review a small plan' } }, { operation: 'projects.create', input: { name: 'Plans' } }] });
    const first = await approve(reviewId, { items: [{ index: 0, verdict: 'approved', edit: { title: 'big plan after all' } }] });
    expect(first.statusCode, first.body).toBe(200);
    const edited = json(first).data;
    expect(edited).toMatchObject({
      status: 'pending',
      approvals: { required: 2, given: [{ email: `reviewer@${org.organization.slug}.test` }] },
      changeset: { items: [{ edit: { decision: 'review', policy_ids: ['two-people-for-big-tasks'] } }, { edit: null }] },
    });
    expect(await tasksTitled(org.organization.id, 'big plan after all')).toEqual([]);

    const unseen = await approve(reviewId, {}, second.token);
    expect(unseen.statusCode).toBe(409);
    expect(json(unseen).error.details).toMatchObject({ edit_id: edited.edit.id });
    const done = await approve(reviewId, { seen_edit: edited.edit.id }, second.token);
    expect(json(done).data).toMatchObject({ status: 'approved' });
    await expect.poll(async () => (await tasksTitled(org.organization.id, 'big plan after all')).length, { timeout: 15_000 }).toBe(1);
    expect(await tasksTitled(org.organization.id, 'review a small plan')).toEqual([]);
  });

  it('divisible: one approval edits one item and rejects another; the kept items are applied, the edited one as edited', async () => {
    const reviewId = await hold({
      mode: 'divisible',
      items: [
        { ref: 'proj', operation: 'projects.create', input: { name: 'Divisible edits' } },
        { operation: 'tasks.create', input: { title: 'review divisible edit', project_id: '$ref:proj' } },
        { operation: 'tasks.create', input: { title: 'Divisible extra' } },
      ],
    });
    // An edit may not point at the record of an item rejected in the same approval.
    const dangling = await approve(reviewId, {
      items: [
        { index: 0, verdict: 'rejected', reason: 'No project' },
        { index: 1, verdict: 'rejected', reason: 'No project' },
        { index: 2, verdict: 'approved', edit: { project_id: '$ref:proj' } },
      ],
    });
    expect(dangling.statusCode).toBe(422);
    expect(json(dangling).error.details.fields).toEqual([{ field: 'items.2.edit.project_id', message: expect.stringContaining('made by item 0, which is rejected') }]);
    const both = await approve(reviewId, { items: [{ index: 2, verdict: 'rejected', reason: 'Not now', edit: { title: 'Divisible extra, edited' } }] });
    expect(json(both).error.details.fields).toEqual([{ field: 'items.0.edit', message: 'an item is edited only as it is approved' }]);
    const approved = await approve(reviewId, {
      items: [
        { index: 1, verdict: 'approved', edit: { title: 'review divisible edit, renamed' } },
        { index: 2, verdict: 'rejected', reason: 'Not now' },
      ],
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const review = json(approved).data;
    expect(review.changeset.items.map((item: { verdict: string | null }) => item.verdict)).toEqual([null, 'approved', 'rejected']);
    await expect.poll(async () => (await readReview(reviewId)).applied_at, { timeout: 15_000 }).not.toBeNull();
    const applied = await readReview(reviewId);
    expect(applied.result.items[1].result).toMatchObject({ title: 'review divisible edit, renamed', project_id: applied.result.items[0].result.id });
    expect(applied.result.items[2].result).toBeNull();
    expect(await tasksTitled(org.organization.id, 'Divisible extra')).toEqual([]);
  });

  it('an edit nested past 32 levels, or holding text the database cannot keep, is a 422 naming the field, never a 500; nothing changes', async () => {
    const reviewId = await hold({ items: [{ operation: 'tasks.create', input: { title: 'review a nested edit' } }, { operation: 'projects.create', input: { name: 'Nested' } }] });
    // Sent as text: 100,000 levels would overflow any recursive walk (the JSON parser takes it).
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const attempts = [
      { payload: `{"items":[{"index":0,"verdict":"approved","edit":{"description":${deep}}}]}`, field: 'items.0.edit.description' },
      { payload: JSON.stringify({ items: [{ index: 0, verdict: 'approved', edit: { title: 'nul \u0000 inside' } }] }), field: 'items.0.edit.title' },
      { payload: `{"edit":{"description":${deep}}}`, field: 'edit.description' },
    ];
    for (const { payload, field } of attempts) {
      const refused = await h.request({
        method: 'POST',
        url: `/api/v1/reviews/${reviewId}/approve`,
        token: org.reviewerToken,
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(refused.statusCode, refused.body.slice(0, 300)).toBe(422);
      expect(json(refused).error.details.fields).toEqual([expect.objectContaining({ field })]);
    }
    expect(await readReview(reviewId)).toMatchObject({ status: 'pending', edit: null, approvals: { given: [] } });
  });

  it('divisible, two approvals: an item the first approver rejected is not approved by the second (409); approving without it applies the rest', async () => {
    const second = await person(org, 'admin', 'second-look');
    const reviewId = await hold({
      mode: 'divisible',
      items: [{ operation: 'tasks.create', input: { title: 'big launch plan' } }, { operation: 'tasks.create', input: { title: 'Book the launch venue' } }],
    });
    const first = await approve(reviewId, { items: [{ index: 1, verdict: 'rejected', reason: 'We have a venue' }] });
    expect(json(first).data).toMatchObject({ status: 'pending' });
    const overruling = await approve(reviewId, { items: [{ index: 1, verdict: 'approved' }] }, second.token);
    expect(overruling.statusCode).toBe(409);
    expect(json(overruling).error).toMatchObject({ code: 'conflict', details: { item: 1 } });
    const done = await approve(reviewId, {}, second.token);
    expect(json(done).data).toMatchObject({ status: 'approved' });
    await expect.poll(async () => (await tasksTitled(org.organization.id, 'big launch plan')).length, { timeout: 15_000 }).toBe(1);
    expect(await tasksTitled(org.organization.id, 'Book the launch venue')).toEqual([]);
  });

  it("the agent's MCP task of a held changeset completes with the edited item (reviews are decided by people over REST and the console, not over MCP)", async () => {
    const mcp = await h.mcp(org.readWriteToken);
    const created = await mcp.request(
      {
        method: 'tools/call',
        params: { name: 'submit_changeset', arguments: { items: [{ operation: 'tasks.create', input: { title: 'review from an MCP changeset', priority: 'low' } }] }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name)).not.toContain('approve_review');
    const approved = await approve(created.task.taskId, { items: [{ index: 0, verdict: 'approved', edit: { priority: 'high' } }] });
    expect(approved.statusCode, approved.body).toBe(200);
    await expect.poll(async () => (await mcp.experimental.tasks.getTask(created.task.taskId)).status, { timeout: 15_000 }).toBe('completed');
    const done = await mcp.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ record: { items: [{ result: { title: 'review from an MCP changeset', priority: 'high' } }] } });
  });
});
