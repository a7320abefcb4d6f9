import { z } from 'zod';
import { countRuleDecisions, ruleCountRanges, type RuleCountRange } from '../../domain/policy-sets/rule-counts';
import { currentPolicySet, listPolicyVersions, setPolicySet, type PolicySetVersion } from '../../domain/policy-sets/versions';
import { compileDraft, parseSince, shadowReport, simulatePolicy, startShadow, stopShadow, suggestRules } from '../../domain/policy-sets/lab';
import { rolesThat, type PersonActor } from '../../domain/identity/actors';
import { text } from '../../domain/kit/fields';
import { findGatedWrite } from '../../domain/resources';
import { defineOperation } from './operation';

// The organization's Cedar policy as people see and change it in the console's Policy page: the set in force and
// its versions, an editor that checks a draft before it is saved, a dry run of a draft over the recorded decisions,
// a draft in shadow beside the live policy, and allow rules suggested from the review history.

const consoleOnly = ['console'] as const;
const readAccess = { person: { roles: rolesThat.readAudit } };
const editAccess = { person: { roles: rolesThat.editPolicy } };
const sourceField = z.string().max(200_000).describe('A Cedar policy set, as a .cedar file holds it');

const versionSchema = z.object({
  version: z.number().int().describe('The version; it increases with every change'),
  source: z.string().describe('The Cedar text of this version'),
  created_by: z.string().describe('Who saved it: a person\'s email, cli:<file>, or default'),
  created_at: z.string().describe('When it was saved (RFC 3339)'),
});
const wireOfVersion = (version: PolicySetVersion): z.infer<typeof versionSchema> => ({
  version: version.version,
  source: version.source,
  created_by: version.createdBy,
  created_at: version.createdAt,
});

const changedDecisionSchema = z.object({
  decision_id: z.string().describe('The recorded decision (dec_…)'),
  at: z.string().describe('When it was decided (RFC 3339)'),
  operation: z.string().describe('The write, e.g. tasks.update'),
  api_key_id: z.string().describe('The key that sent it (key_…)'),
  api_key_label: z.string().describe("The key's label"),
  was: z
    .enum(['allow', 'review', 'deny'])
    .describe('What the live policy decided (review for a write it held that a trust window let through, and for one refused by a full review queue)'),
  trust_window_id: z.string().nullable().describe('The trust window that let the write through although the live policy held it (trw_…), or null'),
  would_be: z.enum(['allow', 'review', 'deny']).describe('What the draft decides'),
  reason: z.string().describe("The draft's reason"),
  policy_ids: z.array(z.string()).describe("The draft's rules that decided"),
});
const countsSchema = z.record(z.string(), z.number().int()).describe('How many decisions change, by live→draft (allow→review, …)');

/** A window such as 7d or 12h back from now, or an RFC 3339 instant. */
const sinceField = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const at = parseSince(value);
    if (!at) ctx.addIssue({ code: 'custom', message: 'a window such as 7d or 12h, or an RFC 3339 instant' });
    return at ?? z.NEVER;
  })
  .describe('How far back: 7d, 12h, or an RFC 3339 instant (default 7d)');

const resourceTypeOf = (operation: string) => findGatedWrite(operation)?.resourceType;
const personActor = (actor: unknown) => ({ type: 'user' as const, id: (actor as PersonActor).userId });

export const getPolicyOperation = defineOperation({
  kind: 'read',
  name: 'policy.get',
  family: 'policy',
  summary: 'The policy in force',
  description: "The organization's Cedar policy set in force, with its version.",
  method: 'GET',
  path: '/policy',
  list: false,
  input: z.strictObject({}),
  output: versionSchema,
  access: readAccess,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => wireOfVersion(await currentPolicySet(db, caller.organization.id)),
});

export const policyVersionsOperation = defineOperation({
  kind: 'read',
  name: 'policy.versions',
  family: 'policy',
  summary: "The policy's versions",
  description: 'Every saved version of the policy set, newest first (the 50 newest).',
  method: 'GET',
  path: '/policy/versions',
  list: false,
  input: z.strictObject({}),
  output: z.object({ versions: z.array(versionSchema).describe('Newest first') }),
  access: readAccess,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => ({ versions: (await listPolicyVersions(db, caller.organization.id, 50)).map(wireOfVersion) }),
});

