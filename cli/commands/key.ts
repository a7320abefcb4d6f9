import { Command, Option } from 'commander';
import { allAbilities, type Access } from '../../domain/identity/abilities';
import { createApiKey, findApiKey, listApiKeys, revokeApiKey, setApiKeyBudget, type ApiKey } from '../../domain/identity/api-keys';
import { findOrganization } from '../../domain/identity/organizations';
import { everyGatedWrite } from '../../domain/resources';
import { emit, table, withDatabase } from '../output';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

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
                ['ID', 'LABEL', 'ACCESS', 'ABILITIES', 'BUDGET', 'LAST USED', 'STATE'],
                ...keys.map((k) => [
                  k.id,
                  k.label,
                  k.access,
                  String(k.abilities.length),
                  budgetOf(k),
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
    .description('Revoke an API key; it stops working at once, and its writes held for review are withdrawn')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <key id>', 'the key, e.g. key_01…')
    .action(
      withDatabase(async (db, options: { org: string; id: string }, command) => {
        const org = await findOrganization(db, options.org);
        const { key: revoked, withdrawn } = await revokeApiKey(db, withdrawReviewsOfKey, org.id, options.id);
        // No Temporal client here: the withdrawn writes' workflows end at their next re-read of the review.
        const held = withdrawn.length
          ? `; withdrew ${withdrawn.length} held ${withdrawn.length === 1 ? 'write' : 'writes'} (${withdrawn.map((review) => review.id).join(', ')}): nobody can approve them, and their workflows end at their next re-read`
          : '';
        emit(command, { ...revoked, withdrawnReviews: withdrawn.map((review) => review.id) }, `Revoked key "${revoked.label}" (${revoked.id})${held}`);
      }),
    );

  key
    .command('budget')
    .description("Set a key's own daily request budget and its daily caps of writes by operation (from its next request)")
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <key id>', 'the key, e.g. key_01…')
    .option('--daily-requests <count>', 'requests a day, REST and MCP together (the organization\'s local day); none: no budget of its own')
    .option(
      '--cap <operation=count>',
      `a daily cap of writes submitted, e.g. customers.update=20 (repeat for more; count none removes it): ${everyGatedWrite.map((write) => write.name).join(', ')}`,
      (value: string, caps: string[]) => [...caps, value],
      [],
    )
    .option('--clear-caps', 'remove every cap first')
    .action(
      withDatabase(async (db, options: { org: string; id: string; dailyRequests?: string; cap: string[]; clearCaps?: boolean }, command) => {
        const org = await findOrganization(db, options.org);
        const change: { dailyRequestBudget?: number | null; writeCaps?: Record<string, number> } = {};
        if (options.dailyRequests !== undefined) change.dailyRequestBudget = options.dailyRequests === 'none' ? null : Number(options.dailyRequests);
        if (options.clearCaps || options.cap.length) {
          const caps = options.clearCaps ? {} : { ...(await findApiKey(db, org.id, options.id)).writeCaps };
          for (const cap of options.cap) {
            const [operation = '', count = ''] = cap.split('=');
            if (count === 'none') delete caps[operation];
            else caps[operation] = count === '' ? Number.NaN : Number(count);
          }
          change.writeCaps = caps;
        }
        const changed = await setApiKeyBudget(db, org.id, options.id, change, everyGatedWrite.map((write) => write.name));
        emit(command, changed, `Key "${changed.label}" (${changed.id}): ${budgetOf(changed)}`);
      }),
    );
  return key;
}

/** A key's own budgets in words: `500 requests a day; customers.update 20 a day`, or `none`. */
function budgetOf(key: ApiKey): string {
  const parts = [
    ...(key.dailyRequestBudget !== null ? [`${key.dailyRequestBudget} requests a day`] : []),
    ...Object.entries(key.writeCaps).map(([operation, cap]) => `${operation} ${cap} a day`),
  ];
  return parts.length ? parts.join('; ') : 'none';
}
