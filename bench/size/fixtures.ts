import { encodeTime } from 'ulid';
import type { Database } from '../../db/database';
import { createApiKey } from '../../domain/identity/api-keys';
import { createUser } from '../../domain/identity/people';
import { createBenchOrganization, type BenchOrganization } from '../organization';

// What the size phases' organizations are made of: the bench organization with more keys and people, and the
// ids of the rows seeded into it by SQL.

export const dayMs = 24 * 60 * 60 * 1000;

/**
 * Seeded rows' ids: `<prefix>_<stem><org digit><counter, 21 digits>`. The stem is the first four characters of a
 * ULID made 400 days ago, so every seeded id sorts before any id the service makes now (ids sort by creation
 * time; the fourth character turns every 12 days), the digit keeps organizations apart (ids are unique across
 * the table), and the counter orders one organization's rows as they were held or recorded.
 */
export interface FixtureIds {
  /** The 26 characters after the prefix of row `index` (from 1). */
  suffix(index: number): string;
  /** The same as an SQL expression of the integer expression `index`. */
  suffixSql(index: string): string;
}

export function fixtureIds(digit: number, now = Date.now()): FixtureIds {
  if (!Number.isInteger(digit) || digit < 0 || digit > 9) throw new Error(`an organization digit is 0 to 9, not ${digit}`);
  const stem = encodeTime(now - 400 * dayMs, 10).toLowerCase().slice(0, 4) + String(digit);
  return {
    suffix: (index) => stem + String(index).padStart(21, '0'),
    suffixSql: (index) => `'${stem}' || lpad((${index})::text, 21, '0')`,
  };
}

/** An organization of a size phase: the bench organization, three more keys and two more people. */
export interface SizeOrganization extends BenchOrganization {
  /** Every key of the organization, the bench key first: the agents whose writes fill its queue and trail. */
  keyIds: string[];
  /** The reviewer behind `reviewerToken`, who decides the seeded reviews. */
  reviewerId: string;
  /** Everyone who decides or signs in in the seeded trail, the reviewer first. */
  userIds: string[];
}

export async function createSizeOrganization(db: Database): Promise<SizeOrganization> {
  const organization = await createBenchOrganization(db.url);
  const { rows } = await db.query<{ id: string; kind: string }>(
    `SELECT id, 'key' AS kind FROM api_keys WHERE org_id = $1 UNION ALL SELECT id, 'user' FROM users WHERE org_id = $1`,
    [organization.orgId],
  );
  const benchKey = rows.find((row) => row.kind === 'key')!.id;
  const reviewerId = rows.find((row) => row.kind === 'user')!.id;
  const keyIds = [benchKey];
  for (const label of ['invoice agent', 'support agent', 'nightly sync']) {
    const { key } = await createApiKey(db, { orgId: organization.orgId, label, access: 'read_write' });
    keyIds.push(key.id);
  }
  const userIds = [reviewerId];
  for (const [email, role] of [['owner', 'owner'], ['second.reviewer', 'reviewer']] as const) {
    const user = await createUser(db, { orgId: organization.orgId, email: `${email}@${organization.slug}.bench`, role });
    userIds.push(user.id);
  }
  return { ...organization, keyIds, reviewerId, userIds };
}
