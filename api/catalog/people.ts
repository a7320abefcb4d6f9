import { z } from 'zod';
import { roles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { passwordLinkUrl, type PasswordLink } from '../../domain/identity/password-links';
import { endPersonSessions, invitePerson, listPeople, resetPassword, updatePerson, type RosterManager, type User } from '../../domain/identity/people';
import { text } from '../../domain/kit/fields';
import { emailPasswordLink, type EmailedLink, type LinkOccasion } from '../../domain/notify/password-link-emails';
import { defineOperation, type OperationContext } from './operation';

// The organization's people, managed in the console (Settings → People). Owners manage everyone; admins
// everyone but owners (domain/identity/people.ts holds the rules).

const access = { person: { roles: rolesThat.managePeople } };
const consoleOnly = ['console'] as const;

const personSchema = z.object({
  id: z.string().describe('The person id (usr_…)'),
  email: z.string(),
  name: z.string().nullable(),
  role: z.enum(roles),
  active: z.boolean().describe('false: deactivated, cannot sign in'),
  has_password: z.boolean().describe('false: invited (or reset) and has not set a password yet'),
  team_member_id: z.string().nullable().describe('The team member they are (see /v1/team-members): inactive or out of office, they are not asked to review'),
  set_up_by: z
    .string()
    .nullable()
    .describe(
      "The owner or admin who was given this person's last set-password link (no email was configured), and so could have set their password: the person cannot approve writes of that one's keys, and their approvals count as one toward a quorum. null: the link went to the person (by email) or was printed by the operator's CLI",
    ),
  created_at: z.iso.datetime(),
  last_sign_in_at: z.iso.datetime().nullable().optional(),
  open_sessions: z.number().int().optional(),
});

const linkSchema = z
  .object({
    url: z.string().describe('The one-time link that sets a password; shown once'),
    expires_at: z.iso.datetime(),
  })
  .describe('Only when no email is configured: the link, to give to the person (who is then recorded as set up by you)');

const emailSchema = z
  .object({
    to: z.string().describe('The address the link was sent to: the person’s'),
    sent: z.boolean().describe('false: it could not be sent, and the link was voided; send a new one with people.reset_password'),
    expires_at: z.iso.datetime().nullable().describe('Until when the link works (null when it was not sent)'),
    problem: z.string().nullable().describe('Why it could not be sent (null when it was)'),
  })
  .describe('When email is configured: the link went to the person alone, never to you');

/** What an invite or a reset answers of its new link: the link itself (no email configured), or whether it was emailed. */
const linkHandOverSchema = { set_password_link: linkSchema.optional(), set_password_email: emailSchema.optional() };

const personWire = (user: User & { lastSignInAt?: string | null; openSessions?: number }) => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: user.role,
  active: user.active,
  has_password: user.hasPassword,
  team_member_id: user.teamMemberId,
  set_up_by: user.setUpBy,
  created_at: user.createdAt,
  last_sign_in_at: user.lastSignInAt,
  open_sessions: user.openSessions,
});

const linkWire = (publicUrl: string, link: PasswordLink) => ({ url: passwordLinkUrl(publicUrl, link), expires_at: link.expiresAt });

const emailWire = (emailed: EmailedLink) =>
  emailed.sent ? { to: emailed.to, sent: true, expires_at: emailed.expiresAt, problem: null } : { to: emailed.to, sent: false, expires_at: null, problem: emailed.problem };

/**
 * Where a new set-password link goes: with email configured, to the person alone (sent once the link's transaction
 * has committed; see domain/notify/password-link-emails.ts); without, answered to the owner or admin who asked.
 */
const linkTo = ({ mailer }: OperationContext) => (mailer ? ('person' as const) : ('requester' as const));

async function handOver(issued: { user: User; link: PasswordLink }, occasion: LinkOccasion, context: OperationContext) {
  const { mailer, caller, publicUrl } = context;
  if (!mailer) return { set_password_link: linkWire(publicUrl, issued.link) };
  const by = caller.actor as PersonActor;
  const emailed = await emailPasswordLink(context.db, issued, occasion, {
    mailer,
    publicUrl,
    organization: caller.organization,
    by: { ref: { type: 'user', id: by.userId }, email: by.email },
    log: context.log,
  });
  return { set_password_email: emailWire(emailed) };
}

