import { z } from 'zod';
import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { text } from '../kit/fields';

// Trust windows: approving a held write, a person lets the same key make writes like it without review, for a
// bounded time and a bounded number of uses. A window only turns the policy's Review into an Allow (never a Deny,
// never another key's or operation's write), and only for writes whose resource has the attribute values the
// person picked from the write they approved.

export const trustLimits = { maxMinutes: 1440, maxUses: 1000, maxMatch: 20 } as const;

/** The terms a person gives as they approve: how long, how many writes, which of the write's attributes to match. */
export const trustTermsInput = z
  .strictObject({
    minutes: z.number().int().min(1).max(trustLimits.maxMinutes).describe(`How long the window stays open, in minutes (1 to ${trustLimits.maxMinutes})`),
    max_uses: z.number().int().min(1).max(trustLimits.maxUses).describe(`How many writes it lets through at most (1 to ${trustLimits.maxUses})`),
    match: z
      .array(text({ max: 100 }))
      .max(trustLimits.maxMatch)
      .refine((names) => new Set(names).size === names.length, 'each attribute once')
      .describe(
        "Attributes of this write's record (as the policy saw it) whose values a later write must have too, e.g. [\"project_id\", \"status\"]; each must hold a plain value (text, number, true/false or null). Empty: any write of this operation by this key",
      ),
  })
  .describe(
    "Also open a trust window as you approve: the same API key may make the same operation, with the same values of the `match` attributes, without review, until `minutes` pass or `max_uses` writes have used it. It only lets through what the policy would hold for review, never what it denies. Opened only by the approval that ends the review (with a quorum, the last one)",
  );

export type TrustTerms = z.infer<typeof trustTermsInput>;

/** A trust window as people see it (the Policy page, the API). */
/** A person as a window names them. */
const personSchema = z.object({ user_id: z.string().describe('The person (usr_…)'), email: z.string().describe("The person's sign-in email") });

export const trustWindowSchema = z.object({
  id: z.string().describe('The window (trw_…)'),
  state: z.enum(['open', 'expired', 'used_up', 'closed']).describe('open, expired (its time ran out), used_up (its last use is taken) or closed (a person closed it)'),
  api_key: z.object({ id: z.string().describe('The key (key_…)'), label: z.string().describe("The key's label") }).describe('The key it trusts'),
  operation: z.string().describe('The operation it lets through, e.g. tasks.create'),
  match: z.record(z.string(), z.unknown()).describe('The attribute values a write must have to be let through'),
  uses: z.number().int().describe('Writes it has let through'),
  max_uses: z.number().int().describe('Writes it lets through at most'),
  expires_at: z.string().describe('When it closes by itself (RFC 3339)'),
  opened_by: personSchema.describe('Who opened it'),
  review_id: z.string().nullable().describe('The review whose approval opened it; null once retention pruned that review'),
  created_at: z.string().describe('When it was opened (RFC 3339)'),
  closed_at: z.string().nullable().describe('When a person closed it, or null'),
  closed_by: personSchema.nullable().describe('Who closed it, or null'),
});

export type TrustWindow = z.infer<typeof trustWindowSchema>;

/** A value a window can match: one the jsonb containment `match <@ resource` compares as equality. */
const isPlain = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/**
 * Opens a window as a person's approval ends a review, in the verdict's transaction, with its audit record: the
 * review's key and operation, and the picked attributes' values from the record the approval applies (the
 * reviewer's edit, when there is one).
 */
