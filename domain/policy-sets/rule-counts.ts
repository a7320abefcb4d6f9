import type { Queryable } from '../../db/database';
import type { GateDecisionKind } from '../../policy/engine';
import { policySaid } from './lab';

/** The periods the count covers, back from now. */
export const ruleCountRanges = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type RuleCountRange = keyof typeof ruleCountRanges;

/** One rule (its @id), and how many writes it decided each way; `policy_id` null: no rule permitted the write. */
export type RuleCount = { policy_id: string | null; total: number } & Record<GateDecisionKind, number>;

export interface RuleCounts {
  since: string;
  /** Writes decided in the period (a write decided by two rules counts once here, once for each rule below). */
  decisions: number;
  /** Most decisions first. */
  rules: RuleCount[];
}

/**
 * How often each rule decided the organization's gated writes since `range` ago, by what the policy said (a Review
 * a trust window let through, or one refused by a full queue, was a Review). Reads gate_decisions by its
 * (org_id, created_at) index.
 */
export async function countRuleDecisions(db: Queryable, orgId: string, range: RuleCountRange): Promise<RuleCounts> {
  const since = new Date(Date.now() - ruleCountRanges[range] * 3600 * 1000);
  const { rows } = await db.query(
    `WITH decided AS (
       SELECT d.policy_ids, ${policySaid} AS said FROM gate_decisions d WHERE d.org_id = $1 AND d.created_at >= $2
     )
     SELECT rule.id AS policy_id, said, count(*)::int AS n, (SELECT count(*)::int FROM decided) AS decisions
     FROM decided LEFT JOIN LATERAL unnest(decided.policy_ids) AS rule(id) ON true
     GROUP BY 1, 2`,
    [orgId, since],
  );
  const rules = new Map<string | null, RuleCount>();
  for (const row of rows) {
    const id = row.policy_id as string | null;
    const rule = rules.get(id) ?? { policy_id: id, total: 0, allow: 0, review: 0, deny: 0 };
    rule[row.said as GateDecisionKind] += row.n;
    rule.total += row.n;
    rules.set(id, rule);
  }
  const ordered = [...rules.values()].sort((a, b) => b.total - a.total || (a.policy_id ?? '').localeCompare(b.policy_id ?? ''));
  return { since: since.toISOString(), decisions: rows[0]?.decisions ?? 0, rules: ordered };
}
