import type { Database, Queryable } from '../../db/database';
import { recordAudit, type ActorRef } from '../audit/events';
import { invalidFields } from '../kit/errors';
import { placeOf, type SealedColumn } from '../kit/sealed-columns';
import type { SecretBox } from '../kit/secret-box';

// An organization's Slack app, as Gatehouse knows it: the signing secret that proves a request came from Slack
// (written, never read back: what anyone sees is whether it is set) and the Slack workspace (team) presses must
// come from.

/** Where an organization's Slack signing secret is kept, sealed: every press is verified with it, so it is read back. */
export const slackSigningSecretColumn: SealedColumn = { table: 'slack_apps', column: 'signing_secret', rowKey: 'org_id' };

/** What is shown of an organization's Slack app. */
export interface SlackAppSettings {
  signingSecretSet: boolean;
  /** The workspace presses must come from; null: not bound yet (the first verified request binds it). */
  teamId: string | null;
}

/** The interactivity endpoint's address, to paste into the Slack app as its Request URL. */
export function slackRequestUrl(publicUrl: string, orgId: string): string {
  return `${publicUrl}/slack/interactions/${encodeURIComponent(orgId)}`;
}

export async function findSlackAppSettings(db: Queryable, orgId: string): Promise<SlackAppSettings> {
  const { rows } = await db.query('SELECT signing_secret IS NOT NULL AS secret_set, team_id FROM slack_apps WHERE org_id = $1', [orgId]);
  return { signingSecretSet: rows[0]?.secret_set ?? false, teamId: rows[0]?.team_id ?? null };
}

/** A Slack workspace id as Slack writes it (T0123ABCD; Enterprise Grid's E…). */
const teamIdShape = /^[A-Z0-9]{2,30}$/;

/**
 * Sets (null: removes) the signing secret, and binds (null: unbinds) the workspace; what is left out stays. The
 * audit trail says the secret was set or removed, never what it is. A changed or removed secret unlinks every
 * Slack user of the organization and voids the open offers to link: whoever knew the old secret could sign a press
 * as any linked Slack user, so the links made under it are not trusted under the new one.
 */
export async function updateSlackAppSettings(
  db: Database,
  secrets: SecretBox,
  orgId: string,
  change: { signingSecret?: string | null; teamId?: string | null },
  by: ActorRef,
): Promise<SlackAppSettings> {
  const { signingSecret, teamId } = change;
  const problems = [];
  if (typeof signingSecret === 'string' && !/^[\x21-\x7e]{8,200}$/.test(signingSecret)) {
    problems.push({ field: 'signing_secret', message: "must be the app's Signing Secret, as Basic Information shows it (8 to 200 visible characters)" });
  }
  if (typeof teamId === 'string' && !teamIdShape.test(teamId)) {
    problems.push({ field: 'team_id', message: 'must be a Slack workspace id such as T0123ABCD' });
  }
  if (problems.length) throw invalidFields(problems);
  return db.transaction(async (tx) => {
    const place = placeOf(slackSigningSecretColumn, orgId);
    const before = await tx.query('SELECT signing_secret FROM slack_apps WHERE org_id = $1 FOR UPDATE', [orgId]);
    const stored: string | null = before.rows[0]?.signing_secret ?? null;
    const secretChanged = signingSecret !== undefined && signingSecret !== (stored === null ? null : openedOrUnknown(secrets, stored, place));
    await tx.query(
      `INSERT INTO slack_apps (org_id, signing_secret, team_id) VALUES ($1, CASE WHEN $2 THEN $3 END, CASE WHEN $4 THEN $5 END)
       ON CONFLICT (org_id) DO UPDATE SET
         signing_secret = CASE WHEN $2 THEN $3 ELSE slack_apps.signing_secret END,
         team_id = CASE WHEN $4 THEN $5 ELSE slack_apps.team_id END,
         updated_at = now()`,
      [orgId, signingSecret !== undefined, signingSecret ? secrets.seal(signingSecret, place) : null, teamId !== undefined, teamId ?? null],
    );
    const data: Record<string, unknown> = {};
    if (signingSecret !== undefined) data.slack_signing_secret = signingSecret === null ? null : 'set';
    if (teamId !== undefined) data.slack_team_id = teamId;
    await recordAudit(tx, orgId, { type: 'organization.updated', actor: by, data });
    if (secretChanged) await unlinkEverySlackUser(tx, orgId, by);
    return findSlackAppSettings(tx, orgId);
  });
}

/** The secret stored, or undefined when it does not open here (a secret that cannot be read is replaced as a changed one). */
function openedOrUnknown(secrets: SecretBox, stored: string, place: string): string | undefined {
  try {
    return secrets.open(stored, place);
  } catch {
    return undefined;
  }
}

async function unlinkEverySlackUser(tx: Queryable, orgId: string, by: ActorRef): Promise<void> {
  await tx.query('DELETE FROM slack_link_offers WHERE org_id = $1 AND used_at IS NULL', [orgId]);
  const { rows } = await tx.query('DELETE FROM slack_links WHERE org_id = $1 RETURNING user_id, slack_team_id, slack_user_id', [orgId]);
  for (const link of rows) {
    await recordAudit(tx, orgId, {
      type: 'slack.unlinked',
      actor: by,
      resourceId: link.user_id,
      data: { slack_team_id: link.slack_team_id, slack_user_id: link.slack_user_id, reason: 'signing secret changed' },
    });
  }
}

/** What verifying a request needs: the organization it is addressed to, its secret, and its bound workspace. */
export interface SlackAppSecret {
  orgId: string;
  signingSecret: string;
  teamId: string | null;
}

/**
 * The Slack app of the organization a Request URL names (its id, or its slug); undefined when there is no such
 * organization or it set no signing secret: the request is then refused exactly as a badly signed one is
 * (domain/notify/slack-requests.ts), so that the endpoint does not tell which organizations exist or use Slack.
 */
export async function findSlackAppSecret(db: Queryable, secrets: SecretBox, orgIdOrSlug: string): Promise<SlackAppSecret | undefined> {
  const { rows } = await db.query(
    `SELECT o.id, a.signing_secret, a.team_id FROM organizations o JOIN slack_apps a ON a.org_id = o.id
     WHERE (o.id = $1 OR o.slug = $1) AND a.signing_secret IS NOT NULL`,
    [orgIdOrSlug],
  );
  const app = rows[0];
  if (!app) return undefined;
  return { orgId: app.id, signingSecret: secrets.open(app.signing_secret, placeOf(slackSigningSecretColumn, app.id)), teamId: app.team_id };
}
