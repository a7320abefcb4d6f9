import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Secrets the service must read back (a webhook's signing secret, a Slack app's, the Slack webhook URL, the OAuth
// server's keys) stored sealed: AES-256-GCM with a key kept outside the database (SECRETS_ENCRYPTION_KEYS), a fresh
// 96-bit nonce each time, as `sealed:v1:<key id>:<base64url of nonce, ciphertext and tag>`. The key's id is in the
// stored form, so that keys rotate: the first key seals, every key opens. The associated data binds a value to
// where it lives (its table, column and row, e.g. `webhook_endpoints.secret:whk_01…`): a sealed value copied into
// another row, another organization's say, does not open there.

export interface SealingKey {
  id: string;
  /** 32 bytes. */
  key: Uint8Array;
}

/** A sealed value that cannot be opened here: its key is not held, or it was changed or moved. Names no secret. */
export class SealedSecretError extends Error {}

export interface SecretBox {
  /** The id of the key that seals. */
  readonly sealingKeyId: string;
  /** The ids of every key held, the sealing one first. */
  readonly keyIds: readonly string[];
  /** `plain`, sealed for `place` with the first key. */
  seal(plain: string, place: string): string;
  /**
   * The plain value of what is stored at `place`. A value that is not sealed is answered as it is: one written
   * before the key was set, or by an older version still running during an upgrade (the start-up sealing, or
   * `gatehouse secrets reseal`, seals it).
   */
  open(stored: string, place: string): string;
}

const version = 'sealed:v1:';
const nonceBytes = 12;
const tagBytes = 16;
const sealedShape = /^sealed:v1:([\w.-]{1,64}):([A-Za-z0-9_-]+)$/;

/** Whether a stored value is sealed (of any key); a plain one is not. */
export function isSealed(stored: string): boolean {
  return stored.startsWith('sealed:');
}

/** The start every value sealed with `keyId` has. */
export function sealedPrefix(keyId: string): string {
  return `${version}${keyId}:`;
}

const associatedData = (keyId: string, place: string) => Buffer.from(`${sealedPrefix(keyId)}${place}`, 'utf8');

export function createSecretBox(keys: readonly SealingKey[]): SecretBox {
  if (keys.length === 0) throw new SealedSecretError('no key to seal secrets with');
  for (const { id, key } of keys) {
    if (!/^[\w.-]{1,64}$/.test(id) || key.length !== 32) throw new SealedSecretError(`key "${id}" is not a 32-byte key with an id of letters, digits, - _ or .`);
  }
  const byId = new Map(keys.map(({ id, key }) => [id, key]));
  const sealing = keys[0]!;
  return {
    sealingKeyId: sealing.id,
    keyIds: keys.map(({ id }) => id),
    seal(plain, place) {
      const nonce = randomBytes(nonceBytes);
      const cipher = createCipheriv('aes-256-gcm', sealing.key, nonce);
      cipher.setAAD(associatedData(sealing.id, place));
      const body = Buffer.concat([nonce, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${sealedPrefix(sealing.id)}${body.toString('base64url')}`;
    },
    open(stored, place) {
      if (!isSealed(stored)) return stored;
      const parts = sealedShape.exec(stored);
      if (!parts) throw new SealedSecretError(`the value at ${place} is not sealed in a form this version reads`);
      const [, keyId, encoded] = parts as unknown as [string, string, string];
      const key = byId.get(keyId);
      if (!key) throw new SealedSecretError(`the value at ${place} is sealed with key "${keyId}", which SECRETS_ENCRYPTION_KEYS does not hold`);
      const body = Buffer.from(encoded, 'base64url');
      if (body.length < nonceBytes + tagBytes) throw new SealedSecretError(`the value at ${place} is too short to be a sealed one`);
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, nonceBytes));
      decipher.setAAD(associatedData(keyId, place));
      decipher.setAuthTag(body.subarray(body.length - tagBytes));
      try {
        return Buffer.concat([decipher.update(body.subarray(nonceBytes, body.length - tagBytes)), decipher.final()]).toString('utf8');
      } catch {
        throw new SealedSecretError(`the value at ${place} does not open with key "${keyId}": it was changed, or sealed for another place`);
      }
    },
  };
}
