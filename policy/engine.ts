import * as cedar from '@cedar-policy/cedar-wasm/nodejs';

export type GateDecisionKind = 'allow' | 'review' | 'deny';

export interface CompiledPolicySet {
  /** Cedar policy text by policy id (the @id annotation, else `policy<n>` by position). */
  policies: Record<string, string>;
  annotations: Record<string, Record<string, string>>;
  effects: Record<string, 'permit' | 'forbid'>;
  /** The attributes each policy's conditions read (`resource.title`, `context.changes`), by policy id. */
  reads: Record<string, string[]>;
}

/** What an agent is told of a rule that denied or held its write: never the rule's text unless the organization allows it. */
export interface RuleExplanation {
  policy_id: string;
  /** What the rule does when it matches: deny, review (hold for a person) or allow. */
  effect: GateDecisionKind;
  /** Its @reason, if it has one. */
  reason: string | null;
  /** Its @hint: what would be allowed instead, in the policy author's words. */
  hint: string | null;
  /** The attributes of the write (`resource.…`), its context (`context.…`) or the key (`principal.…`) the rule's conditions read. */
  looks_at: string[];
}

/** The rules named, as an agent may be told of them (ids the set no longer has are left out). */
export function explainRules(policySet: CompiledPolicySet, policyIds: string[]): RuleExplanation[] {
  return policyIds
    .filter((id) => policySet.policies[id] !== undefined)
    .map((id) => {
      const notes = policySet.annotations[id] ?? {};
      return {
        policy_id: id,
        effect: policySet.effects[id] === 'forbid' ? 'deny' : notes.decision === 'review' ? 'review' : 'allow',
        reason: notes.reason ?? null,
        hint: notes.hint ?? null,
        looks_at: policySet.reads[id] ?? [],
      };
    });
}

/** The attribute paths a policy's conditions read (`resource.title`), the longest of each chain only, in order. */
function attributesRead(conditions: unknown): string[] {
  const found: string[] = [];
  const pathOf = (node: unknown): string | undefined => {
    if (!node || typeof node !== 'object') return undefined;
    const n = node as Record<string, unknown>;
    if (typeof n.Var === 'string') return n.Var;
    const access = (n['.'] ?? n.has) as { left?: unknown; attr?: string } | undefined;
    if (access?.attr === undefined) return undefined;
    const left = pathOf(access.left);
    return left === undefined ? undefined : `${left}.${access.attr}`;
  };
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const path = pathOf(node);
    if (path?.includes('.')) found.push(path);
    for (const child of Object.values(node as Record<string, unknown>)) walk(child);
  };
  walk(conditions);
  const unique = [...new Set(found)];
  return unique.filter((path) => !unique.some((other) => other.startsWith(`${path}.`)));
}

export class PolicyParseError extends Error {}

/** Parses a policy set; throws PolicyParseError carrying Cedar's own message. */
export function compilePolicySet(source: string): CompiledPolicySet {
  const parts = cedar.policySetTextToParts(source);
  if (parts.type === 'failure') throw new PolicyParseError(describeErrors(source, parts.errors));
  const policies: Record<string, string> = {};
  const annotations: Record<string, Record<string, string>> = {};
  const effects: Record<string, 'permit' | 'forbid'> = {};
  const reads: Record<string, string[]> = {};
  parts.policies.forEach((text, index) => {
    const json = cedar.policyToJson(text);
    if (json.type === 'failure') throw new PolicyParseError(describeErrors(text, json.errors));
    const notes = json.json.annotations ?? {};
    const id = notes.id ?? `policy${index + 1}`;
    if (policies[id]) throw new PolicyParseError(`two policies have the id "${id}"; each @id must be unique`);
    const decision = notes.decision;
    if (decision !== undefined && decision !== 'review' && decision !== 'allow') {
      throw new PolicyParseError(`policy "${id}": @decision may only be "review" or "allow", not "${decision}"`);
    }
    if (decision !== undefined && json.json.effect !== 'permit') {
      throw new PolicyParseError(`policy "${id}": @decision("${decision}") belongs on a permit, not a forbid`);
    }
    if (notes.approvals !== undefined) {
      if (decision !== 'review') throw new PolicyParseError(`policy "${id}": @approvals belongs on a rule with @decision("review")`);
      if (!/^([1-9]|10)$/.test(notes.approvals)) {
        throw new PolicyParseError(`policy "${id}": @approvals must be a whole number of people from 1 to 10, not "${notes.approvals}"`);
      }
    }
    policies[id] = text;
    annotations[id] = notes;
    effects[id] = json.json.effect;
    reads[id] = attributesRead(json.json.conditions);
  });
  if (parts.policy_templates.length > 0) throw new PolicyParseError('policy templates are not supported; write static policies');
  return { policies, annotations, effects, reads };
}

export type CedarValue = string | number | boolean | CedarValue[] | { [key: string]: CedarValue } | { __extn: { fn: string; arg: string } };

export interface PolicyRequest {
  principal: { type: string; id: string; attrs: Record<string, unknown> };
  action: string;
  resource: { type: string; id: string; attrs: Record<string, unknown> };
  context: Record<string, unknown>;
}

export interface PolicyDecision {
  decision: GateDecisionKind;
  reason: string;
  policyIds: string[];
  /** Policies that could not be evaluated for this request (a missing attribute, say), with Cedar's message. */
  errors: string[];
  /** For a Review: how many distinct people must approve (the most any holding rule's @approvals asks). */
  approvals?: number;
}

/** How many people a review held by these rules needs: the largest @approvals among them, 1 when none says. */
export function approvalsNeeded(policySet: CompiledPolicySet, policyIds: string[]): number {
  return Math.max(1, ...policyIds.map((id) => Number(policySet.annotations[id]?.approvals ?? 1)));
}