function managerOf({ caller }: OperationContext): RosterManager {
  const actor = caller.actor as PersonActor;
  return { ref: { type: 'user', id: actor.userId }, role: actor.role };
}

const target = (input: { id: string }, { caller }: OperationContext) => ({ orgId: caller.organization.id, userId: input.id });
const personId = z.strictObject({ id: z.string().max(100).describe('The person id (usr_…)') });

export const listPeopleOperation = defineOperation({
  kind: 'read',
  name: 'people.list',
  family: 'people',
  summary: "List the organization's people",
  description: 'Everyone, active first, with their role, whether they have a password, their last sign-in and open sessions.',
  method: 'GET',
  path: '/people',
  // Whole: an organization's roster is short.
  list: false,
  input: z.strictObject({}),
  output: z.array(personSchema),
  access,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller }) => (await listPeople(db, caller.organization.id)).map(personWire),
});

export const invitePersonOperation = defineOperation({
  kind: 'person_action',
  name: 'people.invite',
  family: 'people',
  summary: 'Invite a person',
  description:
    "Adds a person with a role. With email configured, the one-time link with which they set their password is emailed to them alone, and the answer says whether it went (set_password_email); without, the answer carries the link to give them (set_password_link), and they are recorded as set up by you (set_up_by).",
  method: 'POST',
  path: '/people',
  input: z.strictObject({
    email: text({ min: 3, max: 254 }).describe('Their sign-in email'),
    name: text({ max: 200 }).optional(),
    role: z.enum(roles),
  }),
  output: z.object({ person: personSchema, ...linkHandOverSchema }),
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => {
    const issued = await invitePerson(context.db, { orgId: context.caller.organization.id, ...input }, managerOf(context), { linkTo: linkTo(context) });
    return { person: personWire(issued.user), ...(await handOver(issued, 'invited', context)) };
  },
});

export const updatePersonOperation = defineOperation({
  kind: 'person_action',
  name: 'people.update',
  family: 'people',
  summary: "Change a person's role, or deactivate or reactivate them",
  description: 'A deactivated person cannot sign in; their sessions and personal tokens stop at once. An organization keeps at least one active owner.',
  method: 'PATCH',
  path: '/people/:id',
  input: personId.extend({
    role: z.enum(roles).optional(),
    active: z.boolean().optional(),
    team_member_id: z.string().max(100).nullable().optional().describe('Link the person to their team member (mem_…); null unlinks'),
  }),
  output: personSchema,
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => personWire(await updatePerson(context.db, target(input, context), { role: input.role, active: input.active, teamMemberId: input.team_member_id }, managerOf(context))),
});

export const resetPasswordOperation = defineOperation({
  kind: 'person_action',
  name: 'people.reset_password',
  family: 'people',
  summary: "Reset a person's password",
  description:
    'Their password stops working and their sessions end. The new one-time link to set one is emailed to them alone when email is configured (set_password_email), else answered to you (set_password_link: they are then recorded as set up by you).',
  method: 'POST',
  path: '/people/:id/reset-password',
  input: personId,
  output: z.object({ person: personSchema, ...linkHandOverSchema }),
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => {
    const issued = await resetPassword(context.db, target(input, context), managerOf(context), { linkTo: linkTo(context) });
    return { person: personWire(issued.user), ...(await handOver(issued, 'reset', context)) };
  },
});

export const endSessionsOperation = defineOperation({
  kind: 'person_action',
  name: 'people.end_sessions',
  family: 'people',
  summary: "End a person's sessions",
  description: 'Signs them out everywhere; they may sign in again.',
  method: 'POST',
  path: '/people/:id/end-sessions',
  input: personId,
  output: z.object({ sessions_ended: z.number().int() }),
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => ({ sessions_ended: await endPersonSessions(context.db, target(input, context), managerOf(context)) }),
});

export const peopleOperations = [listPeopleOperation, invitePersonOperation, updatePersonOperation, resetPasswordOperation, endSessionsOperation];
