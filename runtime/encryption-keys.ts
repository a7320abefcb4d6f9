import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

/**
 * The keys of a setting such as PAYLOAD_ENCRYPTION_KEYS or SECRETS_ENCRYPTION_KEYS: `id:base64-of-32-bytes`,
 * comma-separated; the first one encrypts, every one decrypts (so that a key can be rotated).
 */
export interface EncryptionKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** The setting a key list comes from, and the command that prints a new key for it: both named in its errors. */
export interface KeySetting {
  name: string;
  command: string;
}

export const payloadKeySetting: KeySetting = { name: 'PAYLOAD_ENCRYPTION_KEYS', command: 'gatehouse temporal payload-key' };
export const secretsKeySetting: KeySetting = { name: 'SECRETS_ENCRYPTION_KEYS', command: 'gatehouse secrets key' };

export class EncryptionKeyError extends Error {}

/** Letters, digits, `-`, `_` and `.`: an id is written into what its key encrypts. */
export const keyIdShape = /^[\w.-]{1,64}$/;

/** Reads a key list; a malformed entry is named by its position, never echoed (it may be a key pasted without its id). */
export function parseEncryptionKeys(value: string, setting: KeySetting): EncryptionKey[] {
  const keys = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry, index) => {
      const which = `entry ${index + 1}`;
      const separator = entry.indexOf(':');
      const id = entry.slice(0, separator).trim();
      if (separator <= 0 || !keyIdShape.test(id)) throw new EncryptionKeyError(`${which} is not id:key (an id of letters, digits, - _ or ., a colon, then the key in base64)`);
      const encoded = entry.slice(separator + 1).trim();
      const key = Buffer.from(encoded, 'base64');
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.toString('base64') !== encoded) throw new EncryptionKeyError(`key "${id}" is not base64`);
      if (key.length !== 32) throw new EncryptionKeyError(`key "${id}" is ${key.length} bytes; it must be 32, in base64 (${setting.command} makes one)`);
      return { id, key };
    });
  if (keys.length === 0) throw new EncryptionKeyError(`${setting.name} holds no key (${setting.command} makes one)`);
  const ids = keys.map((key) => key.id);
  const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
  if (repeated) throw new EncryptionKeyError(`key id "${repeated}" is given twice`);
  return keys;
}

/** A new key, for a development data folder or for an operator to paste. */
export function newEncryptionKey(id: string): EncryptionKey {
  return { id, key: randomBytes(32) };
}

export function formatEncryptionKeys(keys: EncryptionKey[]): string {
  return keys.map(({ id, key }) => `${id}:${key.toString('base64')}`).join(',');
}

/**
 * A development key file (the data folder's): read when it exists, else made once with a key named
 * `dev-<today>`, readable by its owner only. What it encrypts lives beside it; losing it loses that.
 */
export function keysInFile(file: string, setting: KeySetting): EncryptionKey[] {
  if (!existsSync(file)) {
    // Written whole to a file of its own, then linked into place: a second start at the same moment, or a crash
    // half-way, never leaves a key that encrypted something replaced or cut short.
    const draft = `${file}.${process.pid}.new`;
    writeFileSync(draft, `${formatEncryptionKeys([newEncryptionKey(`dev-${new Date().toISOString().slice(0, 10)}`)])}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  try {
    return parseEncryptionKeys(readFileSync(file, 'utf8'), setting);
  } catch (error) {
    throw new EncryptionKeyError(`${file}: ${(error as Error).message}`);
  }
}