export const updatePolicyOperation = defineOperation({
  kind: 'person_action',
  name: 'policy.update',
  family: 'policy',
  summary: 'Save a new policy version',
  description: 'Checks the draft with Cedar and saves it as the new version in force; a draft that does not parse is refused (422, with the place) and the old version stays.',
  method: 'PATCH',
  path: '/policy',
  input: z.strictObject({ source: sourceField, comment: text({ max: 500 }).optional().describe('Why, for the audit trail') }),
  output: versionSchema,
  access: editAccess,
  interfaces: consoleOnly,
  handler: async (input, { db, caller }) => {
    compileDraft(input.source);
    const person = caller.actor as PersonActor;
    return wireOfVersion(await setPolicySet(db, caller.organization.id, input.source, person.email, { actor: personActor(person), comment: input.comment }));
  },
});

export const simulatePolicyOperation = defineOperation({
  kind: 'person_action',
  name: 'policy.simulate',
  family: 'policy',
  summary: 'Dry-run a draft over recorded decisions',
  description:
    'Replays the decisions recorded in the window under a draft (each with the record and context the policy saw, the key as it is now) and lists every decision that would change. Changes nothing; a draft that does not parse is refused (422).',
  method: 'POST',
  path: '/policy/simulate',
  input: z.strictObject({
    source: sourceField,
    since: sinceField.optional(),
    limit: z.number().int().min(1).max(500).optional().describe('How many changed decisions to list (default 100); the counts cover all'),
  }),
  output: z.object({
    evaluated: z.number().int().describe('How many recorded decisions were replayed'),
    changed: countsSchema,
    changes: z.array(changedDecisionSchema).describe('The decisions that would change, newest first'),
    truncated: z.boolean().describe('True when the window held more decisions than one dry run replays (the newest 20,000 were)'),
  }),
  access: editAccess,
  interfaces: consoleOnly,
  handler: async (input, { db, caller }) =>
    simulatePolicy(db, caller.organization.id, compileDraft(input.source), {
      since: input.since ?? new Date(Date.now() - 7 * 24 * 3600 * 1000),
      limit: input.limit ?? 100,
      resourceTypeOf,
    }),
});

const shadowSchema = z
  .object({
    source: z.string().describe('The draft running in shadow'),
    started_at: z.string().describe('When it started (RFC 3339)'),
    started_by: z.string().nullable().describe('Who started it (usr_…); null from the CLI'),
    decided: z.number().int().describe('Writes both decided since it started'),
    disagreed: countsSchema,
    disagreements: z.array(changedDecisionSchema).describe('Where the draft would have decided otherwise, newest first (100 at most)'),
  })
  .nullable();

export const policyShadowOperation = defineOperation({
  kind: 'read',
  name: 'policy.shadow',
  family: 'policy',
  summary: 'The draft in shadow, and where it disagrees',
  description: 'The draft that decides every write beside the live policy without effect, and where the two disagreed since it started; null when none runs.',
  method: 'GET',
  path: '/policy/shadow',
  list: false,
  input: z.strictObject({}),
  output: z.object({ shadow: shadowSchema }),
  access: readAccess,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => ({ shadow: await shadowReport(db, caller.organization.id, 100) }),
});

export const startShadowOperation = defineOperation({
  kind: 'person_action',
  name: 'policy.start_shadow',
  family: 'policy',
  summary: 'Run a draft in shadow',
  description:
    'From now on every gated write is also decided by the draft, and where it would decide otherwise is recorded; writes are decided by the live policy alone. Replaces a draft already in shadow (its record starts anew).',
  method: 'POST',
  path: '/policy/shadow',
  input: z.strictObject({ source: sourceField }),
  output: z.object({ shadow: shadowSchema }),
  access: editAccess,
  interfaces: consoleOnly,
  handler: async (input, { db, caller }) => {
    await startShadow(db, caller.organization.id, input.source, personActor(caller.actor));
    return { shadow: await shadowReport(db, caller.organization.id, 100) };
  },
});