export async function openTrustWindow(
  tx: Queryable,
  opening: { orgId: string; reviewId: string; workflowId: string; userId: string; terms: TrustTerms },
): Promise<string> {
  const { orgId, reviewId, workflowId, userId, terms } = opening;
  const { rows } = await tx.query(
    `SELECT d.api_key_id, d.operation, COALESCE(e.resource, d.resource) AS resource, d.policy_ids, r.approvals_required
     FROM reviews r JOIN gate_decisions d ON d.id = r.decision_id LEFT JOIN review_edits e ON e.id = r.edit_id
     WHERE r.org_id = $1 AND r.id = $2`,
    [orgId, reviewId],
  );
  const held = rows[0] as { api_key_id: string; operation: string; resource: Record<string, unknown>; policy_ids: string[]; approvals_required: number };
  if (!trustableOperations(held.operation)) {
    throw new AppError('validation_failed', `a trust window is not opened for ${held.operation}: each of those is decided by a person or by the policy alone`, {
      fields: [{ path: 'trust', message: `no trust window for ${held.operation}` }],
    });
  }
  const match: Record<string, unknown> = {};
  const unusable = terms.match.filter((name) => !Object.hasOwn(held.resource, name) || !isPlain(held.resource[name]));
  if (unusable.length > 0) {
    throw new AppError('validation_failed', `a trust window matches attributes of the write that hold a plain value; not: ${unusable.join(', ')}`, {
      fields: unusable.map((name) => ({ path: `trust.match`, message: `${name} is not a plain attribute of this write's record` })),
    });
  }
  for (const name of terms.match) match[name] = held.resource[name];
  const id = newId('trw');
  const inserted = await tx.query(
    `INSERT INTO trust_windows (id, org_id, api_key_id, operation, match, max_uses, expires_at, opened_by, review_id, policy_ids, approvals)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(mins => $7), $8, $9, $10, $11) RETURNING expires_at`,
    [id, orgId, held.api_key_id, held.operation, JSON.stringify(match), terms.max_uses, terms.minutes, userId, reviewId, held.policy_ids, held.approvals_required],
  );
  await recordAudit(tx, orgId, {
    type: 'trust_window.opened',
    actor: { type: 'user', id: userId },
    workflowId,
    reviewId,
    resourceType: 'trust_window',
    resourceId: id,
    data: {
      api_key_id: held.api_key_id,
      operation: held.operation,
      match,
      max_uses: terms.max_uses,
      minutes: terms.minutes,
      expires_at: (inserted.rows[0].expires_at as Date).toISOString(),
    },
  });
  return id;
}

/** An undo or a changeset is never waved through by a window: an undo takes back whatever a write did. */
const trustableOperations = (operation: string) => operation !== 'writes.undo' && operation !== 'changesets.submit';

/** The window a held-for-review write used, and who opened it (for the decision's reason). */
export interface UsedTrustWindow {
  id: string;
  openedBy: string;
}

/**
 * Takes one use of an open window matching the write (same organization, key and operation; every matched
 * attribute equal in the proposed record), in the decision's transaction: the guarded UPDATE takes it only while
 * uses < max_uses and the window has not expired, so writes racing for its last use cannot both get it. Null: no
 * window lets it through. Called only for a write the policy would hold, in the transaction that applies it: a
 * write the data refuses rolls its use back with it. The last use closes the window, recorded as
 * trust_window.closed (`used_up`) by the write's key.
 */
export async function useTrustWindow(
  tx: Queryable,
  write: { orgId: string; workflowId: string; apiKeyId: string; operation: string; resource: Record<string, unknown>; policyIds: string[]; approvals: number },
): Promise<UsedTrustWindow | null> {
  const { rows } = await tx.query(
    `UPDATE trust_windows w SET uses = uses + 1
     FROM users u
     WHERE w.id = (
       SELECT id FROM trust_windows
       WHERE org_id = $1 AND api_key_id = $2 AND operation = $3 AND closed_at IS NULL
         AND uses < max_uses AND expires_at > now() AND match <@ $4::jsonb AND policy_ids @> $5::text[] AND approvals >= $6
       ORDER BY expires_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
       AND w.uses < w.max_uses AND w.expires_at > now() AND u.id = w.opened_by
     RETURNING w.id, u.email, w.uses, w.max_uses`,
    [write.orgId, write.apiKeyId, write.operation, JSON.stringify(write.resource), write.policyIds, write.approvals],
  );
  const used = rows[0];
  if (!used) return null;
  if (used.uses === used.max_uses) {
    await recordAudit(tx, write.orgId, {
      type: 'trust_window.closed',
      actor: { type: 'api_key', id: write.apiKeyId },
      workflowId: write.workflowId,
      resourceType: 'trust_window',
      resourceId: used.id,
      data: { api_key_id: write.apiKeyId, operation: write.operation, uses: used.uses, max_uses: used.max_uses, reason: 'used_up' },
    });
  }
  return { id: used.id, openedBy: used.email };
}

