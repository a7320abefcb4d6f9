import { Command, Option } from 'commander';
import { roles } from '../../domain/identity/actors';
import { findOrganization } from '../../domain/identity/organizations';
import { createPersonalToken, createUser, findUserByEmail, listUsers, revokePersonalToken } from '../../domain/identity/people';
import { emit, table, withDatabase } from '../output';

export function userCommands(): Command {
  const user = new Command('user').description('People of an organization and their personal tokens');

  user
    .command('create')
    .description('Add a person to an organization')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--email <email>', 'their email address')
    .addOption(new Option('--role <role>', 'owner, admin and reviewer may decide reviews').choices([...roles]).makeOptionMandatory())
    .option('--name <name>', 'their name')
    .action(
      withDatabase(async (db, options: { org: string; email: string; role: string; name?: string }, command) => {
        const org = await findOrganization(db, options.org);
        const created = await createUser(db, { orgId: org.id, ...options });
        emit(command, created, `Added ${created.email} to ${org.slug} as ${created.role} (${created.id})`);
      }),
    );

  user
    .command('list')
    .description("List an organization's people")
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const people = await listUsers(db, org.id);
        emit(command, people, people.length ? table([['ID', 'EMAIL', 'ROLE', 'NAME'], ...people.map((p) => [p.id, p.email, p.role, p.name ?? ''])]) : 'No people yet.');
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