export const stopShadowOperation = defineOperation({
  kind: 'person_action',
  name: 'policy.stop_shadow',
  family: 'policy',
  summary: 'Stop the draft in shadow',
  description: 'Stops deciding writes with the draft in shadow; what it recorded stays on the decisions. Stopping when none runs changes nothing.',
  method: 'DELETE',
  path: '/policy/shadow',
  input: z.strictObject({}),
  output: z.object({ shadow: shadowSchema }),
  access: editAccess,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => {
    await stopShadow(db, caller.organization.id, personActor(caller.actor));
    return { shadow: null };
  },
});

export const policySuggestionsOperation = defineOperation({
  kind: 'read',
  name: 'policy.suggestions',
  family: 'policy',
  summary: 'Allow rules suggested by the review history',
  description:
    'For each kind of held write (its operation, the rule that held it, the fields it changed, its key when all came from one) that people approved every time, at least min_approved times and never denied: a proposed allow rule with the evidence. A person adopts one by adding it to the policy and saving.',
  method: 'GET',
  path: '/policy/suggestions',
  list: false,
  input: z.strictObject({
    min_approved: z.coerce.number().int().min(2).max(10_000).optional().describe('How many approvals, none denied, make a suggestion (default 10)'),
    days: z.coerce.number().int().min(1).max(365).optional().describe('How far back the history is read, in days (default 90)'),
  }),
  output: z.object({
    suggestions: z.array(
      z.object({
        rule: z.string().describe('The proposed Cedar rule: a permit marked @decision("allow"), which lets these writes through where the review rule would hold them'),
        operation: z.string().describe('The write, e.g. tasks.update'),
        changed_fields: z.array(z.string()).nullable().describe('For updates: exactly the fields the approved writes changed; null otherwise'),
        api_key_id: z.string().nullable().describe('The key all of them came from, when they came from one'),
        held_by: z.array(z.string()).describe('The rules that held them'),
        evidence: z.object({
          approved: z.number().int().describe('How many people approved'),
          denied: z.number().int().describe('How many were denied (always 0 for a suggestion)'),
          first_at: z.string().describe('The first such review (RFC 3339)'),
          last_at: z.string().describe('The last such review (RFC 3339)'),
          review_ids: z.array(z.string()).describe('The newest few of those reviews (rev_…)'),
        }),
      }),
    ),
  }),
  access: readAccess,
  interfaces: consoleOnly,
  handler: async (input, { db, caller }) => ({
    suggestions: await suggestRules(db, caller.organization.id, { minApproved: input.min_approved ?? 10, days: input.days ?? 90 }),
  }),
});

const rangeNames = Object.keys(ruleCountRanges) as [RuleCountRange, ...RuleCountRange[]];

export const policyRuleCountsOperation = defineOperation({
  kind: 'read',
  name: 'policy.rule_counts',
  family: 'policy',
  summary: 'How often each rule decided',
  description:
    "Each rule (by its @id) that decided the organization's gated writes over the last 24 hours, 7 days or 30 days, with how many it allowed, held for review and denied, most first. A write decided by two rules counts for each; a write no rule permitted counts under a null policy_id.",
  method: 'GET',
  path: '/policy/rule-counts',
  list: false,
  input: z.strictObject({
    range: z.enum(rangeNames).default('7d').describe('How far back: 24h, 7d or 30d (default 7d)'),
  }),
  output: z.object({
    since: z.string().describe('The start of the period (RFC 3339)'),
    decisions: z.number().int().describe('Writes decided in the period'),
    rules: z
      .array(
        z.object({
          policy_id: z.string().nullable().describe("The rule's @id; null: no rule permitted the write (denied by default)"),
          allow: z.number().int(),
          review: z.number().int().describe('Held for review (with those a trust window let through and those a full queue refused)'),
          deny: z.number().int(),
          total: z.number().int(),
        }),
      )
      .describe('Most decisions first'),
  }),
  access: readAccess,
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => countRuleDecisions(db, caller.organization.id, input.range),
});

export const policyOperations = [
  getPolicyOperation,
  policyVersionsOperation,
  updatePolicyOperation,
  simulatePolicyOperation,
  policyShadowOperation,
  startShadowOperation,
  stopShadowOperation,
  policySuggestionsOperation,
  policyRuleCountsOperation,
];
