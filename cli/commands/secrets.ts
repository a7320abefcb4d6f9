import { Command } from 'commander';
import { cliSecretsKeys, sealStoredSecrets, secretBoxOf } from '../../runtime/stored-secrets';
import { emit, keyCommand, table, withDatabase } from '../output';

const values = (count: number) => `${count} ${count === 1 ? 'value' : 'values'}`;

export function secretsCommands(): Command {
  const secrets = new Command('secrets').description(
    "The keys that seal the secrets kept in the database (SECRETS_ENCRYPTION_KEYS): webhook and Slack signing secrets, the Slack webhook URL, the OAuth server's keys",
  );

  secrets.addCommand(keyCommand('key', 'Print a new key (id:base64) for SECRETS_ENCRYPTION_KEYS', 'written into every value it seals'));

  secrets
    .command('reseal')
    .description(
      'Seal what is stored in plain text and reseal what a key other than the first sealed, then count the values by key (every api and worker does the same at start)',
    )
    .action(
      withDatabase(async (db, _options: unknown, command, config) => {
        const box = secretBoxOf(cliSecretsKeys(config));
        const done = await sealStoredSecrets(db, box);
        const removable = box.keyIds.filter((id) => id !== done.sealingKeyId && !done.byKey[id]);
        const keyIds = [...new Set([...box.keyIds, ...Object.keys(done.byKey)])];
        const noteOf = (id: string) =>
          id === done.sealingKeyId ? 'seals' : !box.keyIds.includes(id) ? 'not held: these do not open' : removable.includes(id) ? 'seals nothing now: it can be removed' : 'still seals some';
        emit(
          command,
          {
            sealing_key: done.sealingKeyId,
            sealed: done.sealed,
            resealed: done.resealed,
            unreadable: done.unreadable,
            by_key: done.byKey,
            plain: done.plain,
            removable_keys: removable,
          },
          [
            `Sealed ${values(done.sealed)} kept in plain text and resealed ${values(done.resealed)} sealed with an older key, with key "${done.sealingKeyId}".`,
            '',
            ...table([['KEY', 'VALUES', ''], ...keyIds.map((id) => [id, String(done.byKey[id] ?? 0), noteOf(id)])]),
            ...(done.plain ? ['', `${values(done.plain)} still in plain text: written meanwhile by an older version; run this again once every api and worker is upgraded.`] : []),
            ...(done.unreadable.length ? ['', `${values(done.unreadable.length)} do not open with these keys:`, ...done.unreadable.map((problem) => `  ${problem}`)] : []),
          ],
        );
      }),
    );
  return secrets;
}
