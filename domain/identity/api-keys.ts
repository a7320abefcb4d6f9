import type { Database, Queryable } from '../../db/database';
import { defaultAbilities, isAbility, isWriteAbility, type Ability, type Access } from './abilities';
import { cliActor, recordAudit, type ActorRef } from '../audit/events';
import { AppError, invalidFields, type FieldProblem } from '../kit/errors';
import { newId } from '../kit/ids';
import { endGrant } from './oauth-records';
import { heldBy } from './set-up';
import { issueToken } from './tokens';

export interface ApiKey {
  id: string;
  orgId: string;
  label: string;
  access: Access;
  abilities: Ability[];
  createdAt: string;
  /** The person who made it; null when the CLI did. */
  createdBy: { id: string; email: string } | null;
  /** When it stops working by itself; null: until revoked. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** The key's own daily request budget (REST and MCP together); null: the organization's budget alone. */
  dailyRequestBudget: number | null;
  /** The key's daily caps of writes submitted, by gated-write operation (`{"customers.update": 20}`). */
  writeCaps: Record<string, number>;
  /** The client a person connected over OAuth (its label is the client's name); null for a key made as a key. */
  connection: { clientId: string; clientUri: string | null } | null;
}

/** What an organization may give a key of its own: a daily request budget and daily caps of writes, by operation. */
export interface KeyBudget {
  dailyRequestBudget: number | null;
  writeCaps: Record<string, number>;
}

/** The most a key's budget and each of its caps may be (a day's worth, far past any plan's). */
export const keyBudgetBounds = { dailyRequests: 10_000_000, writesPerOperation: 1_000_000 } as const;

/**
 * The problems of a key's budget, each named by its field. `writeOperations` are the names of the gated writes
 * (the catalog's, `customers.update`): a cap names one of them.
 */
