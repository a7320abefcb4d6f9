import { createHash } from 'node:crypto';
import { formatEncryptionKeys, type EncryptionKey } from '../../runtime/encryption-keys';
import { secretBoxOf } from '../../runtime/stored-secrets';

/**
 * The key the tests seal stored secrets with: one fixed key, so that every test file's harness and every process a
 * test starts (on the shared database) seal and open alike. A test of rotation uses keys of its own, on a
 * database of its own.
 */
export const testSecretsKeys: EncryptionKey[] = [{ id: 'test', key: createHash('sha256').update('gatehouse tests: stored secrets').digest() }];

export const testSecrets = secretBoxOf(testSecretsKeys);

/** SECRETS_ENCRYPTION_KEYS for a `gatehouse` process a test starts. */
export const testSecretsEnv = { SECRETS_ENCRYPTION_KEYS: formatEncryptionKeys(testSecretsKeys) };
