import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/database';
import { createScratchDatabase, type ScratchDatabase } from '../../db/scratch-database';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization, type Organization } from '../../domain/identity/organizations';
import { newId } from '../../domain/kit/ids';
import { callActivity } from '../../domain/usage/call-activity';
import { agentDays, outcomeCategorySql, recordCall, type CallRecord } from '../../domain/usage/call-log';
import { pruneExpiredRecords } from '../../domain/usage/retention';

// The Command Center's counts sum call_log_hours (kept by triggers on call_log) and read only the ends of a range
// that are not whole hours of UTC from call_log: they must equal a plain count of call_log, in a zone whose hours
// are UTC's and in one off by half an hour, after rows are written, moved in time and pruned.

let scratch: ScratchDatabase;
let db: Database;
const minute = 60_000;

beforeAll(async () => {
  scratch = await createScratchDatabase('call_counts');
  db = connectDatabase(scratch.url, { maxConnections: 4 });
});
afterAll(async () => {
  await db?.close();
  await scratch?.drop();
});

const endings = [
  { outcome: 'ok', status: 200 },
  { outcome: 'applied', status: 201 },
  { outcome: 'pending_review', status: 202 },
  { outcome: 'policy_denied', status: 403 },
  { outcome: 'validation_failed', status: 400 },
  { outcome: 'internal', status: 500 },
];

/** An organization in `timezone` with two keys, and calls every 37 minutes over the last eight days (and a person's and the console's). */
async function organizationWithCalls(timezone: string): Promise<{ organization: Organization; keys: string[] }> {
  const organization = await createOrganization(db, { slug: `counts-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`, name: 'Counts', timezone });
  const keys = [
    (await createApiKey(db, { orgId: organization.id, label: 'first', access: 'read_write' })).key.id,
    (await createApiKey(db, { orgId: organization.id, label: 'second', access: 'read_write' })).key.id,
  ];
  const now = Date.now();
  for (let i = 0, at = now - 8 * 24 * 60 * minute; at < now; i++, at += 37 * minute) {
    const ending = endings[i % endings.length]!;
    const caller = i % 5 === 4 ? { apiKeyId: null, userId: null } : { apiKeyId: keys[i % 2]!, userId: null };
    const entry: CallRecord = { orgId: organization.id, ...caller, interface: i % 7 === 6 ? 'console' : i % 3 === 0 ? 'mcp' : 'rest', operation: 'tasks.list', tool: null, ...ending, latencyMs: 1 };
    await recordCall(db, entry, { id: newId('call'), at: new Date(at) });
  }
  return { organization, keys };
}

/** The plain count the sums must equal: every REST and MCP call of the range, by how it ended. */
async function countedPlainly(orgId: string, from: string, to: string, apiKeyId?: string): Promise<Record<string, number>> {
  const { rows } = await db.query(
    `SELECT ${outcomeCategorySql} AS category, count(*)::int AS n FROM call_log c
     WHERE c.org_id = $1 AND c.interface IN ('rest', 'mcp') AND c.created_at >= $2 AND c.created_at < $3 AND ($4::text IS NULL OR c.api_key_id = $4)
     GROUP BY 1`,
    [orgId, from, to, apiKeyId ?? null],
  );
  return Object.fromEntries(rows.map((row) => [row.category, row.n]));
}

async function expectChartsExact(organization: Organization, keys: string[]): Promise<void> {
  for (const range of ['24h', '7d'] as const) {
    for (const apiKeyId of [undefined, keys[0]]) {
      const { buckets } = await callActivity(db, organization, { range, api_key_id: apiKeyId });
      for (const [index, bucket] of buckets.entries()) {
        const next = buckets[index + 1]?.start ?? 'infinity';
        const plain = await countedPlainly(organization.id, bucket.start, next, apiKeyId);
        const { start: _, calls, ...byOutcome } = bucket;
        expect(Object.fromEntries(Object.entries(byOutcome).filter(([, n]) => n > 0)), `${range} ${apiKeyId ?? 'all'} ${bucket.start}`).toEqual(plain);
        expect(calls).toBe(Object.values(plain).reduce((sum, n) => sum + n, 0));
      }
    }
  }
  const { rows } = await db.query(`SELECT (date_trunc('day', now() AT TIME ZONE $1::text) AT TIME ZONE $1::text)::text AS today`, [organization.timezone]);
  const days = await agentDays(db, organization, 1000);
  for (const key of keys) {
    const plain = await countedPlainly(organization.id, rows[0].today, 'infinity', key);
    const day = days.find((candidate) => candidate.api_key_id === key)!;
    expect([day.calls_today, day.applied_today, day.held_today, day.denied_today]).toEqual([
      Object.values(plain).reduce((sum, n) => sum + n, 0),
      plain.applied ?? 0,
      plain.held ?? 0,
      plain.denied ?? 0,
    ]);
  }
}

async function expectHoursMatchTheLog(orgId: string): Promise<void> {
  const counted = `SELECT agent, hour, outcome, status, calls FROM call_log_hours WHERE org_id = $1`;
  const plain = `SELECT a.agent, date_trunc('hour', c.created_at, 'UTC') AS hour, c.outcome, c.status, count(*)::int AS calls
                 FROM call_log c CROSS JOIN LATERAL (VALUES ('*'), (c.api_key_id)) AS a(agent)
                 WHERE c.org_id = $1 AND c.interface IN ('rest', 'mcp') AND a.agent IS NOT NULL GROUP BY 1, 2, 3, 4`;
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM ((${counted}) EXCEPT ALL (${plain})) AS one UNION ALL SELECT count(*)::int FROM ((${plain}) EXCEPT ALL (${counted})) AS other`, [orgId]);
  expect(rows.map((row) => row.n)).toEqual([0, 0]);
}

describe("the agents' counts by the hour", () => {
  for (const timezone of ['Europe/Berlin', 'Asia/Kolkata']) {
    it(`equal a plain count of the call log in ${timezone}, for the charts and each key's day`, async () => {
      const { organization, keys } = await organizationWithCalls(timezone);
      await expectHoursMatchTheLog(organization.id);
      await expectChartsExact(organization, keys);
    });
  }

  it('stay exact when rows move in time and when the retention prune removes them', async () => {
    const { organization, keys } = await organizationWithCalls('Asia/Kolkata');
    await db.query(`UPDATE call_log SET created_at = created_at - interval '3 days 20 minutes' WHERE org_id = $1 AND api_key_id = $2`, [organization.id, keys[1]]);
    await expectHoursMatchTheLog(organization.id);
    await expectChartsExact(organization, keys);
    const pruned = await pruneExpiredRecords(db, { callLogMs: 5 * 24 * 60 * minute + 7 * minute, reviewsMs: undefined });
    expect(pruned.callLog).toBeGreaterThan(0);
    await expectHoursMatchTheLog(organization.id);
    await expectChartsExact(organization, keys);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM call_log_hours WHERE org_id = $1 AND calls <= 0`, [organization.id]);
    expect(rows[0].n).toBe(0);
  });
});
