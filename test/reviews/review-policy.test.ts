import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../domain/identity/api-keys';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { findOrganization, updateOrganization } from '../../domain/identity/organizations';
import { compilePolicySet } from '../../policy/engine';
import { json, quorumPolicy, startHarness, type Harness, type TestOrganization } from '../support/harness';

// Who approves a held write, on the real Temporal dev server and PostgreSQL: a rule may ask for more than one
// person (@approvals), and nobody approves a write made with a key they created unless the organization allows it.

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

/** A person of the organization with a personal token. */
async function person(org: TestOrganization, role: 'reviewer' | 'admin' | 'owner', name: string) {
  const user = await createUser(h.db, { orgId: org.organization.id, email: `${name}@${org.organization.slug}.test`, role });
  return { user, token: (await createPersonalToken(h.db, user)).token };
}

const hold = async (token: string, title: string) => {
  const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token, payload: { title } });
  expect(response.statusCode).toBe(202);
  return json(response).review as { id: string };
};

const decide = (reviewId: string, verdict: 'approve' | 'deny', token: string, comment?: string) =>
  h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/${verdict}`, token, payload: comment ? { comment } : {} });

const tasksTitled = async (org: TestOrganization, title: string) =>
  (await h.db.query('SELECT id FROM tasks WHERE org_id = $1 AND title = $2', [org.organization.id, title])).rowCount;

const auditOf = async (reviewId: string) =>
  (await h.db.query('SELECT type, actor_id, data FROM audit_events WHERE review_id = $1 ORDER BY id', [reviewId])).rows;

describe('quorum: a rule asks for more than one approval', () => {
  it('applies the write after the second distinct person approves; the same person twice does not count', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const second = await person(org, 'admin', 'second');
    const review = await hold(org.readWriteToken, 'big launch plan');

    const first = await decide(review.id, 'approve', org.reviewerToken, 'Looks right');
    expect(first.statusCode).toBe(200);
    expect(json(first).data).toMatchObject({
      status: 'pending',
      approvals: { required: 2, given: [{ email: `reviewer@${org.organization.slug}.test`, comment: 'Looks right' }] },
      applied_at: null,
    });
    expect(await tasksTitled(org, 'big launch plan')).toBe(0);

    const again = await decide(review.id, 'approve', org.reviewerToken);
    expect(again.statusCode).toBe(409);
    expect(json(again).error).toMatchObject({ code: 'conflict', message: expect.stringContaining('approved') });
    expect(await tasksTitled(org, 'big launch plan')).toBe(0);

    // What the agent sees while it waits: one of two.
    const followed = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}/status`, token: org.readWriteToken })).data;
    expect(followed).toMatchObject({ status: 'pending', approvals_required: 2, approvals_given: 1 });

    const done = await decide(review.id, 'approve', second.token);
    expect(done.statusCode).toBe(200);
    expect(json(done).data).toMatchObject({
      status: 'approved',
      decided_by: { email: second.user.email },
      approvals: { required: 2, given: [{ email: `reviewer@${org.organization.slug}.test` }, { email: second.user.email }] },
      result: { title: 'big launch plan' },
    });
    expect(await tasksTitled(org, 'big launch plan')).toBe(1);
    const audit = await auditOf(review.id);
    expect(audit.map((event) => event.type)).toEqual(['gate.decided', 'review.approval_added', 'review.approved', 'write.applied']);
    expect(audit[1].data).toMatchObject({ approvals: 1, required: 2 });
    expect(audit[2].data.approvals).toHaveLength(2);
  });

  it('one deny ends it, whatever approvals came before', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const second = await person(org, 'reviewer', 'naysayer');
    const review = await hold(org.readWriteToken, 'big but wrong');
    expect((await decide(review.id, 'approve', org.reviewerToken)).statusCode).toBe(200);
    const denied = await decide(review.id, 'deny', second.token, 'Not this quarter');
    expect(denied.statusCode).toBe(200);
    expect(json(denied).data).toMatchObject({ status: 'denied', decided_by: { email: second.user.email } });
    const status = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}/status`, token: org.readWriteToken })).data;
    expect(status).toMatchObject({ status: 'denied', applied: false });
    expect(await tasksTitled(org, 'big but wrong')).toBe(0);
  });

  it('approvals racing: of two people approving at once both count, and the write runs once', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const second = await person(org, 'reviewer', 'racer');
    const review = await hold(org.readWriteToken, 'big race');
    const answers = await Promise.all([decide(review.id, 'approve', org.reviewerToken), decide(review.id, 'approve', second.token)]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    await expect.poll(async () => json(await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}`, token: org.reviewerToken })).data.applied_at).not.toBeNull();
    expect(await tasksTitled(org, 'big race')).toBe(1);
  });

  it('a rule that holds for one person needs one approval', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const review = await hold(org.readWriteToken, 'review this one');
    const approved = await decide(review.id, 'approve', org.reviewerToken);
    expect(json(approved).data).toMatchObject({ status: 'approved', approvals: { required: 1 }, result: { title: 'review this one' } });
  });

  it('refuses @approvals where it means nothing, and counts it cannot read', () => {
    expect(() => compilePolicySet('@id("a") @approvals("2") permit (principal, action, resource);')).toThrow(/@approvals belongs on a rule with @decision\("review"\)/);
    expect(() => compilePolicySet('@id("a") @decision("review") @approvals("two") permit (principal, action, resource);')).toThrow(/whole number of people from 1 to 10/);
    expect(() => compilePolicySet('@id("a") @decision("review") @approvals("11") permit (principal, action, resource);')).toThrow(/from 1 to 10/);
    expect(compilePolicySet('@id("a") @decision("review") @approvals("3") permit (principal, action, resource);').annotations.a?.approvals).toBe('3');
  });
});

