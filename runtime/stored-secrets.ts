import { join } from 'node:path';
import type { Queryable } from '../db/database';
import { oauthSecretsColumn } from '../domain/identity/oauth-records';
import { countSealedByKey, sealColumn, type ColumnSealing, type SealedColumn } from '../domain/kit/sealed-columns';
import { createSecretBox, type SecretBox } from '../domain/kit/secret-box';
import { endpointSecretColumn } from '../domain/notify/endpoints';
import { slackWebhookUrlColumn } from '../domain/notify/notifications';
import { slackSigningSecretColumn } from '../domain/notify/slack-app';
import { ConfigError, type Config } from './config';
import { keysInFile, secretsKeySetting, type EncryptionKey } from './encryption-keys';

// The secrets Gatehouse keeps in its database and must read back, sealed with SECRETS_ENCRYPTION_KEYS (see
// domain/kit/secret-box.ts): where they live, the key every process needs, and the sealing run at start.

/** Every column that holds a sealed secret. */
export const sealedColumns: readonly SealedColumn[] = [endpointSecretColumn, slackSigningSecretColumn, slackWebhookUrlColumn, oauthSecretsColumn];

/** What `gatehouse dev` makes when SECRETS_ENCRYPTION_KEYS is not given, and the CLI reads beside the embedded database. */
export function devSecretsKeysFile(dataDir: string): string {
  return join(dataDir, 'secrets-keys');
}

/** The configured keys; a process that needs them does not start without them, and says how to make one. */
export function requireSecretsKeys(config: Config, what: string): EncryptionKey[] {
  if (config.secrets.keys) return config.secrets.keys;
  throw new ConfigError(
    `${what} needs SECRETS_ENCRYPTION_KEYS, the keys that seal the secrets kept in the database (webhook and Slack signing ` +
      `secrets, the Slack webhook URL, the OAuth server's keys). \`gatehouse secrets key\` prints one (id:base64); give every ` +
      'api, worker and the CLI the same list, and keep it apart from the database and its backups',
  );
}

/**
 * The CLI's keys: the configured ones; else, on the embedded database of a data folder, that folder's file (made
 * as `gatehouse dev` makes it). A server's database needs the configured keys.
 */
export function cliSecretsKeys(config: Config): EncryptionKey[] {
  if (config.secrets.keys || config.databaseUrl) return requireSecretsKeys(config, 'this command');
  return keysInFile(devSecretsKeysFile(config.dataDir), secretsKeySetting);
}

export function secretBoxOf(keys: readonly EncryptionKey[]): SecretBox {
  return createSecretBox(keys);
}

export interface StoredSecrets {
  /** The key that seals. */
  sealingKeyId: string;
  /** What this run did, column by column. */
  columns: ColumnSealing[];
  sealed: number;
  resealed: number;
  /** Values that do not open with the keys held, each named by where it lives (never by its value). */
  unreadable: string[];
  /** After the run: how many values each key seals, and how many are still plain (written meanwhile by an older version). */
  byKey: Record<string, number>;
  plain: number;
}

/**
 * Seals what is still plain and reseals what a key other than the first sealed, in every column; then counts the
 * values by key, so that an operator knows when an old key seals nothing and can be removed.
 */
export async function sealStoredSecrets(db: Queryable, box: SecretBox): Promise<StoredSecrets> {
  const columns: ColumnSealing[] = [];
  const byKey: Record<string, number> = {};
  let plain = 0;
  for (const column of sealedColumns) {
    columns.push(await sealColumn(db, box, column));
    const counted = await countSealedByKey(db, column);
    plain += counted.plain;
    for (const [keyId, count] of Object.entries(counted.byKey)) byKey[keyId] = (byKey[keyId] ?? 0) + count;
  }
  return {
    sealingKeyId: box.sealingKeyId,
    columns,
    sealed: columns.reduce((sum, column) => sum + column.sealed, 0),
    resealed: columns.reduce((sum, column) => sum + column.resealed, 0),
    unreadable: columns.flatMap((column) => column.unreadable),
    byKey,
    plain,
  };
}

const values = (count: number) => `${count} ${count === 1 ? 'value' : 'values'}`;

/** What a sealing run did, in lines for people: nothing when there was nothing to do. */
export function sealingNews(done: StoredSecrets): string[] {
  const lines: string[] = [];
  if (done.sealed || done.resealed) {
    lines.push(`stored secrets: sealed ${values(done.sealed)} kept in plain text and resealed ${values(done.resealed)} sealed with an older key, with key "${done.sealingKeyId}"`);
  }
  for (const problem of done.unreadable) lines.push(`stored secrets: ${problem}`);
  return lines;
}

/** The sealing run of an api's or a worker's start: logged; a failure is logged too and waits for the next start. */
export async function sealStoredSecretsAtStart(db: Queryable, box: SecretBox, log: (line: string) => void): Promise<void> {
  try {
    for (const line of sealingNews(await sealStoredSecrets(db, box))) log(line);
  } catch (error) {
    log(`stored secrets: not sealed now (${(error as Error).message.split('\n')[0]}); the next start, or gatehouse secrets reseal, does it`);
  }
}

/** The start's line about the keys, beside the payloads' line. */
export function secretsLine(box: SecretBox): string {
  const others = box.keyIds.length - 1;
  return `Stored secrets sealed with key "${box.sealingKeyId}" of SECRETS_ENCRYPTION_KEYS${others ? ` (${others} more for opening)` : ''}`;
}
