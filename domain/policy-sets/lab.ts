import type { Database, Queryable } from '../../db/database';
import { compilePolicySet, evaluatePolicy, PolicyParseError, type CompiledPolicySet, type GateDecisionKind } from '../../policy/engine';
import { labelVerifiedSql } from '../kit/agent-names';
import { parseWait } from '../kit/durations';
import { AppError } from '../kit/errors';
import { recordAudit, type ActorRef } from '../audit/events';

// Changing policy without fear: a draft replayed over the decisions the live policy made (simulation), a draft
// running beside the live policy on every new write (shadow), and allow rules proposed from what people approved
// every time (suggestions). None of it changes a decision; a person adopts a draft by saving it.

/** The kind of write a decision was about, for the policy's resource type (`tasks.create` → `Task`). */
export type ResourceTypeOf = (operation: string) => string | undefined;

/** A draft's decision where it differs from the recorded one. */
export interface ChangedDecision {
  decision_id: string;
  at: string;
  operation: string;
  api_key_id: string;
  api_key_label: string;
  /**
   * What the live policy decided: a Review refused because the queue was full, and a Review a trust window let
   * through (recorded as allowed), read as review.
   */
  was: GateDecisionKind;
  /** The trust window that let the write through although the live policy held it, or null. */
  trust_window_id: string | null;
  would_be: GateDecisionKind;
  reason: string;
  policy_ids: string[];
}

export interface SimulationResult {
  /** How many recorded decisions were replayed under the draft. */
  evaluated: number;
  /** How many the draft would decide otherwise, by `was→would_be` (`allow→review`). */
  changed: Record<string, number>;
  /** The decisions that would change, newest first (at most `limit`). */
  changes: ChangedDecision[];
  /** True when more decisions were recorded in the window than a simulation replays; the oldest were left out. */
  truncated: boolean;
}

/** A window back from now (`7d`, `12h`, `30m`) or an RFC 3339 instant; undefined when it is neither. */
export function parseSince(value: string, now = Date.now()): Date | undefined {
  const wait = parseWait(value);
  if (wait !== undefined) return new Date(now - wait);
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value.trim())) return undefined;
  const at = new Date(value.trim());
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** At most this many recorded decisions are replayed by one simulation (the newest). */
export const simulationCap = 20_000;

/** Parses a draft, refusing it with Cedar's own message. */
export function compileDraft(source: string, field = 'source'): CompiledPolicySet {
  try {
    return compilePolicySet(source);
  } catch (error) {
    if (error instanceof PolicyParseError) {
      throw new AppError('validation_failed', `The policy set does not parse: ${error.message}`, { fields: [{ field, message: error.message }] });
    }
    throw error;
  }
}

/**
 * What the live policy said of a recorded decision (`d`, a row of gate_decisions), as a draft is compared with it:
 * a Review refused by a full queue, and a Review a trust window let through (recorded as an allow), were Reviews.
 */
export const policySaid = `CASE WHEN d.decision = 'refused' OR d.trust_window_id IS NOT NULL THEN 'review' ELSE d.decision END`;

/**
 * Replays the decisions recorded since `since` under a draft: each with the record and context the policy saw
 * then, the key as it is now (its label, access and abilities) as the principal. Lists every decision that
 * would change.
 */