/** SQL for a window's state (a row of trust_windows named `w`): open, expired, used_up or closed. */
export const trustWindowStateSql = (w: string) =>
  `CASE WHEN ${w}.closed_at IS NOT NULL THEN 'closed' WHEN ${w}.uses >= ${w}.max_uses THEN 'used_up' WHEN ${w}.expires_at <= now() THEN 'expired' ELSE 'open' END`;

const windowColumns = `
  w.id, w.operation, w.match, w.uses, w.max_uses, w.expires_at, w.review_id, w.created_at, w.closed_at,
  w.api_key_id, k.label AS api_key_label, w.opened_by, o.email AS opened_by_email, w.closed_by, c.email AS closed_by_email,
  ${trustWindowStateSql('w')} AS state
  FROM trust_windows w JOIN api_keys k ON k.id = w.api_key_id JOIN users o ON o.id = w.opened_by LEFT JOIN users c ON c.id = w.closed_by`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a row as pg answers it, read field by field below
function wireOf(row: Record<string, any>): TrustWindow {
  return {
    id: row.id,
    state: row.state,
    api_key: { id: row.api_key_id, label: row.api_key_label },
    operation: row.operation,
    match: row.match,
    uses: row.uses,
    max_uses: row.max_uses,
    expires_at: (row.expires_at as Date).toISOString(),
    opened_by: { user_id: row.opened_by, email: row.opened_by_email },
    review_id: row.review_id,
    created_at: (row.created_at as Date).toISOString(),
    closed_at: row.closed_at ? (row.closed_at as Date).toISOString() : null,
    closed_by: row.closed_by ? { user_id: row.closed_by, email: row.closed_by_email } : null,
  };
}

/** The organization's windows, newest first: the open ones, or (`all`) the 100 newest of any state. */
export async function listTrustWindows(db: Queryable, orgId: string, which: 'open' | 'all'): Promise<TrustWindow[]> {
  const open = which === 'open' ? 'AND w.closed_at IS NULL AND w.uses < w.max_uses AND w.expires_at > now()' : '';
  const { rows } = await db.query(`SELECT ${windowColumns} WHERE w.org_id = $1 ${open} ORDER BY w.created_at DESC, w.id DESC LIMIT 100`, [orgId]);
  return rows.map(wireOf);
}

/**
 * Closes a window at once, with its audit record: owners and admins close any, a reviewer the windows they opened.
 * Closing one that is closed already is refused (409); one that expired or is used up is closed for the record.
 */
export async function closeTrustWindow(db: Database, orgId: string, windowId: string, person: { userId: string; role: string }): Promise<TrustWindow> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query('SELECT opened_by, closed_at, api_key_id, operation, uses, max_uses FROM trust_windows WHERE org_id = $1 AND id = $2 FOR UPDATE', [
      orgId,
      windowId,
    ]);
    const window = rows[0];
    if (!window) throw new AppError('not_found', `trust window ${windowId} was not found`);
    if (person.role !== 'owner' && person.role !== 'admin' && window.opened_by !== person.userId) {
      throw new AppError('insufficient_role', 'only owners, admins and the person who opened a trust window close it');
    }
    if (window.closed_at) throw new AppError('conflict', `trust window ${windowId} is closed already`);
    await tx.query('UPDATE trust_windows SET closed_at = now(), closed_by = $3 WHERE org_id = $1 AND id = $2', [orgId, windowId, person.userId]);
    const actor: ActorRef = { type: 'user', id: person.userId };
    await recordAudit(tx, orgId, {
      type: 'trust_window.closed',
      actor,
      resourceType: 'trust_window',
      resourceId: windowId,
      data: { api_key_id: window.api_key_id, operation: window.operation, uses: window.uses, max_uses: window.max_uses, reason: 'closed' },
    });
    return wireOf((await tx.query(`SELECT ${windowColumns} WHERE w.org_id = $1 AND w.id = $2`, [orgId, windowId])).rows[0]);
  });
}
