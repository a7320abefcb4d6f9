import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { recordAudit } from '../../domain/audit/events';
import { erasedValue } from '../../domain/audit/chain';
import { sealAuditChain, verifyAuditChain } from '../../domain/audit/ledger';
import { newId } from '../../domain/kit/ids';
import { auditSealScheduleId, ensureAuditSealSchedule } from '../../runtime/schedules';
import { cleanEnv, runCli } from '../support/cli';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The audit ledger proves itself: every event's content digest, chained per organization; the verifier finds
// what was changed, removed or inserted by SQL behind the service's back.

let h: Harness;
const script = fileURLToPath(new URL('../../docs/verify-audit-export.mjs', import.meta.url));

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.temporal.schedule.getHandle(auditSealScheduleId).delete().catch(() => {});
  await h?.close();
});

/** An organization with a gated write of each kind and a review approved: a dozen events. */
async function withHistory(): Promise<TestOrganization> {
  const org = await h.createOrganization();
  const write = (title: string) => h.request({ method: 'POST', url: '/api/v1/tasks', token: org.readWriteToken, payload: { title } });
  expect((await write('an ordinary task')).statusCode).toBe(201);
  expect((await write('deny this one')).statusCode).toBe(403);
  const held = await write('review this one');
  const approved = await h.request({ method: 'POST', url: `/api/v1/reviews/${json(held).review.id}/approve`, token: org.reviewerToken, payload: { comment: 'fine by me' } });
  expect(approved.statusCode).toBe(200);
  await recordAudit(h.db, org.organization.id, { type: 'person.invited', actor: { type: 'system', id: 'cli' }, resourceId: 'usr_01aaaaaaaaaaaaaaaaaaaaaaaa', data: { email: 'ada@example.com', role: 'member' } });
  return org;
}

const seal = (org: TestOrganization) => sealAuditChain(h.db, org.organization.id, { lagMs: 0 });
const verify = (org: TestOrganization) => verifyAuditChain(h.db, org.organization.id, { lagMs: 0 });

async function eventIds(org: TestOrganization): Promise<{ id: string; type: string; seq: number }[]> {
  const { rows } = await h.db.query('SELECT id, type, seq::int AS seq FROM audit_events WHERE org_id = $1 ORDER BY id', [org.organization.id]);
  return rows;
}

