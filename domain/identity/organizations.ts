import type { Database, Queryable } from '../../db/database';
import { AppError } from '../kit/errors';
import { newId } from '../kit/ids';
import { findPlan, listPlans } from './plans';
import { defaultPolicySource, savePolicySet } from '../policy-sets/versions';
import { cliActor, recordAudit, type ActorRef } from '../audit/events';

/**
 * What confirming an Approve decision link needs besides the link: nothing (`anyone_with_link`), or the console
 * session of the person it was sent to (`signed_in`). Deny links always work by the link alone.
 */
export const approveLinkRules = ['anyone_with_link', 'signed_in'] as const;
export type ApproveLinkRule = (typeof approveLinkRules)[number];

export interface Organization {
  id: string;
  slug: string;
  name: string;
  plan: string;
  timezone: string;
  apiAccess: boolean;
  /** Whether a person may approve a write made with an API key they created. */
  selfApproval: boolean;
  /** Whether agents told of a Deny or a Review get the text of the rules that decided. */
  sharePolicyText: boolean;
  /** Whether every approval must be signed with the approving person's passkey. */
  approvalsNeedPasskey: boolean;
  /** What an Approve decision link needs besides the link (a passkey, where approvals need one, wins). */
  approveLinks: ApproveLinkRule;
  /** How many days after it was applied a write may be undone. */
  undoWindowDays: number;
  createdAt: string;
}

export const organizationColumns = `o.id, o.slug, o.name, o.plan, o.timezone, o.api_access, o.self_approval, o.share_policy_text, o.approvals_need_passkey, o.approve_links, o.undo_window_days, o.created_at`;

export function organizationFromRow(row: Record<string, unknown>): Organization {
  return {
    id: row.id as string,
    slug: row.slug as string,
    name: row.name as string,
    plan: row.plan as string,
    timezone: row.timezone as string,
    apiAccess: row.api_access as boolean,
    selfApproval: row.self_approval as boolean,
    sharePolicyText: row.share_policy_text as boolean,
    approvalsNeedPasskey: row.approvals_need_passkey as boolean,
    approveLinks: row.approve_links as ApproveLinkRule,
    undoWindowDays: row.undo_window_days as number,
    createdAt: (row.created_at as Date).toISOString(),
  };
}

export interface OrganizationSettings {
  name?: string;
  plan?: string;
  timezone?: string;
  apiAccess?: boolean;
  selfApproval?: boolean;
  sharePolicyText?: boolean;
  approvalsNeedPasskey?: boolean;
  approveLinks?: ApproveLinkRule;
  undoWindowDays?: number;
}

export async function createOrganization(
  db: Database,
  input: { slug: string; name: string } & OrganizationSettings,
): Promise<Organization> {
  if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(input.slug)) {
    throw new AppError('validation_failed', 'slug must be 2–63 characters of a-z, 0-9 and -, starting with a letter or digit');
  }
  checkSettings(input);
  return db.transaction(async (tx) => {
    await checkPlan(tx, input.plan);
    await checkZoneInDatabase(tx, input.timezone);
    const taken = await tx.query('SELECT 1 FROM organizations WHERE slug = $1', [input.slug]);
    if (taken.rowCount) throw new AppError('conflict', `an organization with slug "${input.slug}" exists already`);
    // Left out, Approve links take the column's default: a new organization asks for the person signed in.
    const { rows } = await tx.query(
      `INSERT INTO organizations AS o (id, slug, name, plan, timezone, api_access, approve_links)
       VALUES ($1, $2, $3, $4, $5, $6, ${input.approveLinks ? '$7' : 'DEFAULT'}) RETURNING ${organizationColumns}`,
      [newId('org'), input.slug, input.name, input.plan ?? 'free', input.timezone ?? 'UTC', input.apiAccess ?? true, ...(input.approveLinks ? [input.approveLinks] : [])],
    );
    const organization = organizationFromRow(rows[0]);
    await savePolicySet(tx, organization.id, defaultPolicySource, 'default');
    return organization;
  });
}