export async function simulatePolicy(
  db: Queryable,
  orgId: string,
  draft: CompiledPolicySet,
  options: { since: Date; limit: number; resourceTypeOf: ResourceTypeOf },
): Promise<SimulationResult> {
  const { rows } = await db.query(
    `SELECT d.id, d.created_at, d.operation, ${policySaid} AS was, d.trust_window_id, d.resource, d.context, d.api_key_id, k.label,
            ${labelVerifiedSql('k')} AS label_verified, k.access, k.abilities
     FROM gate_decisions d JOIN api_keys k ON k.id = d.api_key_id
     WHERE d.org_id = $1 AND d.created_at >= $2
     ORDER BY d.id DESC LIMIT $3`,
    [orgId, options.since, simulationCap + 1],
  );
  const truncated = rows.length > simulationCap;
  const changed: Record<string, number> = {};
  const changes: ChangedDecision[] = [];
  for (const [index, row] of rows.slice(0, simulationCap).entries()) {
    // Cedar evaluates synchronously: let the api's other requests through every few hundred decisions.
    if (index % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
    const was = row.was as GateDecisionKind;
    const decided = evaluatePolicy(draft, {
      principal: { type: 'ApiKey', id: row.api_key_id, attrs: { label: row.label, label_verified: row.label_verified, access: row.access, abilities: row.abilities } },
      action: row.operation,
      resource: { type: options.resourceTypeOf(row.operation) ?? 'Record', id: String(row.resource?.id ?? 'new'), attrs: row.resource },
      context: row.context,
    });
    if (decided.decision === was) continue;
    const key = `${was}→${decided.decision}`;
    changed[key] = (changed[key] ?? 0) + 1;
    if (changes.length < options.limit) {
      changes.push({
        decision_id: row.id,
        at: (row.created_at as Date).toISOString(),
        operation: row.operation,
        api_key_id: row.api_key_id,
        api_key_label: row.label,
        was,
        trust_window_id: row.trust_window_id,
        would_be: decided.decision,
        reason: decided.reason,
        policy_ids: decided.policyIds,
      });
    }
  }
  return { evaluated: Math.min(rows.length, simulationCap), changed, changes, truncated };
}

export interface ShadowReport {
  source: string;
  started_at: string;
  started_by: string | null;
  /** Writes decided by both since the shadow started. */
  decided: number;
  /** Where the shadow would have decided otherwise, by `live→shadow`. */
  disagreed: Record<string, number>;
  disagreements: ChangedDecision[];
}

/** Starts a draft in shadow (replacing one that ran): from now on every write is decided by it too, without effect. */
export async function startShadow(db: Database, orgId: string, source: string, by: ActorRef): Promise<void> {
  compileDraft(source);
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO policy_shadows (org_id, source, created_by, started_at) VALUES ($1, $2, $3, clock_timestamp())
       ON CONFLICT (org_id) DO UPDATE SET source = EXCLUDED.source, created_by = EXCLUDED.created_by, started_at = EXCLUDED.started_at`,
      [orgId, source, by.type === 'user' ? by.id : null],
    );
    await recordAudit(tx, orgId, { type: 'policy.shadow_started', actor: by, data: {} });
  });
}

/** Stops the shadow, if one runs (true when one did); what it recorded stays on the decisions. */
export async function stopShadow(db: Database, orgId: string, by: ActorRef): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rowCount } = await tx.query('DELETE FROM policy_shadows WHERE org_id = $1', [orgId]);
    if (!rowCount) return false;
    await recordAudit(tx, orgId, { type: 'policy.shadow_stopped', actor: by, data: {} });
    return true;
  });
}

/** The shadow draft and where it disagreed with the live policy since it started; null when none runs. */
export async function shadowReport(db: Queryable, orgId: string, limit: number): Promise<ShadowReport | null> {
  const { rows: shadows } = await db.query('SELECT source, created_by, started_at FROM policy_shadows WHERE org_id = $1', [orgId]);
  const shadow = shadows[0];
  if (!shadow) return null;
  const startedAt = (shadow.started_at as Date).toISOString();
  // Counted in SQL; only the newest `limit` disagreements are read.
  const was = policySaid;
  const scoped = `FROM gate_decisions d WHERE d.org_id = $1 AND d.shadow->>'started_at' = $2`;
  const { rows: counts } = await db.query(
    `SELECT ${was} || '→' || (d.shadow->>'decision') AS change, ${was} = d.shadow->>'decision' AS agreed, count(*)::int AS n ${scoped} GROUP BY 1, 2`,
    [orgId, startedAt],
  );
  const { rows } = await db.query(
    `SELECT d.id, d.created_at, d.operation, d.api_key_id, k.label, ${was} AS was, d.trust_window_id, d.shadow
     FROM gate_decisions d JOIN api_keys k ON k.id = d.api_key_id
     WHERE d.org_id = $1 AND d.shadow->>'started_at' = $2 AND ${was} <> d.shadow->>'decision'
     ORDER BY d.id DESC LIMIT $3`,
    [orgId, startedAt, limit],
  );
  const disagreed = Object.fromEntries(counts.filter((row) => !row.agreed).map((row) => [row.change as string, row.n as number]));
  const disagreements: ChangedDecision[] = rows.map((row) => ({
    decision_id: row.id,
    at: (row.created_at as Date).toISOString(),
    operation: row.operation,
    api_key_id: row.api_key_id,
    api_key_label: row.label,
    was: row.was,
    trust_window_id: row.trust_window_id,
    would_be: row.shadow.decision,
    reason: row.shadow.reason,
    policy_ids: row.shadow.policy_ids,
  }));
  const decided = counts.reduce((sum, row) => sum + (row.n as number), 0);
  return { source: shadow.source, started_at: startedAt, started_by: shadow.created_by, decided, disagreed, disagreements };
}

export interface SuggestedRule {
  /** The Cedar text of the proposed allow rule, to add to a draft. */
  rule: string;
  operation: string;
  /** For updates: exactly the fields the approved writes changed; null for creates and deletes. */
  changed_fields: string[] | null;
  /** The key all of them came from, when they came from one. */
  api_key_id: string | null;
  /** The rules that held them for review. */
  held_by: string[];
  evidence: { approved: number; denied: number; first_at: string; last_at: string; review_ids: string[] };
}

/**
 * Allow rules proposed from the review history: for every kind of held write (its operation, the rule that held it,
 * the fields it changed, and its key when all came from one) that people approved every time, at least
 * `minApproved` times and never denied, in the last `days` days. A proposal is a permit marked @decision("allow"),
 * which lets such writes through where the review rule would hold them; a person adopts it by adding it to the
 * policy and saving.
 */
/** The fields a recorded update changed: its changed_fields, or for decisions recorded before it existed the keys of changes. */
const changedFieldsSql = `COALESCE(d.context -> 'changed_fields', (SELECT jsonb_agg(field ORDER BY field) FROM jsonb_object_keys(d.context -> 'changes') AS field))`;

export async function suggestRules(db: Queryable, orgId: string, options: { minApproved: number; days: number }): Promise<SuggestedRule[]> {
  const { rows } = await db.query(
    `SELECT d.operation, d.policy_ids, ${changedFieldsSql} AS changed_fields,
            count(*) FILTER (WHERE r.status = 'approved')::int AS approved,
            count(*) FILTER (WHERE r.status = 'denied')::int AS denied,
            array_agg(DISTINCT d.api_key_id) AS keys,
            min(r.created_at) AS first_at, max(r.created_at) AS last_at,
            (array_agg(r.id ORDER BY r.id DESC))[1:5] AS review_ids
     FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id
     WHERE r.org_id = $1 AND r.created_at >= now() - make_interval(days => $2) AND r.status IN ('approved', 'denied') AND r.edit_id IS NULL
     GROUP BY d.operation, d.policy_ids, ${changedFieldsSql}
     HAVING count(*) FILTER (WHERE r.status = 'denied') = 0 AND count(*) FILTER (WHERE r.status = 'approved') >= $3
     ORDER BY approved DESC, d.operation`,
    [orgId, options.days, options.minApproved],
  );
  return rows.map((row) => {
    const changedFields = (row.changed_fields as string[] | null) ?? null;
    const apiKeyId = row.keys.length === 1 ? (row.keys[0] as string) : null;
    const evidence = {
      approved: row.approved as number,
      denied: row.denied as number,
      first_at: (row.first_at as Date).toISOString(),
      last_at: (row.last_at as Date).toISOString(),
      review_ids: row.review_ids as string[],
    };
    return {
      rule: suggestedRule(row.operation, changedFields, apiKeyId, row.policy_ids, evidence),
      operation: row.operation,
      changed_fields: changedFields,
      api_key_id: apiKeyId,
      held_by: row.policy_ids,
      evidence,
    };
  });
}

function suggestedRule(operation: string, changedFields: string[] | null, apiKeyId: string | null, heldBy: string[], evidence: SuggestedRule['evidence']): string {
  const what = changedFields ? `${operation} changing only ${changedFields.join(', ')}` : operation;
  const id = `suggested-${operation.replace('.', '-')}${changedFields ? `-${changedFields.join('-')}` : ''}${apiKeyId ? `-${apiKeyId.slice(-6)}` : ''}-over-${heldBy.join('-')}`;
  const conditions = changedFields ? ` when { context has changed_fields && context.changed_fields == [${changedFields.map((field) => JSON.stringify(field)).join(', ')}] }` : '';
  const principal = apiKeyId ? `principal == ApiKey::${JSON.stringify(apiKeyId)}` : 'principal';
  return [
    // A @decision("allow") rule lets matching writes through whatever review rule would hold them, not only the one
    // that held these: said in the rule, and the dry run shows what it changes before it is saved.
    `// Lets these writes through whatever review rule would hold them, not only ${heldBy.join(', ')}: dry-run it before saving.`,
    `@id(${JSON.stringify(id)})`,
    `@decision("allow")`,
    `@reason(${JSON.stringify(`People approved all ${evidence.approved} ${what} held by ${heldBy.join(', ')} between ${evidence.first_at.slice(0, 10)} and ${evidence.last_at.slice(0, 10)}`)})`,
    `permit (${principal}, action == Action::${JSON.stringify(operation)}, resource)${conditions};`,
  ].join('\n');
}
