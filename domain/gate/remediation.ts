import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { explainRules } from '../../policy/engine';
import type { GateAnswer } from './contract';
import { policySetOfDecision } from '../policy-sets/versions';

/** How a Deny or a Review could go otherwise: the rules that decided, what they read, and what to do next. */
export const remediationSchema = z
  .object({
    rules: z
      .array(
        z.object({
          policy_id: z.string().describe('The rule (its @id)'),
          effect: z.enum(['allow', 'review', 'deny']).describe('What the rule does when it matches'),
          reason: z.string().nullable().describe("The rule's @reason"),
          hint: z.string().nullable().describe("The rule's @hint: what would be allowed instead, in the policy author's words"),
          looks_at: z
            .array(z.string())
            .describe('What the rule reads: attributes of the record as it would be (resource.…), of the write (context.changes, context.before.…) or of the key (principal.…)'),
          text: z.string().optional().describe("The rule's Cedar text: only when the organization shares its policy text with agents"),
        }),
      )
      .describe('The rules that decided; empty for a Deny because no rule permits the write'),
    next_step: z.string().describe('What to do next, for an agent to read: what to change, or whom to ask'),
  })
  .describe('How the write could succeed: the rules that decided and what they look at');

export type Remediation = z.infer<typeof remediationSchema>;
type ExplainedRule = Remediation['rules'][number];

/**
 * The remediation of a denied or held write, from the policy version that decided it: each rule's id, reason,
 * @hint and the attributes it read, so that an agent can change its request; the rule's text only when the
 * organization shares it (`share_policy_text`).
 */
export async function remediationOf(
  db: Queryable,
  orgId: string,
  answer: Extract<GateAnswer, { outcome: 'denied' | 'pending_review' }>,
  operation: string,
  { sharePolicyText }: { sharePolicyText: boolean },
): Promise<Remediation> {
  const policySet = await policySetOfDecision(db, orgId, answer.decisionId);
  const rules: ExplainedRule[] = policySet
    ? explainRules(policySet, answer.policyIds).map((rule) => (sharePolicyText ? { ...rule, text: policySet.policies[rule.policy_id] } : rule))
    : [];
  return { rules, next_step: nextStep(answer.outcome, operation, rules) };
}

function nextStep(outcome: 'denied' | 'pending_review', operation: string, rules: ExplainedRule[]): string {
  if (rules.length === 0) {
    return outcome === 'denied'
      ? `No rule of the organization's policy permits ${operation} for this key. Do not retry it; ask a person to change the policy or to make the change themselves.`
      : 'A person decides this write; follow the review and do not submit it again.';
  }
  const said = rules.map((rule) => {
    if (rule.hint) return rule.hint;
    const reads = rule.looks_at.length ? ` It looks at ${rule.looks_at.join(', ')}.` : '';
    return `Rule "${rule.policy_id}"${rule.reason ? ` (${rule.reason})` : ''} matched.${reads}`;
  });
  return outcome === 'denied'
    ? `${said.join(' ')} A write that no deny rule matches may be allowed: change what the rule looks at, or ask a person.`
    : `${said.join(' ')} This write waits for a person; a later write that the rule does not match may run at once.`;
}