describe('no self-approval', () => {
  it("refuses a person's approval of a write made with a key they created; another reviewer approves it", async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const maker = await person(org, 'admin', 'maker');
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: "maker's agent", access: 'read_write' }, { type: 'user', id: maker.user.id });
    const review = await hold(key.token, 'review my own agent');

    const refused = await decide(review.id, 'approve', maker.token);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'self_approval', message: expect.stringContaining('created the API key') });
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}`, token: maker.token })).data).toMatchObject({ status: 'pending', approvals: { given: [] } });

    // Denying one's own agent's write is always allowed; here another reviewer approves it.
    const approved = await decide(review.id, 'approve', org.reviewerToken);
    expect(json(approved).data).toMatchObject({ status: 'approved', result: { title: 'review my own agent' } });
  });

  it('an organization that allows self-approval lets the key maker approve', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const maker = await person(org, 'owner', 'solo');
    await updateOrganization(h.db, org.organization.slug, { selfApproval: true });
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'solo agent', access: 'read_write' }, { type: 'user', id: maker.user.id });
    const review = await hold(key.token, 'review solo work');
    const approved = await decide(review.id, 'approve', maker.token);
    expect(approved.statusCode).toBe(200);
    expect(json(approved).data).toMatchObject({ status: 'approved' });

    expect(await findOrganization(h.db, org.organization.slug)).toMatchObject({ selfApproval: true, sharePolicyText: false });
  });

  it('a denial by the key maker is allowed', async () => {
    const org = await h.createOrganization({ policy: quorumPolicy });
    const maker = await person(org, 'reviewer', 'careful');
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'careful agent', access: 'read_write' }, { type: 'user', id: maker.user.id });
    const review = await hold(key.token, 'review and regret');
    expect(json(await decide(review.id, 'deny', maker.token)).data).toMatchObject({ status: 'denied' });
  });
});

describe('denials that say how to succeed', () => {
  const remediationPolicy = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("no-secrets-in-titles") @reason("Titles must not mention secrets")
@hint("Titles must not mention secrets; remove the word and try again")
forbid (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "*secret*" };

@id("review-status-changes") @decision("review") @reason("Changing a task's status needs a person")
permit (principal, action == Action::"tasks.update", resource) when { context has changes && context.changes has status };

@id("no-deletes-of-done-tasks") @reason("Done tasks are kept")
forbid (principal, action == Action::"tasks.delete", resource) when { context has before && context.before.status == "done" };
`;

  it('a Deny over REST carries the rule, what it looked at and its hint; the policy text only when the organization shares it', async () => {
    const org = await h.createOrganization({ policy: remediationPolicy });
    const denied = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'the secret plan' } });
    expect(denied.statusCode).toBe(403);
    const { error } = json(denied);
    expect(error.code).toBe('policy_denied');
    expect(error.details.remediation).toEqual({
      rules: [
        {
          policy_id: 'no-secrets-in-titles',
          effect: 'deny',
          reason: 'Titles must not mention secrets',
          hint: 'Titles must not mention secrets; remove the word and try again',
          looks_at: ['resource.title'],
        },
      ],
      next_step: expect.stringContaining('remove the word and try again'),
    });
    expect(JSON.stringify(json(denied))).not.toContain('forbid');

    await updateOrganization(h.db, org.organization.slug, { sharePolicyText: true });
    const shared = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'another secret' } }));
    expect(shared.error.details.remediation.rules[0].text).toMatch(/^@id\("no-secrets-in-titles"\)[\s\S]*forbid/);
  });

  it('names what a rule reads of the record before and of the changes', async () => {
    const org = await h.createOrganization({ policy: remediationPolicy });
    const created = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'ship it', status: 'done' } })).data;
    const denied = json(await h.request({ method: 'DELETE', url: `/api/v1/tasks/${created.id}`, token: org.readWriteToken }));
    expect(denied.error.details.remediation.rules).toEqual([
      { policy_id: 'no-deletes-of-done-tasks', effect: 'deny', reason: 'Done tasks are kept', hint: null, looks_at: ['context.before.status'] },
    ]);
    expect(denied.error.details.remediation.next_step).toContain('It looks at context.before.status');

    const held = json(await h.request({ method: 'PATCH', url: `/api/v1/tasks/${created.id}`, token: org.readWriteToken, payload: { status: 'todo' } }));
    expect(held.error.code).toBe('pending_review');
    expect(held.error.details.remediation.rules).toEqual([
      { policy_id: 'review-status-changes', effect: 'review', reason: "Changing a task's status needs a person", hint: null, looks_at: ['context.changes.status'] },
    ]);
  });

  it('a write no rule permits says so, and to ask a person', async () => {
    const org = await h.createOrganization({ policy: '@id("only-tasks") permit (principal, action == Action::"tasks.create", resource);' });
    const denied = json(await h.request({ method: 'POST', url: '/api/v1/projects', token: org.readWriteToken, payload: { name: 'not allowed' } }));
    expect(denied.error.details.remediation).toEqual({ rules: [], next_step: expect.stringContaining('No rule of the organization\'s policy permits projects.create') });
  });
});

