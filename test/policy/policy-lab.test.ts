import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { parseSince } from '../../domain/policy-sets/lab';
import { cleanEnv, runCli } from '../support/cli';
import { addPerson, signIn, type ConsoleSession } from '../support/console';
import { json, startHarness, testPolicy, type Harness, type TestOrganization } from '../support/harness';

// Changing policy without fear, on the real Temporal dev server and PostgreSQL: a draft replayed over a known
// history (console and CLI), a draft in shadow beside the live policy, and allow rules suggested from approvals.

let h: Harness;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-policy-'));
const env = () => cleanEnv({ DATABASE_URL: inject('databaseUrl') });

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The test policy with the roles swapped: "review…" titles allowed, "plain…" titles held, "deny…" still denied. */
const draft = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("review-plain") @decision("review") @reason("Plain titles now need a look")
permit (principal, action, resource) when { resource has title && resource.title like "plain*" };

@id("deny-when-asked") @reason("The title asks to be denied")
forbid (principal, action, resource) when { resource has title && resource.title like "deny*" };
`;

async function ownerOf(org: TestOrganization): Promise<ConsoleSession> {
  const owner = await addPerson(h.db, org.organization, 'owner');
  return signIn(h.app, org.organization, owner);
}

/** A known history: three plain writes (Allow), two held (Review), one denied. */
async function knownHistory(org: TestOrganization) {
  const titles = ['plain one', 'plain two', 'plain three', 'review one', 'review two', 'deny one'];
  for (const title of titles) {
    const response = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
    expect([201, 202, 403]).toContain(response.statusCode);
  }
}

// These tests run CLI processes too (a few seconds each on a loaded machine).
describe('simulation: a draft replayed over the recorded decisions', { timeout: 180_000 }, () => {
  it('lists every decision the draft would change, with counts, in the console and the CLI', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    await knownHistory(org);

    const answer = await owner.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: draft, since: '1h' } });
    expect(answer.statusCode).toBe(200);
    const result = json(answer).data;
    expect(result).toMatchObject({ evaluated: 6, changed: { 'allow→review': 3, 'review→allow': 2 }, truncated: false });
    expect(result.changes).toHaveLength(5);
    expect(result.changes.map((change: { was: string; would_be: string }) => `${change.was}→${change.would_be}`).sort()).toEqual([
      'allow→review',
      'allow→review',
      'allow→review',
      'review→allow',
      'review→allow',
    ]);
    expect(result.changes[0]).toMatchObject({ operation: 'tasks.create', api_key_label: 'test agent', decision_id: expect.stringMatching(/^dec_/) });

    // Nothing changed: the live policy still decides.
    const still = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'plain after' } });
    expect(still.statusCode).toBe(201);

    const file = join(dir, `draft-${org.organization.slug}.cedar`);
    writeFileSync(file, draft);
    const cli = await runCli(['policy', 'simulate', '--org', org.organization.slug, '--file', file, '--since', '7d', '--json'], env());
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ evaluated: 7, changed: { 'allow→review': 4, 'review→allow': 2 } });
    const text = await runCli(['policy', 'simulate', '--org', org.organization.slug, '--file', file], env());
    expect(text.stdout).toContain('would change: allow→review 4, review→allow 2');
  });

  it('refuses a draft that does not parse, and a window it cannot read', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    const broken = await owner.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: 'permit (principal, action' } });
    expect(broken.statusCode).toBe(422);
    expect(json(broken).error.message).toContain('does not parse');
    const window = await owner.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: draft, since: 'last tuesday' } });
    expect(window.statusCode).toBe(422);
    expect(parseSince('7d', 1_000_000_000_000)?.toISOString()).toBe(new Date(1_000_000_000_000 - 7 * 86_400_000).toISOString());
    expect(parseSince('2026-11-01T00:00:00Z')?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseSince('yesterday')).toBeUndefined();
  });

  it('a reviewer may read the policy but not change or simulate it; a member neither', async () => {
    const org = await h.createOrganization();
    const reviewer = await signIn(h.app, org.organization, await addPerson(h.db, org.organization, 'reviewer'));
    expect((await reviewer.request({ method: 'GET', url: '/console/api/v1/policy' })).statusCode).toBe(200);
    expect((await reviewer.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: draft } })).statusCode).toBe(403);
    expect((await reviewer.request({ method: 'PATCH', url: '/console/api/v1/policy', payload: { source: draft } })).statusCode).toBe(403);
    const member = await signIn(h.app, org.organization, await addPerson(h.db, org.organization, 'member'));
    expect((await member.request({ method: 'GET', url: '/console/api/v1/policy' })).statusCode).toBe(403);
  });
});

describe('the policy page: versions, and an editor that checks before it saves', () => {
  it('saves a new version, refuses one that does not parse (the old stays), and lists the versions', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    const current = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy' })).data;
    expect(current).toMatchObject({ version: 2, source: testPolicy });

    const refused = await owner.request({ method: 'PATCH', url: '/console/api/v1/policy', payload: { source: '@id("x") forbid (principal, action resource);' } });
    expect(refused.statusCode).toBe(422);
    expect(json(refused).error.details.fields[0]).toMatchObject({ field: 'source', message: expect.stringContaining('line 1') });
    expect(json(await owner.request({ method: 'GET', url: '/console/api/v1/policy' })).data.version).toBe(2);

    const saved = await owner.request({ method: 'PATCH', url: '/console/api/v1/policy', payload: { source: draft, comment: 'Plain titles need a look' } });
    expect(saved.statusCode).toBe(200);
    expect(json(saved).data).toMatchObject({ version: 3, source: draft });
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'plain now held' } });
    expect(held.statusCode).toBe(202);

    const versions = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/versions' })).data.versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    const { rows } = await h.db.query(`SELECT actor_type, data FROM audit_events WHERE org_id = $1 AND type = 'policy.updated' ORDER BY id DESC LIMIT 1`, [org.organization.id]);
    expect(rows[0]).toMatchObject({ actor_type: 'user', data: { version: 3, comment: 'Plain titles need a look' } });
  });
});

describe('shadow: a draft beside the live policy', { timeout: 180_000 }, () => {
  it('records where the draft disagrees, without affecting any write; stops on request', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    const started = await owner.request({ method: 'POST', url: '/console/api/v1/policy/shadow', payload: { source: draft } });
    expect(started.statusCode).toBe(200);
    expect(json(started).data.shadow).toMatchObject({ decided: 0, disagreed: {} });

    await knownHistory(org);
    // The live policy decided every write: three applied, two held, one denied.
    const { rows } = await h.db.query('SELECT decision, count(*)::int AS n FROM gate_decisions WHERE org_id = $1 GROUP BY 1 ORDER BY 1', [org.organization.id]);
    expect(rows).toEqual([
      { decision: 'allow', n: 3 },
      { decision: 'deny', n: 1 },
      { decision: 'review', n: 2 },
    ]);
    const report = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow;
    expect(report).toMatchObject({ source: draft, decided: 6, disagreed: { 'allow→review': 3, 'review→allow': 2 } });
    expect(report.disagreements).toHaveLength(5);
    expect(report.disagreements.find((d: { was: string }) => d.was === 'allow')).toMatchObject({ would_be: 'review', policy_ids: ['review-plain'] });

    const cli = await runCli(['policy', 'shadow', 'show', '--org', org.organization.slug], env());
    expect(cli.stdout).toContain('6 writes decided, disagreed: allow→review 3, review→allow 2');

    const stopped = await owner.request({ method: 'DELETE', url: '/console/api/v1/policy/shadow' });
    expect(stopped.statusCode).toBe(200);
    expect(json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow).toBeNull();
    await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'plain after the shadow' } });
    const { rows: last } = await h.db.query(`SELECT shadow FROM gate_decisions WHERE org_id = $1 ORDER BY id DESC LIMIT 1`, [org.organization.id]);
    expect(last[0].shadow).toBeNull();
    // Stopping again changes nothing, and records nothing.
    expect((await owner.request({ method: 'DELETE', url: '/console/api/v1/policy/shadow' })).statusCode).toBe(200);
    const { rows: stops } = await h.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND type = 'policy.shadow_stopped'`, [org.organization.id]);
    expect(stops[0].n).toBe(1);
  });

  it('counts a write a trust window let through as the Review the live policy said, in shadow and in simulation', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    // The live policy itself in shadow: it must agree with every decision, those a window let through included.
    expect((await owner.request({ method: 'POST', url: '/console/api/v1/policy/shadow', payload: { source: testPolicy } })).statusCode).toBe(200);
    const held = await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'review the first' } });
    expect(held.statusCode).toBe(202);
    const approved = await h.request({
      method: 'POST',
      url: `/api/v1/reviews/${json(held).review.id}/approve`,
      token: org.reviewerToken,
      payload: { trust: { minutes: 30, max_uses: 2, match: [] } },
    });
    const windowId = json(approved).data.trust_window.id as string;
    for (const title of ['review the second', 'review the third']) {
      expect((await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } })).statusCode).toBe(201);
    }
    const { rows } = await h.db.query('SELECT decision, trust_window_id FROM gate_decisions WHERE org_id = $1 ORDER BY id', [org.organization.id]);
    expect(rows).toEqual([
      { decision: 'review', trust_window_id: null },
      { decision: 'allow', trust_window_id: windowId },
      { decision: 'allow', trust_window_id: windowId },
    ]);

    const report = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow;
    expect(report).toMatchObject({ decided: 3, disagreed: {}, disagreements: [] });
    const same = json(await owner.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: testPolicy, since: '1h' } })).data;
    expect(same).toMatchObject({ evaluated: 3, changed: {}, changes: [] });

    // A draft that allows them: every one was a Review, the window's named where it let the write through.
    const swapped = json(await owner.request({ method: 'POST', url: '/console/api/v1/policy/simulate', payload: { source: draft, since: '1h' } })).data;
    expect(swapped.changed).toEqual({ 'review→allow': 3 });
    expect(swapped.changes.map((change: { trust_window_id: string | null }) => change.trust_window_id)).toEqual([windowId, windowId, null]);
    await owner.request({ method: 'DELETE', url: '/console/api/v1/policy/shadow' });
  });

  it('refuses a shadow draft that does not parse', async () => {
    const org = await h.createOrganization();
    const owner = await ownerOf(org);
    expect((await owner.request({ method: 'POST', url: '/console/api/v1/policy/shadow', payload: { source: 'nope' } })).statusCode).toBe(422);
    expect(json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/shadow' })).data.shadow).toBeNull();
  });
});

