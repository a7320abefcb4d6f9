import { z } from 'zod';
import { roles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { approveLinkRules, updateOrganization, type Organization } from '../../domain/identity/organizations';
import { assertSomeoneCanSignApprovals } from '../../domain/identity/passkeys';
import { text } from '../../domain/kit/fields';
import { defineOperation } from './operation';

// The organization's own settings, as people see and change them in the console.

const organizationSchema = z.object({
  id: z.string(),
  slug: z.string().describe('What people type to sign in, and agents name in explicit-organization paths'),
  name: z.string(),
  plan: z.string(),
  timezone: z.string(),
  api_access: z.boolean().describe('The "Enable API access for this organization" switch: off, no API key or personal token is accepted'),
  self_approval: z.boolean().describe('Whether a person may approve a held write made with an API key they created (off by default)'),
  share_policy_text: z
    .boolean()
    .describe("Whether agents told of a Deny or a Review get the Cedar text of the rules that decided (off by default: the rules' ids, reasons, hints and the fields they read)"),
  approvals_need_passkey: z
    .boolean()
    .describe("Whether every approval must be signed with the approving person's passkey (off by default); approvals that cannot carry one (a personal token, a Slack button) are refused with where to finish"),
  approve_links: z
    .enum(approveLinkRules)
    .describe(
      "What confirming an Approve link from a review email needs: anyone_with_link (the link alone) or signed_in (the console session of the person it was sent to; a new organization's choice). Where approvals need a passkey, the person's passkey is asked instead. Deny links always work by the link alone",
    ),
  undo_window_days: z.number().int().describe('How many days after it was applied a gated write may be undone (7 by default, 1 to 365)'),
});

const wireOf = (organization: Organization): z.infer<typeof organizationSchema> => ({
  id: organization.id,
  slug: organization.slug,
  name: organization.name,
  plan: organization.plan,
  timezone: organization.timezone,
  api_access: organization.apiAccess,
  self_approval: organization.selfApproval,
  share_policy_text: organization.sharePolicyText,
  approvals_need_passkey: organization.approvalsNeedPasskey,
  approve_links: organization.approveLinks,
  undo_window_days: organization.undoWindowDays,
});

export const getOrganizationOperation = defineOperation({
  kind: 'read',
  name: 'organization.get',
  family: 'organization',
  summary: "The organization's settings",
  description:
    'Its name, slug, plan, time zone, whether API access is on, whether people may approve writes of keys they created, whether agents see the policy text, and what an Approve link from an email needs.',
  method: 'GET',
  path: '/organization',
  list: false,
  input: z.strictObject({}),
  output: organizationSchema,
  access: { person: { roles } },
  interfaces: ['console'],
  handler: async (_input, { caller }) => wireOf(caller.organization),
});

export const updateOrganizationOperation = defineOperation({
  kind: 'person_action',
  name: 'organization.update',
  family: 'organization',
  summary: "Change the organization's settings",
  description:
    'Switch API access on or off (every key and personal token is refused while it is off; people keep signing in), allow or refuse self-approval, share or keep the policy text from agents, need every approval signed with a passkey (refused with 409 while nobody who decides reviews has one), choose whether an Approve link from an email needs its person signed in, set how many days applied writes may be undone, rename, or change the time zone.',
  method: 'PATCH',
  path: '/organization',
  input: z.strictObject({
    api_access: z.boolean().optional(),
    self_approval: z.boolean().optional(),
    share_policy_text: z.boolean().optional(),
    approvals_need_passkey: z.boolean().optional(),
    approve_links: z.enum(approveLinkRules).optional().describe('anyone_with_link, or signed_in: an Approve link needs the console session of the person it was sent to'),
    undo_window_days: z.number().int().min(1).max(365).optional().describe('How many days after it was applied a gated write may be undone'),
    name: text({ min: 1, max: 200 }).optional(),
    timezone: text({ min: 1, max: 100 }).optional(),
  }),
  output: organizationSchema,
  access: { person: { roles: rolesThat.manageKeys } },
  interfaces: ['console'],
  handler: async (input, { db, caller }) => {
    if (input.approvals_need_passkey) await assertSomeoneCanSignApprovals(db, caller.organization.id);
    return wireOf(
      await updateOrganization(
        db,
        caller.organization.slug,
        {
          apiAccess: input.api_access,
          selfApproval: input.self_approval,
          sharePolicyText: input.share_policy_text,
          approvalsNeedPasskey: input.approvals_need_passkey,
          approveLinks: input.approve_links,
          undoWindowDays: input.undo_window_days,
          name: input.name,
          timezone: input.timezone,
        },
        { type: 'user', id: (caller.actor as PersonActor).userId },
      ),
    );
  },
});

export const organizationOperations = [getOrganizationOperation, updateOrganizationOperation];