describe('the audit ledger', () => {
  it('chains every event the service wrote, in order, and verifies', async () => {
    const org = await withHistory();
    const sealed = await seal(org);
    const events = await eventIds(org);
    expect(sealed).toEqual({ sealed: events.length, refused: [] });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    const report = await verify(org);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ sealed: events.length, unsealed: 0, head: { seq: events.length, chain: expect.stringMatching(/^[0-9a-f]{64}$/) } });

    // Sealing again adds only what is new, after the head.
    await recordAudit(h.db, org.organization.id, { type: 'policy.updated', actor: { type: 'system', id: 'cli' }, data: { version: 9 } });
    expect(await seal(org)).toEqual({ sealed: 1, refused: [] });
    expect((await verify(org)).problems).toEqual([]);
  });

  it('names an event changed after it was written', async () => {
    const org = await withHistory();
    await seal(org);
    const decided = (await eventIds(org)).find((event) => event.type === 'gate.decided')!;
    await h.db.query(`UPDATE audit_events SET data = jsonb_set(data, '{reason}', '"it was always allowed"') WHERE id = $1`, [decided.id]);
    const { problems } = await verify(org);
    expect(problems).toEqual([expect.objectContaining({ kind: 'changed', id: decided.id, seq: decided.seq })]);
  });

  it('names events removed, in the middle and at the end', async () => {
    const org = await withHistory();
    await seal(org);
    const events = await eventIds(org);
    const [middle, last] = [events[3]!, events.at(-1)!];
    await h.db.query('DELETE FROM audit_events WHERE id = ANY($1)', [[middle.id, last.id]]);
    const { problems } = await verify(org);
    expect(problems).toEqual([
      expect.objectContaining({ kind: 'removed', seq: middle.seq }),
      expect.objectContaining({ kind: 'removed', seq: last.seq }),
    ]);
  });

  it('names events inserted by SQL, out of order or not, and never chains them', async () => {
    const org = await withHistory();
    await seal(org);
    const events = await eventIds(org);
    // One after everything, as if the service wrote it; one among the sealed, with an id from the past.
    const late = newId('evt');
    const backdated = `${events[2]!.id.slice(0, -1)}${events[2]!.id.endsWith('z') ? 'y' : 'z'}`;
    for (const id of [late, backdated]) {
      await h.db.query(`INSERT INTO audit_events (id, org_id, type, actor_type, actor_id, data) VALUES ($1, $2, 'review.approved', 'user', 'usr_x', '{}')`, [id, org.organization.id]);
    }
    expect(await seal(org)).toEqual({ sealed: 0, refused: [late] });
    const { problems } = await verify(org);
    expect(problems.map((problem) => [problem.kind, problem.id]).sort()).toEqual([['inserted', backdated], ['inserted', late]].sort());
  });

  it("still verifies once a person's data is erased", async () => {
    const org = await withHistory();
    await seal(org);
    const invited = (await eventIds(org)).find((event) => event.type === 'person.invited')!;
    await h.db.query(`UPDATE audit_events SET data = jsonb_set(data, '{email}', $2::jsonb) WHERE id = $1`, [invited.id, JSON.stringify(erasedValue('ada@example.com'))]);
    const { rows } = await h.db.query('SELECT data FROM audit_events WHERE id = $1', [invited.id]);
    expect(JSON.stringify(rows[0].data)).not.toContain('ada@example.com');
    expect((await verify(org)).problems).toEqual([]);
    // An erasure that claims another value's digest is a change like any other.
    await h.db.query(`UPDATE audit_events SET data = jsonb_set(data, '{email}', $2::jsonb) WHERE id = $1`, [invited.id, JSON.stringify(erasedValue('eve@example.com'))]);
    expect((await verify(org)).problems).toEqual([expect.objectContaining({ kind: 'changed', id: invited.id })]);
  });

  it('starts after the events written before it (a database migrated to it), and counts them', async () => {
    const org = await h.createOrganization();
    // An event as the service wrote them before the ledger: no digest; the migration starts the chain after it.
    const old = 'evt_00000000000000000000000001';
    await h.db.query(`INSERT INTO audit_events (id, org_id, type, actor_type, actor_id, data) VALUES ($1, $2, 'policy.updated', 'system', 'cli', '{"version": 1}')`, [old, org.organization.id]);
    await h.db.query(`INSERT INTO audit_chain_heads (org_id, seq, chain, last_event_id, started_after) VALUES ($1, 0, decode(repeat('00', 32), 'hex'), $2, $2)`, [org.organization.id, old]);
    const newer = (await eventIds(org)).filter((event) => event.id !== old);
    expect(await seal(org)).toEqual({ sealed: newer.length, refused: [] });
    expect(await verify(org)).toMatchObject({ problems: [], sealed: newer.length, unsealed: 0, beforeLedger: 1 });
  });

  it('is sealed by a Temporal Schedule on the worker', async () => {
    const org = await withHistory();
    // Past the sealing lag, as a minute later.
    await h.db.query("UPDATE audit_events SET created_at = created_at - interval '1 minute' WHERE org_id = $1", [org.organization.id]);
    const schedule = await ensureAuditSealSchedule(h.temporal, { taskQueue: h.taskQueue });
    await schedule.trigger();
    await vi.waitFor(
      async () => {
        const report = await verifyAuditChain(h.db, org.organization.id);
        expect(report.unsealed).toBe(0);
        expect(report.problems).toEqual([]);
      },
      { timeout: 20_000, interval: 300 },
    );
  });

  it('gatehouse audit verify says so, and exits 1 when it does not verify', async () => {
    const org = await withHistory();
    const env = cleanEnv({ DATABASE_URL: inject('databaseUrl') });
    await h.db.query("UPDATE audit_events SET created_at = created_at - interval '1 minute' WHERE org_id = $1", [org.organization.id]);
    const good = await runCli(['audit', 'verify', '--org', org.organization.slug, '--seal'], env);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/verifies: \d+ events in the chain, head \d+ [0-9a-f]{64}; 0 waiting/);

    const decided = (await eventIds(org)).find((event) => event.type === 'gate.decided')!;
    await h.db.query(`UPDATE audit_events SET data = jsonb_set(data, '{reason}', '"nothing to see"') WHERE id = $1`, [decided.id]);
    const bad = await runCli(['audit', 'verify', '--org', org.organization.slug, '--json'], env);
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({ ok: false, problems: [{ kind: 'changed', id: decided.id }] });
  });

  it('an export carries the head, and the documented script verifies a copy offline, or names what was edited', async () => {
    const org = await withHistory();
    await seal(org);
    const env = cleanEnv({ DATABASE_URL: inject('databaseUrl') });
    const exported = await runCli(['audit', 'export', '--org', org.organization.slug], env);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.trim().split('\n');
    const head = JSON.parse(lines.at(-1)!) as { ledger_head: { org_id: string; seq: number; chain: string } };
    expect(head.ledger_head).toEqual({ org_id: org.organization.id, seq: lines.length - 1, chain: (await verify(org)).head!.chain });

    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ledger-'));
    const check = (name: string, content: string[]) => {
      writeFileSync(join(dir, name), `${content.join('\n')}\n`);
      return spawnSync(process.execPath, [script, join(dir, name)], { encoding: 'utf8' });
    };
    const copy = check('copy.jsonl', lines);
    expect(copy.status, copy.stderr).toBe(0);
    expect(copy.stdout).toContain(`verifies: ${lines.length - 1} events chained`);

    const edited = lines.map((line) => (line.includes('"gate.decided"') ? line.replace(/"reason":"[^"]*"/, '"reason":"nothing happened"') : line));
    const editedCheck = check('edited.jsonl', edited);
    expect(editedCheck.status).toBe(1);
    expect(editedCheck.stdout).toMatch(/event evt_\w+ \(gate\.decided\) was changed/);
    const shortened = check('shortened.jsonl', [...lines.slice(0, 2), ...lines.slice(3)]);
    expect(shortened.status).toBe(1);
    expect(shortened.stdout).toContain('of the chain are missing from the copy');
  });
});