/**
 * Cedar keeps preparsed policy sets in the WebAssembly module under names, and has no call to drop one: the names
 * are reused in turn, so at most this many sets are held, each reparsed should it be needed after its name went
 * to another.
 */
export const preparedSlots = 1024;
let nextSlot = 0;
const slotOf = new WeakMap<CompiledPolicySet, string>();
const occupantOf = new Map<string, CompiledPolicySet>();

/** The name under which Cedar holds this policy set parsed; parsed now if it does not hold it. */
function preparedName(policySet: CompiledPolicySet): string {
  const held = slotOf.get(policySet);
  if (held !== undefined && occupantOf.get(held) === policySet) return held;
  const slot = `set${nextSlot++ % preparedSlots}`;
  const parsed = cedar.preparsePolicySet(slot, { staticPolicies: policySet.policies });
  if (parsed.type === 'failure') throw new PolicyParseError(parsed.errors.map((e) => e.message).join('; '));
  slotOf.set(policySet, slot);
  occupantOf.set(slot, policySet);
  return slot;
}

/** Evaluates a write against a compiled policy set, parsed by Cedar once and kept (not on every call). */
export function evaluatePolicy(policySet: CompiledPolicySet, request: PolicyRequest): PolicyDecision {
  const answer = cedar.statefulIsAuthorized({
    principal: { type: request.principal.type, id: request.principal.id },
    action: { type: 'Action', id: request.action },
    resource: { type: request.resource.type, id: request.resource.id },
    context: toCedarRecord(request.context) as cedar.Context,
    preparsedPolicySetId: preparedName(policySet),
    entities: [
      { uid: { type: request.principal.type, id: request.principal.id }, attrs: toCedarRecord(request.principal.attrs), parents: [] },
      { uid: { type: request.resource.type, id: request.resource.id }, attrs: toCedarRecord(request.resource.attrs), parents: [] },
    ] as cedar.EntityJson[],
  });
  if (answer.type === 'failure') {
    return { decision: 'deny', reason: `The policy could not be evaluated: ${answer.errors.map((e) => e.message).join('; ')}`, policyIds: [], errors: [] };
  }
  const { decision, diagnostics } = answer.response;
  const errors = diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`);
  const erroring = diagnostics.errors.map((e) => e.policyId);
  const isForbid = (id: string) => policySet.effects[id] === 'forbid';
  const holdsForReview = (id: string) => policySet.annotations[id]?.decision === 'review';
  const reasonOf = (ids: string[]) => ids.map((id) => policySet.annotations[id]?.reason ?? `policy "${id}"`).join('; ');
  const unevaluated = (ids: string[]) =>
    `${reasonOf(ids)} (the policy could not be evaluated for this write: ${errors.filter((e) => ids.some((id) => e.startsWith(`${id}:`))).join('; ')})`;

  // A gate fails closed: a forbid that cannot be evaluated denies; a review rule that cannot be evaluated holds.
  if (decision === 'deny' && diagnostics.reason.length > 0) {
    return { decision: 'deny', reason: reasonOf(diagnostics.reason), policyIds: diagnostics.reason, errors };
  }
  const brokenForbids = erroring.filter(isForbid);
  if (brokenForbids.length > 0) return { decision: 'deny', reason: unevaluated(brokenForbids), policyIds: brokenForbids, errors };
  if (decision === 'deny') {
    return { decision: 'deny', reason: `No policy permits ${request.action}`, policyIds: [], errors };
  }
  // A permit marked @decision("allow") lets through what a review rule would hold (a rule adopted from the review
  // history, say); a forbid still denies. One that cannot be evaluated lets nothing through.
  const exempting = diagnostics.reason.filter((id) => policySet.annotations[id]?.decision === 'allow');
  if (exempting.length > 0) return { decision: 'allow', reason: reasonOf(exempting), policyIds: exempting, errors };
  const holding = diagnostics.reason.filter(holdsForReview);
  if (holding.length > 0) return { decision: 'review', reason: reasonOf(holding), policyIds: holding, errors, approvals: approvalsNeeded(policySet, holding) };
  const brokenReviews = erroring.filter(holdsForReview);
  if (brokenReviews.length > 0) {
    return { decision: 'review', reason: unevaluated(brokenReviews), policyIds: brokenReviews, errors, approvals: approvalsNeeded(policySet, brokenReviews) };
  }
  return { decision: 'allow', reason: reasonOf(diagnostics.reason), policyIds: diagnostics.reason, errors };
}

/** Cedar has no null and no floats: nulls are left out, fractions become decimals. */
export function toCedarRecord(record: Record<string, unknown>): Record<string, CedarValue> {
  const out: Record<string, CedarValue> = {};
  for (const [key, value] of Object.entries(record)) {
    const converted = toCedarValue(value);
    if (converted !== undefined) out[key] = converted;
  }
  return out;
}

function toCedarValue(value: unknown): CedarValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value;
    return Number.isFinite(value) ? { __extn: { fn: 'decimal', arg: value.toFixed(4) } } : undefined;
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toCedarValue).filter((v): v is CedarValue => v !== undefined);
  if (typeof value === 'object') return toCedarRecord(value as Record<string, unknown>);
  return String(value);
}

function describeErrors(source: string, errors: cedar.DetailedError[]): string {
  return errors
    .map((error) => {
      const at = error.sourceLocations?.[0];
      const where = at ? ` at ${lineAndColumn(source, at.start)}` : '';
      const expected = at?.label ? ` (${at.label})` : '';
      return `${error.message}${where}${expected}`;
    })
    .join('; ');
}

function lineAndColumn(source: string, offset: number): string {
  const before = source.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}
