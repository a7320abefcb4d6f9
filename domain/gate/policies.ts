import { readFileSync } from 'node:fs';
import type { Database, Queryable } from '../../db/database';
import { compilePolicySet, PolicyParseError, type CompiledPolicySet } from '../../policy/engine';
import { cliActor, recordAudit } from './audit';
import { AppError } from '../kit/errors';

export const defaultPolicySource = readFileSync(new URL('../../policy/default-policy.cedar', import.meta.url), 'utf8');

export interface PolicySetVersion {
  version: number;
  source: string;
  createdBy: string;
  createdAt: string;
}

/** Stores a new version of an organization's policies; a set that fails to parse is refused whole. */
export async function savePolicySet(tx: Queryable, orgId: string, source: string, createdBy: string): Promise<PolicySetVersion> {
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
  await recordAudit(tx, orgId, { type: 'policy.updated', actor: cliActor, data: { version: rows[0].version } });
  return versionFromRow(rows[0]);
}

export async function setPolicySet(db: Database, orgId: string, source: string, createdBy: string): Promise<PolicySetVersion> {
  return db.transaction((tx) => savePolicySet(tx, orgId, source, createdBy));
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

/** The organization's current policies, parsed once per version. */
export async function loadCompiledPolicySet(db: Queryable, orgId: string): Promise<{ version: number; policySet: CompiledPolicySet }> {
  const current = await currentPolicySet(db, orgId);
  const key = `${orgId}@${current.version}`;
  let policySet = compiled.get(key);
  if (!policySet) {
    policySet = compilePolicySet(current.source);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, policySet);
  }
  return { version: current.version, policySet };
}

/** The Cedar text of the named policies in the organization's current set (those it still has). */
export async function policyTexts(db: Queryable, orgId: string, policyIds: string[]): Promise<string[]> {
  if (policyIds.length === 0) return [];
  const { policySet } = await loadCompiledPolicySet(db, orgId);
  return policyIds.flatMap((id) => policySet.policies[id] ?? []);
}

function versionFromRow(row: Record<string, unknown>): PolicySetVersion {
  return {
    version: row.version as number,
    source: row.source as string,
    createdBy: row.created_by as string,
    createdAt: (row.created_at as Date).toISOString(),
  };
}
