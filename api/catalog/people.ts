import { z } from 'zod';
import { roles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { passwordLinkUrl, type PasswordLink } from '../../domain/identity/password-links';
import { endPersonSessions, invitePerson, listPeople, resetPassword, updatePerson, type RosterManager, type User } from '../../domain/identity/people';
import { text } from '../../domain/kit/fields';
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
  created_at: z.iso.datetime(),
  last_sign_in_at: z.iso.datetime().nullable().optional(),
  open_sessions: z.number().int().optional(),
});

const linkSchema = z.object({
  url: z.string().describe('The one-time link that sets a password; shown once'),
  expires_at: z.iso.datetime(),
});

const personWire = (user: User & { lastSignInAt?: string | null; openSessions?: number }) => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: user.role,
  active: user.active,
  has_password: user.hasPassword,
  team_member_id: user.teamMemberId,
  created_at: user.createdAt,
  last_sign_in_at: user.lastSignInAt,
  open_sessions: user.openSessions,
});

const linkWire = (publicUrl: string, link: PasswordLink) => ({ url: passwordLinkUrl(publicUrl, link), expires_at: link.expiresAt });

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
  description: 'Adds a person with a role; the answer carries the one-time link with which they set their password, to give them.',
  method: 'POST',
  path: '/people',
  input: z.strictObject({
    email: text({ min: 3, max: 254 }).describe('Their sign-in email'),
    name: text({ max: 200 }).optional(),
    role: z.enum(roles),
  }),
  output: z.object({ person: personSchema, set_password_link: linkSchema }),
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => {
    const { user, link } = await invitePerson(context.db, { orgId: context.caller.organization.id, ...input }, managerOf(context));
    return { person: personWire(user), set_password_link: linkWire(context.publicUrl, link) };
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
  description: 'Their password stops working and their sessions end; the answer carries a new one-time link to set one.',
  method: 'POST',
  path: '/people/:id/reset-password',
  input: personId,
  output: z.object({ person: personSchema, set_password_link: linkSchema }),
  access,
  interfaces: consoleOnly,
  handler: async (input, context) => {
    const { user, link } = await resetPassword(context.db, target(input, context), managerOf(context));
    return { person: personWire(user), set_password_link: linkWire(context.publicUrl, link) };
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