export async function updateOrganization(db: Database, slug: string, settings: OrganizationSettings, by: ActorRef = cliActor): Promise<Organization> {
  checkSettings(settings);
  return db.transaction(async (tx) => {
    await checkPlan(tx, settings.plan);
    await checkZoneInDatabase(tx, settings.timezone);
    const { rows } = await tx.query(
      `UPDATE organizations AS o SET
         name = COALESCE($2, name), plan = COALESCE($3, plan), timezone = COALESCE($4, timezone),
         api_access = COALESCE($5, api_access), self_approval = COALESCE($6, self_approval),
         share_policy_text = COALESCE($7, share_policy_text), approvals_need_passkey = COALESCE($8, approvals_need_passkey),
         undo_window_days = COALESCE($9, undo_window_days), approve_links = COALESCE($10, approve_links), updated_at = now()
       WHERE slug = $1 RETURNING ${organizationColumns}`,
      [
        slug,
        settings.name ?? null,
        settings.plan ?? null,
        settings.timezone ?? null,
        settings.apiAccess ?? null,
        settings.selfApproval ?? null,
        settings.sharePolicyText ?? null,
        settings.approvalsNeedPasskey ?? null,
        settings.undoWindowDays ?? null,
        settings.approveLinks ?? null,
      ],
    );
    if (!rows[0]) throw new AppError('not_found', `no organization has the slug "${slug}"`);
    const organization = organizationFromRow(rows[0]);
    await recordAudit(tx, organization.id, { type: 'organization.updated', actor: by, data: { ...settings } });
    return organization;
  });
}

export async function findOrganization(db: Queryable, slug: string): Promise<Organization> {
  const { rows } = await db.query(`SELECT ${organizationColumns} FROM organizations o WHERE slug = $1`, [slug]);
  if (!rows[0]) throw new AppError('not_found', `no organization has the slug "${slug}"`);
  return organizationFromRow(rows[0]);
}

export async function listOrganizations(db: Queryable): Promise<Organization[]> {
  const { rows } = await db.query(`SELECT ${organizationColumns} FROM organizations o ORDER BY o.slug`);
  return rows.map(organizationFromRow);
}

export async function countOrganizations(db: Queryable): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM organizations');
  return rows[0].n as number;
}

/** Plans are rows of the `plans` table; the foreign key would refuse another name, this says which exist. */
async function checkPlan(db: Queryable, plan: string | undefined): Promise<void> {
  if (plan === undefined || (await findPlan(db, plan))) return;
  const names = (await listPlans(db)).map((known) => known.name);
  throw new AppError('validation_failed', `plan must be one of ${names.join(', ')}`);
}

function checkSettings(settings: OrganizationSettings): void {
  if (settings.timezone !== undefined && !isTimeZone(settings.timezone)) {
    throw new AppError('validation_failed', `"${settings.timezone}" is not an IANA time zone such as Europe/Berlin`);
  }
  if (settings.undoWindowDays !== undefined && !(Number.isInteger(settings.undoWindowDays) && settings.undoWindowDays >= 1 && settings.undoWindowDays <= 365)) {
    throw new AppError('validation_failed', 'undo_window_days must be a whole number of days from 1 to 365');
  }
  if (settings.name !== undefined && settings.name.trim() === '') {
    throw new AppError('validation_failed', 'name must not be empty');
  }
  if (settings.approveLinks !== undefined && !approveLinkRules.includes(settings.approveLinks)) {
    throw new AppError('validation_failed', 'approve_links must be anyone_with_link or signed_in');
  }
}

/** PostgreSQL computes the daily budget's day in this zone, and knows fewer zones than Node does. */
async function checkZoneInDatabase(tx: Queryable, zone: string | undefined): Promise<void> {
  if (zone === undefined) return;
  const { rowCount } = await tx.query('SELECT 1 FROM pg_timezone_names WHERE name = $1', [zone]);
  if (!rowCount) throw new AppError('validation_failed', `"${zone}" is not a time zone the database knows; use a current IANA name such as America/Los_Angeles`);
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