function budgetProblems(budget: Partial<KeyBudget>, writeOperations: readonly string[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const whole = (value: unknown, max: number) => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max;
  const { dailyRequestBudget, writeCaps } = budget;
  if (dailyRequestBudget !== undefined && dailyRequestBudget !== null && !whole(dailyRequestBudget, keyBudgetBounds.dailyRequests)) {
    problems.push({ field: 'daily_request_budget', message: `must be a whole number from 1 to ${keyBudgetBounds.dailyRequests}, or null for none` });
  }
  if (writeCaps !== undefined) {
    if (typeof writeCaps !== 'object' || writeCaps === null || Array.isArray(writeCaps)) {
      problems.push({ field: 'write_caps', message: 'must be an object of operation names and daily caps' });
      return problems;
    }
    for (const [operation, cap] of Object.entries(writeCaps)) {
      if (!writeOperations.includes(operation)) {
        problems.push({ field: `write_caps.${operation}`, message: `is not a gated write; caps name one of ${writeOperations.join(', ')}` });
      } else if (!whole(cap, keyBudgetBounds.writesPerOperation)) {
        problems.push({ field: `write_caps.${operation}`, message: `must be a whole number from 1 to ${keyBudgetBounds.writesPerOperation}` });
      }
    }
  }
  return problems;
}

const keyColumns = `k.*, u.email AS created_by_email`;
const keyFrom = `api_keys k LEFT JOIN users u ON u.id = k.created_by`;

export async function createApiKey(
  db: Database,
  input: {
    orgId: string;
    label: string;
    access: Access;
    abilities?: string[];
    expiresAt?: string | null;
    dailyRequestBudget?: number | null;
    writeCaps?: Record<string, number>;
    /** The gated writes a cap may name; required with `writeCaps`. */
    writeOperations?: readonly string[];
  },
  by: ActorRef = cliActor,
): Promise<{ key: ApiKey; token: string }> {
  if (!input.label.trim()) throw new AppError('validation_failed', 'label must not be empty');
  if (input.expiresAt && !(Date.parse(input.expiresAt) > Date.now())) {
    throw new AppError('validation_failed', 'expires_at must be in the future', { fields: [{ field: 'expires_at', message: 'must be in the future' }] });
  }
  const abilities = input.abilities ?? defaultAbilities(input.access);
  const unknown = abilities.filter((ability) => !isAbility(ability));
  if (unknown.length) throw new AppError('validation_failed', `unknown abilities: ${unknown.join(', ')}`);
  if (input.access === 'read' && abilities.some((ability) => isWriteAbility(ability as Ability))) {
    throw new AppError('validation_failed', 'a read-only key cannot carry write abilities');
  }
  const budget = { dailyRequestBudget: input.dailyRequestBudget ?? null, writeCaps: input.writeCaps ?? {} };
  const problems = budgetProblems(budget, input.writeOperations ?? []);
  if (problems.length) throw invalidFields(problems);
  const id = newId('key');
  const { token, digest } = issueToken('api_key', id);
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO api_keys (id, org_id, label, access, abilities, token_digest, created_by, expires_at, daily_request_budget, write_caps, created_while_held_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ${heldBy('$7')})`,
      [
        id,
        input.orgId,
        input.label.trim(),
        input.access,
        [...new Set(abilities)],
        digest,
        by.type === 'user' ? by.id : null,
        input.expiresAt ?? null,
        budget.dailyRequestBudget,
        JSON.stringify(budget.writeCaps),
      ],
    );
    const key = await findApiKey(tx, input.orgId, id);
    await recordAudit(tx, input.orgId, {
      type: 'api_key.created',
      actor: by,
      resourceId: id,
      data: {
        label: key.label,
        access: key.access,
        abilities: key.abilities,
        expires_at: key.expiresAt,
        ...(key.dailyRequestBudget !== null ? { daily_request_budget: key.dailyRequestBudget } : {}),
        ...(Object.keys(key.writeCaps).length ? { write_caps: key.writeCaps } : {}),
      },
    });
    return { key, token };
  });
}

export async function listApiKeys(db: Queryable, orgId: string): Promise<ApiKey[]> {
  const { rows } = await db.query(`SELECT ${keyColumns} FROM ${keyFrom} WHERE k.org_id = $1 ORDER BY k.created_at, k.id`, [orgId]);
  return rows.map(apiKeyFromRow);
}

export async function findApiKey(db: Queryable, orgId: string, keyId: string): Promise<ApiKey> {
  const { rows } = await db.query(`SELECT ${keyColumns} FROM ${keyFrom} WHERE k.org_id = $1 AND k.id = $2`, [orgId, keyId]);
  if (!rows[0]) throw new AppError('not_found', `The organization has no key ${keyId}`);
  return apiKeyFromRow(rows[0]);
}

/** A held write withdrawn as its key was revoked: the workflow that holds it is to be told once the revocation commits. */
export interface WithdrawnHeldWrite {
  id: string;
  workflowId: string;
}

/**
 * What revoking a key does to the writes it left held for review: withdraws them in the revocation's own transaction
 * (domain/gate/reviews/withdraw.ts withdrawReviewsOfKey). A port, since identity does not reach into the gate: every
 * caller hands it in, so that no path revokes a key and leaves its writes approvable.
 */
export type HeldWritesWithdrawal = (
  tx: Queryable,
  key: { orgId: string; id: string },
  by: ActorRef,
  reason: 'key_revoked' | 'connection_ended',
) => Promise<WithdrawnHeldWrite[]>;

/** A key revoked, and the held writes of it withdrawn in the same transaction (their workflows to be told). */
export interface RevokedKey {
  key: ApiKey;
  withdrawn: WithdrawnHeldWrite[];
}

/**
 * Revocation counts from the next request, and withdraws the key's held writes still waiting for a person, in the
 * same transaction: none of them can be approved any more. Revoking a revoked key records nothing more, and
 * withdraws what still waits (held writes of a key revoked before revocation withdrew them). A connected client's
 * key is disconnected: its grant and every token of it end with it (`oauth.disconnected`).
 */
export async function revokeApiKey(
  db: Database,
  withdrawHeldWrites: HeldWritesWithdrawal,
  orgId: string,
  keyId: string,
  by: ActorRef = cliActor,
): Promise<RevokedKey> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(
      `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND org_id = $2 AND revoked_at IS NULL RETURNING label, oauth_grant_id, oauth_client_id`,
      [keyId, orgId],
    );
    const key = await findApiKey(tx, orgId, keyId);
    const revoked = rows[0];
    if (revoked?.oauth_grant_id) {
      const withdrawn = await endConnection(tx, withdrawHeldWrites, { id: keyId, orgId, grantId: revoked.oauth_grant_id, clientId: revoked.oauth_client_id, label: key.label }, by, 'disconnected');
      return { key, withdrawn };
    }
    if (revoked) await recordAudit(tx, orgId, { type: 'api_key.revoked', actor: by, resourceId: keyId, data: { label: key.label } });
    const withdrawn = await withdrawHeldWrites(tx, { orgId, id: keyId }, by, key.connection ? 'connection_ended' : 'key_revoked');
    return { key, withdrawn };
  });
}

/**
 * Ends a connected client's key, revoked already or now: its grant and every code and token of it end at once,
 * recorded as `oauth.disconnected` by `by` (a person, or the client itself) with why, and its held writes still
 * waiting are withdrawn (answered, for their workflows to be told once this commits).
 */
export async function endConnection(
  tx: Queryable,
  withdrawHeldWrites: HeldWritesWithdrawal,
  key: { id: string; orgId: string; grantId: string; clientId: string; label: string },
  by: ActorRef,
  reason: 'disconnected' | 'revoked_by_client' | 'token_replayed' | 'consent_not_completed',
): Promise<WithdrawnHeldWrite[]> {
  await tx.query(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND org_id = $2`, [key.id, key.orgId]);
  await endGrant(tx, key.grantId);
  await recordAudit(tx, key.orgId, { type: 'oauth.disconnected', actor: by, resourceId: key.id, data: { client_id: key.clientId, client_name: key.label, reason } });
  return withdrawHeldWrites(tx, { orgId: key.orgId, id: key.id }, by, 'connection_ended');
}