describe('suggested rules from the review history', () => {
  const statusReview = `
@id("allow-writes") permit (principal, action, resource);
@id("review-updates") @decision("review") @reason("Updates need a person")
permit (principal, action == Action::"tasks.update", resource);
`;

  async function heldUpdates(org: TestOrganization, count: number, patch: (i: number) => Record<string, unknown>) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const task = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: `task ${i}` } })).data;
      const held = json(await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken, payload: patch(i) }));
      ids.push(held.review.id);
    }
    return ids;
  }

  it('proposes an allow rule for writes approved every time; adopted, it lets them through', async () => {
    const org = await h.createOrganization({ policy: statusReview });
    const owner = await ownerOf(org);
    for (const id of await heldUpdates(org, 12, (i) => ({ status: i % 2 ? 'done' : 'in_progress' }))) {
      expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${id}/approve`, token: org.reviewerToken })).statusCode).toBe(200);
    }
    const suggestions = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/suggestions' })).data.suggestions;
    expect(suggestions).toHaveLength(1);
    expect(suggestions[0]).toMatchObject({
      operation: 'tasks.update',
      changed_fields: ['status'],
      held_by: ['review-updates'],
      evidence: { approved: 12, denied: 0 },
    });
    expect(suggestions[0].rule).toContain('@decision("allow")');
    expect(suggestions[0].rule).toContain('context.changed_fields == ["status"]');

    // Adopted by a person: the rule added to the policy and saved. A status change now runs at once; a title change is still held.
    const saved = await owner.request({ method: 'PATCH', url: '/console/api/v1/policy', payload: { source: `${statusReview}\n${suggestions[0].rule}\n` } });
    expect(saved.statusCode).toBe(200);
    const task = json(await h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title: 'after adoption' } })).data;
    expect((await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken, payload: { status: 'done' } })).statusCode).toBe(200);
    expect((await h.request({ method: 'PATCH', url: `/api/v1/tasks/${task.id}`, token: org.readWriteToken, payload: { title: 'renamed' } })).statusCode).toBe(202);
  });

  it('proposes nothing for a mixed history (one deny among the approvals) or too few approvals', async () => {
    const org = await h.createOrganization({ policy: statusReview });
    const owner = await ownerOf(org);
    const ids = await heldUpdates(org, 12, () => ({ status: 'done' }));
    for (const [i, id] of ids.entries()) {
      const verdict = i === 5 ? 'deny' : 'approve';
      expect((await h.request({ method: 'POST', url: `/api/v1/reviews/${id}/${verdict}`, token: org.reviewerToken })).statusCode).toBe(200);
    }
    const few = await heldUpdates(org, 3, () => ({ title: 'renamed' }));
    for (const id of few) await h.request({ method: 'POST', url: `/api/v1/reviews/${id}/approve`, token: org.reviewerToken });
    expect(json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/suggestions' })).data.suggestions).toEqual([]);
    // With a lower bar the three title changes qualify; the mixed status changes never do.
    const lower = json(await owner.request({ method: 'GET', url: '/console/api/v1/policy/suggestions?min_approved=3' })).data.suggestions;
    expect(lower.map((s: { changed_fields: string[] }) => s.changed_fields)).toEqual([['title']]);
  });
});
