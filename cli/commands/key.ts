import { Command, Option } from 'commander';
import { allAbilities, type Access } from '../../domain/identity/abilities';
import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/identity/api-keys';
import { findOrganization } from '../../domain/identity/organizations';
import { emit, table, withDatabase } from '../output';

export function keyCommands(): Command {
  const key = new Command('key').description('API keys for agents, automation and scripts');

  key
    .command('create')
    .description('Create an API key; its token is printed once')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--label <label>', 'what the key is for, e.g. "Support agent"')
    .addOption(new Option('--access <access>', 'read or read_write').choices(['read', 'read_write']).makeOptionMandatory())
    .option(
      '--abilities <list>',
      `comma-separated abilities (default: all the access level allows): ${allAbilities.join(', ')}`,
      (value: string) => value.split(',').map((ability) => ability.trim()).filter(Boolean),
    )
    .action(
      withDatabase(async (db, options: { org: string; label: string; access: Access; abilities?: string[] }, command) => {
        const org = await findOrganization(db, options.org);
        const { key: created, token } = await createApiKey(db, { orgId: org.id, ...options });
        emit(command, { ...created, token }, [
          `Created ${created.access === 'read' ? 'read-only' : 'read-write'} key "${created.label}" (${created.id}) for ${org.slug}`,
          `Abilities: ${created.abilities.join(', ')}`,
          '',
          `Token (shown once; store it now):`,
          `  ${token}`,
        ]);
      }),
    );

  key
    .command('list')
    .description("List an organization's API keys (tokens are never shown again)")
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const keys = await listApiKeys(db, org.id);
        emit(
          command,
          keys,
          keys.length
            ? table([
                ['ID', 'LABEL', 'ACCESS', 'ABILITIES', 'LAST USED', 'STATE'],
                ...keys.map((k) => [
                  k.id,
                  k.label,
                  k.access,
                  String(k.abilities.length),
                  k.lastUsedAt ?? 'never',
                  k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
                ]),
              ])
            : 'No keys yet.',
        );
      }),
    );

  key
    .command('revoke')
    .description('Revoke an API key; it stops working at once')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <key id>', 'the key, e.g. key_01…')
    .action(
      withDatabase(async (db, options: { org: string; id: string }, command) => {
        const org = await findOrganization(db, options.org);
        const revoked = await revokeApiKey(db, org.id, options.id);
        emit(command, revoked, `Revoked key "${revoked.label}" (${revoked.id})`);
      }),
    );
  return key;
}
