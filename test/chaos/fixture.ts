import { readFileSync } from 'node:fs';
import type { Database } from '../../db/database';
import { setPolicySet } from '../../domain/policy-sets/versions';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization } from '../../domain/identity/organizations';
import { createPersonalToken, createUser } from '../../domain/identity/people';

/** The title decides: "review…" is held for a person, "deny…" denied, anything else allowed. */
const policy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

/**
 * The suite's plan: limits far above what its writers send, so that no answer is a 429 while every request is
 * still counted as on any plan. A row of the scenario's own database.
 */
const chaosPlan = { name: 'chaos', perMinute: 1_000_000, dailyBudget: 100_000_000, reviewCap: 100_000 };

export interface ChaosOrganization {
  orgId: string;
  slug: string;
  /** One read-write API key per writer: each writer's Idempotency-Keys live in its own key's scope. */
  agentTokens: string[];
  /** Two people with the reviewer role, with personal tokens, to race each other. */
  reviewerTokens: [string, string];
}

export async function createChaosOrganization(db: Database, agents: number): Promise<ChaosOrganization> {
  await db.query(
    `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
     VALUES ($1, $2, $3, $3, $4, '{expenses,work_logs}', 'The chaos suite''s: never refuses, counts every request')
     ON CONFLICT (name) DO NOTHING`,
    [chaosPlan.name, chaosPlan.dailyBudget, chaosPlan.perMinute, chaosPlan.reviewCap],
  );
  const organization = await createOrganization(db, { slug: `chaos-${Date.now().toString(36)}`, name: 'Chaos', plan: chaosPlan.name });
  await setPolicySet(db, organization.id, policy, 'chaos');
  const agentTokens: string[] = [];
  for (let i = 0; i < agents; i += 1) {
    agentTokens.push((await createApiKey(db, { orgId: organization.id, label: `chaos agent ${i + 1}`, access: 'read_write' })).token);
  }
  const reviewer = async (email: string) =>
    (await createPersonalToken(db, await createUser(db, { orgId: organization.id, email, role: 'reviewer' }))).token;
  return {
    orgId: organization.id,
    slug: organization.slug,
    agentTokens,
    reviewerTokens: [await reviewer('first-reviewer@chaos.test'), await reviewer('second-reviewer@chaos.test')],
  };
}
