import { readFileSync } from 'node:fs';
import type { Database, Queryable } from '../../db/database';
import { compilePolicySet, PolicyParseError, type CompiledPolicySet } from '../../policy/engine';
import { cliActor, recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';

export const defaultPolicySource = readFileSync(new URL('../../policy/default-policy.cedar', import.meta.url), 'utf8');

export interface PolicySetVersion {
  version: number;
  source: string;
  createdBy: string;
  createdAt: string;
}

/** Stores a new version of an organization's policies; a set that fails to parse is refused whole. */
export async function savePolicySet(
  tx: Queryable,
  orgId: string,
  source: string,
  createdBy: string,
  by: { actor: ActorRef; comment?: string } = { actor: cliActor },
): Promise<PolicySetVersion> {
  try {
    compilePolicySet(source);
  } catch (error) {
    if (error instanceof PolicyParseError) {
      throw new AppError('validation_failed', `The policy set does not parse: ${error.message}`);
    }
    throw error;
  }
  const { rows } = await tx.query(
    `INSERT INTO policy_sets (org_id, version, source, created_by)
     SELECT $1, COALESCE(max(version), 0) + 1, $2, $3 FROM policy_sets WHERE org_id = $1
     RETURNING version, source, created_by, created_at`,
    [orgId, source, createdBy],
  );
  await recordAudit(tx, orgId, { type: 'policy.updated', actor: by.actor, data: { version: rows[0].version, ...(by.comment ? { comment: by.comment } : {}) } });
  return versionFromRow(rows[0]);
}

export async function setPolicySet(
  db: Database,
  orgId: string,
  source: string,
  createdBy: string,
  by?: { actor: ActorRef; comment?: string },
): Promise<PolicySetVersion> {
  return db.transaction((tx) => savePolicySet(tx, orgId, source, createdBy, by));
}

/** The organization's policy versions, newest first. */
export async function listPolicyVersions(db: Queryable, orgId: string, limit: number): Promise<PolicySetVersion[]> {
  const { rows } = await db.query(
    `SELECT version, source, created_by, created_at FROM policy_sets WHERE org_id = $1 ORDER BY version DESC LIMIT $2`,
    [orgId, limit],
  );
  return rows.map(versionFromRow);
}

export async function currentPolicySet(db: Queryable, orgId: string): Promise<PolicySetVersion> {
  const { rows } = await db.query(
    `SELECT version, source, created_by, created_at FROM policy_sets WHERE org_id = $1 ORDER BY version DESC LIMIT 1`,
    [orgId],
  );
  if (!rows[0]) throw new AppError('not_found', 'the organization has no policy set');
  return versionFromRow(rows[0]);
}

const compiled = new Map<string, CompiledPolicySet>();

/** Policy text parsed once under a key that names it for good (a version, or a shadow by its start). */
function compiledOnce(key: string, source: string): CompiledPolicySet {
  let policySet = compiled.get(key);
  if (!policySet) {
    policySet = compilePolicySet(source);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, policySet);
  }
  return policySet;
}

/** A version of an organization's policies, parsed once (a version never changes). */
const compiledVersion = (orgId: string, version: number, source: string) => compiledOnce(`${orgId}@${version}`, source);

/** A draft running in shadow beside the live policies: decides every write too, without effect. */
export interface ShadowPolicy {
  policySet: CompiledPolicySet;
  startedAt: string;
}

/**
 * The organization's current policies, parsed once per version, and the shadow draft if one runs: one query, on
 * every gated write's path.
 */
export async function loadCompiledPolicySet(db: Queryable, orgId: string): Promise<{ version: number; policySet: CompiledPolicySet; shadow?: ShadowPolicy }> {
  const { rows } = await db.query(
    `SELECT p.version, p.source, s.source AS shadow_source, s.started_at AS shadow_started_at
     FROM policy_sets p LEFT JOIN policy_shadows s ON s.org_id = p.org_id
     WHERE p.org_id = $1 ORDER BY p.version DESC LIMIT 1`,
    [orgId],
  );
  const row = rows[0];
  if (!row) throw new AppError('not_found', 'the organization has no policy set');
  const loaded = { version: row.version as number, policySet: compiledVersion(orgId, row.version, row.source) };
  if (row.shadow_source === null) return loaded;
  const startedAt = (row.shadow_started_at as Date).toISOString();
  return { ...loaded, shadow: { policySet: compiledShadow(orgId, startedAt, row.shadow_source), startedAt } };
}

/** A shadow draft, parsed once: a shadow is never changed, only replaced (and then it starts anew). */
const compiledShadow = (orgId: string, startedAt: string, source: string) => compiledOnce(`${orgId}@shadow@${startedAt}`, source);

/** The policies that made a recorded decision (the version in force then), parsed once per version. */
export async function policySetOfDecision(db: Queryable, orgId: string, decisionId: string): Promise<CompiledPolicySet | undefined> {
  const { rows } = await db.query(
    `SELECT p.version, p.source FROM gate_decisions d JOIN policy_sets p ON p.org_id = d.org_id AND p.version = d.policy_version
     WHERE d.org_id = $1 AND d.id = $2`,
    [orgId, decisionId],
  );
  return rows[0] && compiledVersion(orgId, rows[0].version, rows[0].source);
}

function versionFromRow(row: Record<string, unknown>): PolicySetVersion {
  return {
    version: row.version as number,
    source: row.source as string,
    createdBy: row.created_by as string,
    createdAt: (row.created_at as Date).toISOString(),
  };
}
