import { readFileSync } from 'node:fs';
import { connectDatabase } from '../db/database';
import { createApiKey } from '../domain/identity/api-keys';
import { createOrganization } from '../domain/identity/organizations';
import { createPersonalToken, createUser } from '../domain/identity/people';
import { setPolicySet } from '../domain/policy-sets/versions';

/** The title decides: "review…" → Review, "deny…" → Deny, anything else → Allow. */
export const benchPolicy = readFileSync(new URL('../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

export interface BenchOrganization {
  orgId: string;
  slug: string;
  token: string;
  /** A reviewer's personal token: the person who approves held writes. */
  reviewerToken: string;
}

/**
 * The bench's plan: limits far above anything it sends (thousands of requests a minute from one key), so no
 * answer is ever 429, while every request is still counted as on any plan. A row of the bench's own database.
 */
export const benchPlan = { name: 'bench', perMinute: 1_000_000, dailyBudget: 100_000_000 };

/**
 * An organization on the bench plan with the bench policy and a read-write API key, made through the domain functions.
 * A database may hold several (the size phases make one per size): the plan is made by the first.
 */
export async function createBenchOrganization(databaseUrl: string): Promise<BenchOrganization> {
  const db = connectDatabase(databaseUrl, { maxConnections: 2 });
  try {
    await db.query(
      `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
       VALUES ($1, $2, $3, $3, $3, '{expenses,work_logs}', 'The benchmark''s: never refuses, counts every request')
       ON CONFLICT (name) DO NOTHING`,
      [benchPlan.name, benchPlan.dailyBudget, benchPlan.perMinute],
    );
    const organization = await createOrganization(db, { slug: `bench-${Date.now().toString(36)}`, name: 'Benchmark', plan: benchPlan.name });
    await setPolicySet(db, organization.id, benchPolicy, 'bench');
    const { token } = await createApiKey(db, { orgId: organization.id, label: 'bench agent', access: 'read_write' });
    const reviewer = await createUser(db, { orgId: organization.id, email: `reviewer@${organization.slug}.bench`, role: 'reviewer' });
    const { token: reviewerToken } = await createPersonalToken(db, reviewer);
    return { orgId: organization.id, slug: organization.slug, token, reviewerToken };
  } finally {
    await db.close();
  }
}
