import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import protos from '@temporalio/proto';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { EncryptionKeyError, formatEncryptionKeys, newEncryptionKey, parseEncryptionKeys, payloadKeySetting, type EncryptionKey } from './encryption-keys';

/**
 * Temporal payloads encrypted at rest: a gated write's input (the record an agent sent), its answer, the review's
 * updates and signals, the memo. Temporal's history and its database then hold ciphertext; the api and the worker,
 * which have the key, see the payloads as they were. AES-256-GCM over the whole payload (its metadata too), a fresh
 * 96-bit nonce per payload, and the key's id in the encrypted payload's metadata so keys can be rotated: the first
 * key encrypts, every key decrypts.
 *
 * A payload that is not encrypted passes through: histories from before the key was set keep replaying, and
 * Temporal's own payloads (a search attribute's value) are untouched.
 */
export const encryptedEncoding = 'binary/encrypted';
export const keyIdMetadata = 'encryption-key-id';

const { Payload: PayloadMessage } = protos.temporal.api.common.v1;
const nonceBytes = 12;
const tagBytes = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type PayloadKey = EncryptionKey;

/** Reads PAYLOAD_ENCRYPTION_KEYS: `id:base64-of-32-bytes`, comma-separated, the first encrypting. */
export function parsePayloadKeys(value: string): PayloadKey[] {
  return parseEncryptionKeys(value, payloadKeySetting);
}

/** A new key, for a development data folder or for an operator to paste. */
export const newPayloadKey = newEncryptionKey;
export const formatPayloadKeys = formatEncryptionKeys;

export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: PayloadKey[]) {
    if (keys.length === 0) throw new EncryptionKeyError('no payload key');
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.keys[0]!;
    return payloads.map((payload) => {
      const nonce = randomBytes(nonceBytes);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(encoder.encode(id));
      const sealed = Buffer.concat([nonce, cipher.update(PayloadMessage.encode(payload).finish()), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { [METADATA_ENCODING_KEY]: encoder.encode(encryptedEncoding), [keyIdMetadata]: encoder.encode(id) }, data: sealed };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
      if (!encoding || decoder.decode(encoding) !== encryptedEncoding) return payload;
      const idBytes = payload.metadata?.[keyIdMetadata];
      const id = idBytes ? decoder.decode(idBytes) : '';
      const key = this.byId.get(id);
      if (!key) throw new EncryptionKeyError(`a payload is encrypted with key "${id}", which PAYLOAD_ENCRYPTION_KEYS does not hold`);
      const sealed = Buffer.from(payload.data ?? new Uint8Array());
      if (sealed.length < nonceBytes + tagBytes) throw new EncryptionKeyError('an encrypted payload is too short to be one');
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, nonceBytes));
      decipher.setAAD(encoder.encode(id));
      decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(sealed.subarray(nonceBytes, sealed.length - tagBytes)), decipher.final()]);
      } catch {
        throw new EncryptionKeyError(`a payload encrypted with key "${id}" fails its integrity check: it was changed, or the key is not the one it was encrypted with`);
      }
      return PayloadMessage.decode(plain) as Payload;
    });
  }
}

/** Failures' messages and stack traces moved into an encoded payload (runtime/failure-converter.cjs). */
export const encryptingFailureConverterPath = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));

/**
 * The data converter of an api's client and a worker that encrypt: the codec, and the failure converter that hands
 * a failure's message and stack trace to it. A worker given a bundle made ahead needs that bundle made with the
 * same failure converter (bundleWorkflows' `failureConverterPath`).
 */
export function encryptingDataConverter(keys: PayloadKey[]): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: encryptingFailureConverterPath };
}
