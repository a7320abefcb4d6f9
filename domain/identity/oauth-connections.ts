import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { AppError, invalidFields, type FieldProblem } from '../kit/errors';
import { newId } from '../kit/ids';
import { isAbility, isWriteAbility, type Ability, type Access } from './abilities';
import { rolesThat, type Role } from './actors';
import { endConnection, findApiKey, type ApiKey, type HeldWritesWithdrawal, type WithdrawnHeldWrite } from './api-keys';
import { endGrant } from './oauth-records';
import { heldBy } from './set-up';
import { issueToken } from './tokens';

// A client a person connected over OAuth (an MCP client, a chat app's connector) is one of the organization's API
// keys: the policy's principal, counted by the plan's limits and its own budget, the submitter of its held writes.
// It holds no key token of its own: it calls with the access tokens the authorization server issues for its grant,
// and is disconnected as a key is revoked.

/** How long a person may let a connection last, in days; the consent page offers these. */
export const connectionDays = { options: [7, 30, 90, 365], default: 90 } as const;

/** What the consent page asks of the person, checked here whoever sends it. */
export interface ConsentChoice {
  access: Access;
  abilities: string[];
  lastsDays: number;
}

/** The client as the authorization server knows it. */
export interface ConnectingClient {
  id: string;
  name: string;
  uri: string | null;
  /** How it identified itself: a Client ID Metadata Document at its id, or dynamic registration. */
  identifiedBy: 'metadata_document' | 'registration';
}