/**
 * Sets a key's own daily request budget (null: none) and replaces its write caps (`{}`: none), each only when
 * given; counts from the key's next request. A change is recorded in the audit trail with what it was; setting
 * what is already set records nothing.
 */
export async function setApiKeyBudget(
  db: Database,
  orgId: string,
  keyId: string,
  change: Partial<KeyBudget>,
  writeOperations: readonly string[],
  by: ActorRef = cliActor,
): Promise<ApiKey> {
  const problems = budgetProblems(change, writeOperations);
  if (problems.length) throw invalidFields(problems);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(`SELECT daily_request_budget, write_caps FROM api_keys WHERE id = $1 AND org_id = $2 FOR UPDATE`, [keyId, orgId]);
    if (!rows[0]) throw new AppError('not_found', `The organization has no key ${keyId}`);
    const before: KeyBudget = { dailyRequestBudget: rows[0].daily_request_budget, writeCaps: sortedCaps(rows[0].write_caps) };
    const after: KeyBudget = {
      dailyRequestBudget: change.dailyRequestBudget === undefined ? before.dailyRequestBudget : change.dailyRequestBudget,
      writeCaps: change.writeCaps === undefined ? before.writeCaps : sortedCaps(change.writeCaps),
    };
    const changed = after.dailyRequestBudget !== before.dailyRequestBudget || JSON.stringify(after.writeCaps) !== JSON.stringify(before.writeCaps);
    if (changed) {
      await tx.query(`UPDATE api_keys SET daily_request_budget = $3, write_caps = $4 WHERE id = $1 AND org_id = $2`, [
        keyId,
        orgId,
        after.dailyRequestBudget,
        JSON.stringify(after.writeCaps),
      ]);
    }
    const key = await findApiKey(tx, orgId, keyId);
    if (changed) {
      await recordAudit(tx, orgId, {
        type: 'api_key.budget_changed',
        actor: by,
        resourceId: keyId,
        data: {
          label: key.label,
          daily_request_budget: key.dailyRequestBudget,
          write_caps: key.writeCaps,
          before: { daily_request_budget: before.dailyRequestBudget, write_caps: before.writeCaps },
        },
      });
    }
    return key;
  });
}

/** Caps in the order of their operations' names, so that the same caps always read the same. */
function sortedCaps(caps: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(caps).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function apiKeyFromRow(row: Record<string, unknown>): ApiKey {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    label: row.label as string,
    access: row.access as Access,
    abilities: row.abilities as Ability[],
    createdAt: (row.created_at as Date).toISOString(),
    createdBy: row.created_by ? { id: row.created_by as string, email: row.created_by_email as string } : null,
    expiresAt: row.expires_at ? (row.expires_at as Date).toISOString() : null,
    lastUsedAt: row.last_used_at ? (row.last_used_at as Date).toISOString() : null,
    revokedAt: row.revoked_at ? (row.revoked_at as Date).toISOString() : null,
    dailyRequestBudget: (row.daily_request_budget as number | null) ?? null,
    writeCaps: sortedCaps((row.write_caps as Record<string, number> | null) ?? {}),
    connection: row.oauth_client_id ? { clientId: row.oauth_client_id as string, clientUri: (row.oauth_client_uri as string | null) ?? null } : null,
  };
}
