import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/database';
import { canonicalJson } from '../kit/canonical-json';
import { AppError } from '../kit/errors';
import type { GateAnswer } from './contract';

export type IdempotencyClaim =
  | { state: 'new'; workflowId: string }
  | { state: 'in_flight'; workflowId: string }
  | { state: 'replay'; workflowId: string; answer: GateAnswer };

export interface IdempotencyScope {
  orgId: string;
  apiKeyId: string;
  key: string;
}

/** The same operation with the same input hashes the same, whatever the order of the JSON's keys. */
export function requestFingerprint(operation: string, input: unknown): string {
  return createHash('sha256').update(operation).update('\0').update(canonicalJson(input)).digest('hex');
}

/**
 * Claims an Idempotency-Key for one request. A key already used with another request is refused; one
 * whose first request finished replays that answer; one still running joins the same workflow.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  scope: IdempotencyScope,
  fingerprint: string,
  workflowId: string,
): Promise<IdempotencyClaim> {
  // Twice at most: a claim released (its request met an outage) between the insert and the read is claimed anew.
  return (await claimOnce(db, scope, fingerprint, workflowId)) ?? (await claimOnce(db, scope, fingerprint, workflowId))!;
}

async function claimOnce(db: Queryable, scope: IdempotencyScope, fingerprint: string, workflowId: string): Promise<IdempotencyClaim | undefined> {
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (org_id, api_key_id, key, request_hash, workflow_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING`,
    [scope.orgId, scope.apiKeyId, scope.key, fingerprint, workflowId],
  );
  if (inserted.rowCount) return { state: 'new', workflowId };
  const { rows } = await db.query(
    `SELECT request_hash, workflow_id, answer FROM idempotency_keys
     WHERE org_id = $1 AND api_key_id = $2 AND key = $3`,
    [scope.orgId, scope.apiKeyId, scope.key],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.request_hash !== fingerprint) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was used before with a different request; use a new key for a new request',
    );
  }
  if (row.answer !== null) return { state: 'replay', workflowId: row.workflow_id, answer: row.answer };
  return { state: 'in_flight', workflowId: row.workflow_id };
}

export async function storeIdempotentAnswer(db: Queryable, scope: IdempotencyScope, answer: GateAnswer): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET answer = $4 WHERE org_id = $1 AND api_key_id = $2 AND key = $3 AND answer IS NULL`,
    [scope.orgId, scope.apiKeyId, scope.key, JSON.stringify(answer)],
  );
}

/** A request that failed for want of a server is forgotten, so that retrying it with the same key runs it. */
export async function releaseIdempotencyKey(db: Queryable, scope: IdempotencyScope): Promise<void> {
  await db.query(
    'DELETE FROM idempotency_keys WHERE org_id = $1 AND api_key_id = $2 AND key = $3 AND answer IS NULL',
    [scope.orgId, scope.apiKeyId, scope.key],
  );
}