/** What the person may grant: the abilities asked for, read-only ones only on a read connection, at least one. */
export function consentProblems(choice: ConsentChoice, requested: readonly string[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (choice.access !== 'read' && choice.access !== 'read_write') problems.push({ field: 'access', message: 'must be read or read_write' });
  if (!Array.isArray(choice.abilities) || choice.abilities.length === 0) {
    problems.push({ field: 'abilities', message: 'choose at least one ability' });
  } else {
    for (const ability of choice.abilities) {
      if (!isAbility(ability) || !requested.includes(ability)) problems.push({ field: 'abilities', message: `${ability} is not among the abilities the client asked for` });
      else if (choice.access === 'read' && isWriteAbility(ability)) problems.push({ field: 'abilities', message: `${ability} needs read and write access` });
    }
  }
  if (!(connectionDays.options as readonly number[]).includes(choice.lastsDays)) {
    problems.push({ field: 'lasts_days', message: `must be one of ${connectionDays.options.join(', ')}` });
  }
  return problems;
}

/** Whether a person of this role may connect a client (as they may make keys). */
export function mayConnect(role: Role): boolean {
  return (rolesThat.manageKeys as readonly Role[]).includes(role);
}

/** The people who may connect clients to the organization: told to someone who may not. */
export async function connectors(db: Queryable, orgId: string): Promise<{ name: string | null; email: string; role: Role }[]> {
  const { rows } = await db.query(
    `SELECT name, email, role FROM users WHERE org_id = $1 AND role = ANY($2) AND deactivated_at IS NULL ORDER BY role = 'owner' DESC, email`,
    [orgId, rolesThat.manageKeys],
  );
  return rows.map((row) => ({ name: row.name, email: row.email, role: row.role }));
}

/**
 * A connection's label: the app's own name, numbered when another live key of the organization has that label
 * already, in any case ("Claude (2)", "Claude (3)"…), so that an app never passes for a key people know by naming
 * itself after it. `keyId`: the connection's own key, when it is renewed (its label is its own).
 */
async function connectionLabel(db: Queryable, orgId: string, name: string, keyId: string | undefined): Promise<string> {
  // Compared as read: case aside, and in compatibility form (full-width letters, ligatures: NFKC), in SQL and here.
  const { rows } = await db.query<{ label: string }>(
    `SELECT label FROM api_keys
     WHERE org_id = $1 AND id IS DISTINCT FROM $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
       AND starts_with(lower(normalize(label, NFKC)), lower(normalize($3, NFKC)))`,
    [orgId, keyId ?? null, name],
  );
  const asRead = (label: string) => label.normalize('NFKC').toLowerCase();
  const taken = new Set(rows.map((row) => asRead(row.label)));
  let label = name;
  for (let n = 2; taken.has(asRead(label)); n++) label = `${name} (${n})`;
  return label;
}

/** The key a person's earlier connection of this client holds, while it is live. */
const liveConnectionOf = `SELECT id, oauth_grant_id, oauth_consent_uid FROM api_keys
  WHERE org_id = $1 AND oauth_client_id = $2 AND created_by = $3 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
  ORDER BY created_at DESC LIMIT 1`;

/** The label the client would be listed under were the person to connect it now: told on the consent page. */
export async function plannedConnectionLabel(db: Queryable, input: { orgId: string; personId: string; client: ConnectingClient }): Promise<string> {
  const { rows } = await db.query(liveConnectionOf, [input.orgId, input.client.id, input.personId]);
  return connectionLabel(db, input.orgId, input.client.name, rows[0]?.id);
}

/**
 * Records the connection a person consented to (the consent `consentUid`, once: a second answer to the same
 * consent is a conflict): the key of the client's grant, with the abilities and the end the person chose, in the
 * audit trail as `oauth.connected`. A client the same person already connected to the organization keeps its key
 * (its memories, budgets and held writes): the key takes the new grant and choice, and the old grant ends. Its
 * label is the client's name, numbered when another key has it (connectionLabel).
 */
export async function connectClient(
  db: Database,
  input: { orgId: string; personId: string; client: ConnectingClient; grantId: string; consentUid: string; choice: ConsentChoice; requested: readonly string[] },
): Promise<ApiKey> {
  const problems = consentProblems(input.choice, input.requested);
  if (problems.length) throw invalidFields(problems);
  const abilities = [...new Set(input.choice.abilities)] as Ability[];
  const expiresAt = new Date(Date.now() + input.choice.lastsDays * 24 * 60 * 60 * 1000).toISOString();
  const by: ActorRef = { type: 'user', id: input.personId };
  const { client, choice } = input;
  try {
    return await db.transaction(async (tx) => {
      const { rows } = await tx.query(`${liveConnectionOf} FOR UPDATE`, [input.orgId, client.id, input.personId]);
      const existing = rows[0] as { id: string; oauth_grant_id: string; oauth_consent_uid: string | null } | undefined;
      if (existing?.oauth_consent_uid === input.consentUid) throw new AppError('conflict', 'This connection request was answered already');
      const id = existing?.id ?? newId('key');
      // Under a lock of the organization's: two connections made at once do not take the same number.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('gatehouse.connection_labels:' || $1::text, 0))`, [input.orgId]);
      const label = await connectionLabel(tx, input.orgId, client.name, existing?.id);
      if (existing) {
        await tx.query(
          `UPDATE api_keys SET label = $2, access = $3, abilities = $4, expires_at = $5, oauth_client_uri = $6, oauth_grant_id = $7, oauth_consent_uid = $8,
             created_while_held_by = COALESCE(created_while_held_by, ${heldBy('created_by')})
           WHERE id = $1`,
          [id, label, choice.access, abilities, expiresAt, client.uri, input.grantId, input.consentUid],
        );
        await endGrant(tx, existing.oauth_grant_id);
      } else {
        // A connection calls with the authorization server's tokens: its key token is made and thrown away, never usable.
        const { digest } = issueToken('api_key', id);
        await tx.query(
          `INSERT INTO api_keys (id, org_id, label, access, abilities, token_digest, created_by, expires_at, oauth_client_id, oauth_client_uri, oauth_grant_id, oauth_consent_uid, created_while_held_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, ${heldBy('$7')})`,
          [id, input.orgId, label, choice.access, abilities, digest, input.personId, expiresAt, client.id, client.uri, input.grantId, input.consentUid],
        );
      }
      await recordAudit(tx, input.orgId, {
        type: 'oauth.connected',
        actor: by,
        resourceId: id,
        data: {
          client_id: client.id,
          client_name: client.name,
          ...(label !== client.name ? { label } : {}),
          identified_by: client.identifiedBy,
          access: choice.access,
          abilities,
          expires_at: expiresAt,
          ...(existing ? { renewed: true } : {}),
        },
      });
      return findApiKey(tx, input.orgId, id);
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new AppError('conflict', 'This connection request was answered already');
    throw error;
  }
}

/** The live connection of a grant, if its key is neither revoked nor expired. */
export async function connectionOfGrant(db: Queryable, grantId: string): Promise<{ keyId: string; orgId: string; clientId: string; label: string } | undefined> {
  const { rows } = await db.query(
    `SELECT id, org_id, oauth_client_id, label FROM api_keys WHERE oauth_grant_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    [grantId],
  );
  return rows[0] ? { keyId: rows[0].id, orgId: rows[0].org_id, clientId: rows[0].oauth_client_id, label: rows[0].label } : undefined;
}

/** A connected client refreshed its token: in the audit trail, as the client. */
export async function recordRefresh(db: Queryable, grantId: string): Promise<void> {
  const connection = await connectionOfGrant(db, grantId);
  if (!connection) return;
  await recordAudit(db, connection.orgId, {
    type: 'oauth.refreshed',
    actor: { type: 'api_key', id: connection.keyId },
    resourceId: connection.keyId,
    data: { client_id: connection.clientId, client_name: connection.label },
  });
}

/** The authorization server revoked a grant (the client revoked its token, or a code was replayed). */
export async function grantRevoked(
  db: Database,
  withdrawHeldWrites: HeldWritesWithdrawal,
  grantId: string,
  reason: 'revoked_by_client' | 'token_replayed',
): Promise<WithdrawnHeldWrite[]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query(`SELECT id, org_id, oauth_client_id, label FROM api_keys WHERE oauth_grant_id = $1 AND revoked_at IS NULL FOR UPDATE`, [grantId]);
    const row = rows[0];
    if (!row) return [];
    return endConnection(tx, withdrawHeldWrites, { id: row.id, orgId: row.org_id, grantId, clientId: row.oauth_client_id, label: row.label }, { type: 'api_key', id: row.id }, reason);
  });
}
