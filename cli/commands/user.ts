import { Command, Option } from 'commander';
import { roles } from '../../domain/identity/actors';
import { findOrganization } from '../../domain/identity/organizations';
import { passwordLinkUrl } from '../../domain/identity/password-links';
import { cliManager, createPersonalToken, findUserByEmail, invitePerson, listPeople, resetPassword, revokePersonalToken, updatePerson } from '../../domain/identity/people';
import type { Role } from '../../domain/identity/actors';
import { emit, table, withDatabase } from '../output';

export function userCommands(): Command {
  const user = new Command('user').description('People of an organization and their personal tokens');

  user
    .command('create')
    .description('Add a person to an organization; prints the one-time link with which they set their password')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--email <email>', 'their email address')
    .addOption(new Option('--role <role>', 'owner, admin and reviewer may decide reviews').choices([...roles]).makeOptionMandatory())
    .option('--name <name>', 'their name')
    .action(
      withDatabase(async (db, options: { org: string; email: string; role: Role; name?: string }, command, config) => {
        const org = await findOrganization(db, options.org);
        // The operator's CLI prints the link whatever SMTP_URL says, for the first set-up of an organization; the
        // operator is outside it, so nobody is recorded as having set the person up (domain/identity/set-up.ts).
        const { user: created, link } = await invitePerson(db, { orgId: org.id, email: options.email, role: options.role, name: options.name }, cliManager);
        const url = passwordLinkUrl(config.publicUrl, link);
        emit(command, { ...created, set_password_url: url, link_expires_at: link.expiresAt }, [
          `Added ${created.email} to ${org.slug} as ${created.role} (${created.id}).`,
          `Give them this link to set a password (shown once; it works once, until ${link.expiresAt}):`,
          `  ${url}`,
        ]);
      }),
    );

  user
    .command('password-link')
    .description("Reset a person's password: the old one stops working, their sessions end, and a new one-time link is printed")
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--email <email>', 'the person')
    .action(
      withDatabase(async (db, options: { org: string; email: string }, command, config) => {
        const org = await findOrganization(db, options.org);
        const person = await findUserByEmail(db, org.id, options.email);
        const { link } = await resetPassword(db, { orgId: org.id, userId: person.id }, cliManager);
        const url = passwordLinkUrl(config.publicUrl, link);
        emit(command, { id: person.id, email: person.email, set_password_url: url, link_expires_at: link.expiresAt }, [
          `Reset the password of ${person.email}. Their link to set a new one (shown once; it works once, until ${link.expiresAt}):`,
          `  ${url}`,
        ]);
      }),
    );

  user
    .command('update')
    .description("Change a person's role, or deactivate or reactivate them")
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--email <email>', 'the person')
    .addOption(new Option('--role <role>', 'their new role').choices([...roles]))
    .addOption(new Option('--active <on|off>', 'off: they cannot sign in, their sessions end').choices(['on', 'off']))
    .action(
      withDatabase(async (db, options: { org: string; email: string; role?: Role; active?: 'on' | 'off' }, command) => {
        const org = await findOrganization(db, options.org);
        const person = await findUserByEmail(db, org.id, options.email);
        const active = options.active === undefined ? undefined : options.active === 'on';
        const updated = await updatePerson(db, { orgId: org.id, userId: person.id }, { role: options.role, active }, cliManager);
        emit(command, updated, `${updated.email}: ${updated.role}, ${updated.active ? 'active' : 'deactivated'}`);
      }),
    );

  user
    .command('list')
    .description("List an organization's people")
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const people = await listPeople(db, org.id);
        const state = (p: (typeof people)[number]) => (!p.active ? 'deactivated' : p.hasPassword ? 'active' : 'invited');
        emit(
          command,
          people,
          people.length
            ? table([['ID', 'EMAIL', 'ROLE', 'NAME', 'STATE', 'LAST SIGN-IN'], ...people.map((p) => [p.id, p.email, p.role, p.name ?? '', state(p), p.lastSignInAt ?? 'never'])])
            : 'No people yet.',
        );
      }),
    );

  user
    .command('token')
    .description('Issue a personal access token for a person (for the API: deciding reviews); printed once')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--email <email>', 'the person')
    .action(
      withDatabase(async (db, options: { org: string; email: string }, command) => {
        const org = await findOrganization(db, options.org);
        const person = await findUserByEmail(db, org.id, options.email);
        const issued = await createPersonalToken(db, person);
        emit(command, { id: issued.id, user_id: person.id, email: person.email, role: person.role, token: issued.token }, [
          `Personal token ${issued.id} for ${person.email} (${person.role}); shown once, store it now:`,
          `  ${issued.token}`,
        ]);
      }),
    );

  user
    .command('revoke-token')
    .description('Revoke a personal token; it stops working at once')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <token id>', 'the token, e.g. pat_01…')
    .action(
      withDatabase(async (db, options: { org: string; id: string }, command) => {
        const org = await findOrganization(db, options.org);
        await revokePersonalToken(db, org.id, options.id);
        emit(command, { id: options.id, revoked: true }, `Revoked personal token ${options.id}`);
      }),
    );
  return user;
}