describe('edit, then approve', () => {
  const editPolicy = `${quorumPolicy}
@id("deny-when-asked") @reason("The title asks to be denied")
forbid (principal, action, resource) when { resource has title && resource.title like "deny*" };

@id("review-status-changes") @decision("review") @reason("Changing a task's status needs a person")
permit (principal, action == Action::"tasks.update", resource) when { context has changes && context.changes has status };
`;

  const approveWithEdit = (reviewId: string, token: string, edit: Record<string, unknown>, comment?: string) =>
    h.request({ method: 'POST', url: `/api/v1/reviews/${reviewId}/approve`, token, payload: { edit, ...(comment ? { comment } : {}) } });

  it("applies the reviewer's edit; the review keeps the agent's version, the audit both decisions, and the agent learns what was written", async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const held = json(
      await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'review the offer', description: 'A very long rambling description', due_on: '2026-12-24' } }),
    ).review;
    const approved = await approveWithEdit(held.id, org.reviewerToken, { due_on: '2026-12-01', description: 'Short' }, 'Earlier, and shorter');
    expect(approved.statusCode).toBe(200);
    const review = json(approved).data;
    expect(review).toMatchObject({
      status: 'approved',
      proposed: { title: 'review the offer', description: 'A very long rambling description', due_on: '2026-12-24' },
      edit: {
        by: { email: `reviewer@${org.organization.slug}.test` },
        input: { title: 'review the offer', description: 'Short', due_on: '2026-12-01' },
        decision: { decision: 'review', policy_ids: ['review-when-asked'] },
      },
      approvals: { required: 1, given: [{ email: `reviewer@${org.organization.slug}.test`, comment: 'Earlier, and shorter' }] },
      result: { title: 'review the offer', description: 'Short', due_on: '2026-12-01' },
    });
    const { rows: tasks } = await h.db.query('SELECT description, due_on::text FROM tasks WHERE org_id = $1', [org.organization.id]);
    expect(tasks).toEqual([{ description: 'Short', due_on: '2026-12-01' }]);

    const audit = await auditOf(held.id);
    expect(audit.map((event) => event.type)).toEqual(['gate.decided', 'review.edited', 'review.approved', 'write.applied']);
    expect(audit[1].data).toMatchObject({ edit_id: review.edit.id, fields: ['description', 'due_on'], decision: 'review' });
    expect(audit[2].data).toMatchObject({ edit_id: review.edit.id });
    const { rows: decisions } = await h.db.query('SELECT input FROM gate_decisions WHERE workflow_id = $1', [review.workflow_id]);
    expect(decisions[0].input).toMatchObject({ due_on: '2026-12-24' });

    const followed = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${held.id}/status`, token: org.readWriteToken })).data;
    expect(followed).toMatchObject({
      status: 'approved',
      applied: true,
      edited: { fields: ['description', 'due_on'], input: { due_on: '2026-12-01' } },
      result: { due_on: '2026-12-01', description: 'Short' },
    });
  });

  it('the MCP task of a held write completes with the edited record', async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const mcp = await h.mcp(org.readWriteToken);
    const created = await mcp.request(
      { method: 'tools/call', params: { name: 'create_task', arguments: { title: 'review from a task', priority: 'low' }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    const approved = await approveWithEdit(created.task.taskId, org.reviewerToken, { priority: 'high' });
    expect(json(approved).data).toMatchObject({ status: 'approved', result: { priority: 'high' } });
    const final = await mcp.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(final.structuredContent).toMatchObject({ status: 'applied', record: { title: 'review from a task', priority: 'high' } });
  });

  it('an edit the policy denies is refused and recorded; the review waits with the agent\'s version', async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const held = await hold(org.readWriteToken, 'review the budget');
    const refused = await approveWithEdit(held.id, org.reviewerToken, { title: 'deny the budget' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'policy_denied', details: { reason: 'The title asks to be denied', policy_ids: ['deny-when-asked'] } });
    const review = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${held.id}`, token: org.reviewerToken })).data;
    expect(review).toMatchObject({ status: 'pending', edit: null, approvals: { given: [] } });
    const audit = await auditOf(held.id);
    expect(audit.map((event) => event.type)).toEqual(['gate.decided', 'review.edited']);
    expect(audit[1].data).toMatchObject({ decision: 'deny', fields: ['title'] });
    // The agent's version is still there to approve as it is.
    expect(json(await decide(held.id, 'approve', org.reviewerToken)).data).toMatchObject({ status: 'approved', result: { title: 'review the budget' } });
  });

  it('an edit that a quorum rule holds counts the editor as the first of two', async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const second = await person(org, 'admin', 'cosigner');
    const held = await hold(org.readWriteToken, 'review a small plan');
    const first = await approveWithEdit(held.id, org.reviewerToken, { title: 'big plan after all' });
    expect(json(first).data).toMatchObject({ status: 'pending', approvals: { required: 2, given: [{ email: `reviewer@${org.organization.slug}.test` }] } });
    expect(await tasksTitled(org, 'big plan after all')).toBe(0);
    // An approval counts for the version its person saw: one that does not name the edit approved the agent's.
    const unseen = await decide(held.id, 'approve', second.token);
    expect(unseen.statusCode).toBe(409);
    expect(json(unseen).error).toMatchObject({ code: 'conflict', details: { edit_id: json(first).data.edit.id } });
    const stale = await h.request({ method: 'POST', url: `/api/v1/reviews/${held.id}/approve`, token: second.token, payload: { seen_edit: 'edt_other' } });
    expect(stale.statusCode).toBe(409);
    const done = await h.request({ method: 'POST', url: `/api/v1/reviews/${held.id}/approve`, token: second.token, payload: { seen_edit: json(first).data.edit.id } });
    expect(json(done).data).toMatchObject({ status: 'approved', result: { title: 'big plan after all' } });
    expect(await tasksTitled(org, 'big plan after all')).toBe(1);
    expect(await tasksTitled(org, 'review a small plan')).toBe(0);
  });

  it('edits a held update: the edited change runs against the record as the edit saw it', async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const task = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'fix the roof' } })).data;
    const held = json(await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken, payload: { status: 'done' } })).review;
    const approved = await approveWithEdit(held.id, org.reviewerToken, { status: 'in_progress' });
    expect(json(approved).data).toMatchObject({ status: 'approved', result: { id: task.id, status: 'in_progress' } });
  });

  it('refuses an edit that changes nothing (values the same as the agent\'s, or none at all): approvals stand', async () => {
    const org = await h.createOrganization({ policy: editPolicy });
    const first = await person(org, 'reviewer', 'first');
    const review = await hold(org.readWriteToken, 'big and unchanged');
    expect(json(await decide(review.id, 'approve', first.token)).data.approvals.given).toHaveLength(1);
    // status todo and priority normal are the defaults the agent's write got: the same values, so no change.
    for (const edit of [{}, { title: 'big and unchanged' }, { status: 'todo', priority: 'normal' }]) {
      const refused = await approveWithEdit(review.id, org.reviewerToken, edit);
      expect(refused.statusCode, JSON.stringify(edit)).toBe(422);
      expect(json(refused).error.message).toContain('changes nothing');
    }
    expect(json(await h.request({ method: 'GET', url: `/api/v1/reviews/${review.id}`, token: org.reviewerToken })).data).toMatchObject({
      status: 'pending',
      edit: null,
      approvals: { given: [{ email: first.user.email }] },
    });
  });

  it('refuses an edit that changes the record it names, is not valid, or edits a delete; nothing changes', async () => {
    const org = await h.createOrganization({ policy: `${editPolicy}\n@id("review-deletes") @decision("review") permit (principal, action == Action::"tasks.delete", resource);` });
    const held = await hold(org.readWriteToken, 'review this carefully');
    for (const edit of [{ id: 'task_other' }, { priority: 'sky-high' }, { no_such_field: 1 }, { title: '' }]) {
      const refused = await approveWithEdit(held.id, org.reviewerToken, edit);
      expect(refused.statusCode, JSON.stringify(edit)).toBe(422);
      expect(json(refused).error.code).toBe('validation_failed');
    }
    const unchanged = json(await h.request({ method: 'GET', url: `/api/v1/reviews/${held.id}`, token: org.reviewerToken })).data;
    expect(unchanged).toMatchObject({ status: 'pending', edit: null, approvals: { given: [] } });
    expect((await auditOf(held.id)).map((event) => event.type)).toEqual(['gate.decided']);

    const task = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'keep me' } })).data;
    const deletion = json(await h.request({ method: 'DELETE', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken })).review;
    const refused = await approveWithEdit(deletion.id, org.reviewerToken, { title: 'x' });
    expect(refused.statusCode).toBe(422);
    expect(json(refused).error.message).toContain('only a held create or update can be edited');
  });

  it("the key maker cannot edit their own agent's write into approval either", async () => {
    const org = await h.createOrganization({ policy: `${editPolicy}\n@id("review-deletes") @decision("review") permit (principal, action == Action::"tasks.delete", resource);` });
    const maker = await person(org, 'admin', 'editor');
    const key = await createApiKey(h.db, { orgId: org.organization.id, label: 'own agent', access: 'read_write' }, { type: 'user', id: maker.user.id });
    const held = await hold(key.token, 'review mine');
    const refused = await approveWithEdit(held.id, maker.token, { title: 'review mine, edited' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('self_approval');

    // What cannot be edited at all is told first, whoever asks: a held delete is not editable (422).
    const task = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: key.token, payload: { title: 'keep mine' } })).data;
    const deletion = json(await h.request({ method: 'DELETE', url: `/api/v1/tasks/${task.id}`, token: key.token })).review;
    const notEditable = await approveWithEdit(deletion.id, maker.token, { title: 'x' });
    expect(notEditable.statusCode).toBe(422);
    expect(json(notEditable).error.message).toContain('only a held create or update can be edited');
  });
});
