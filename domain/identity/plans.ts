import type { Queryable } from '../../db/database';

export type Feature = 'expenses' | 'work_logs';

/** What an organization's plan allows: a row of the `plans` table, read with the organization on every request. */
export interface Plan {
  name: string;
  description: string;
  /** Requests a day per organization, REST and MCP together; the day is the organization's local day. */
  dailyBudget: number;
  /** Requests a minute per token over REST. */
  restPerMinute: number;
  /** Requests a minute per token over MCP, counted apart from REST. */
  mcpPerMinute: number;
  /** Writes held for review at once; past it, writes that would be held are refused. */
  pendingReviewCap: number;
  features: Feature[];
}

/** The plan's columns, for queries that join `plans p`; names chosen not to clash with the organization's. */
export const planColumns = `p.name AS plan_name, p.description AS plan_description, p.daily_budget, p.rest_per_minute,
  p.mcp_per_minute, p.pending_review_cap, p.features AS plan_features`;

export function planFromRow(row: Record<string, unknown>): Plan {
  return {
    name: row.plan_name as string,
    description: row.plan_description as string,
    dailyBudget: row.daily_budget as number,
    restPerMinute: row.rest_per_minute as number,
    mcpPerMinute: row.mcp_per_minute as number,
    pendingReviewCap: row.pending_review_cap as number,
    features: row.plan_features as Feature[],
  };
}

export function includesFeature(plan: Plan, feature: Feature): boolean {
  return plan.features.includes(feature);
}

export async function listPlans(db: Queryable): Promise<Plan[]> {
  const { rows } = await db.query(`SELECT ${planColumns} FROM plans p ORDER BY p.daily_budget, p.name`);
  return rows.map(planFromRow);
}

export async function findPlan(db: Queryable, name: string): Promise<Plan | undefined> {
  const { rows } = await db.query(`SELECT ${planColumns} FROM plans p WHERE p.name = $1`, [name]);
  return rows[0] ? planFromRow(rows[0]) : undefined;
}
