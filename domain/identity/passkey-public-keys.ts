import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { AppError } from '../kit/errors';

// A passkey's public key as the authenticator gives it (COSE) turned into what any verifier reads: DER
// SubjectPublicKeyInfo, by way of a JWK. The audit ledger keeps it so, with the COSE algorithm it signs with.

const ecCurves: Record<number, string> = { [cose.COSECRV.P256]: 'P-256', [cose.COSECRV.P384]: 'P-384', [cose.COSECRV.P521]: 'P-521' };

const b64 = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64url') : undefined);

function jwkOf(key: cose.COSEPublicKey): JsonWebKey | undefined {
  if (cose.isCOSEPublicKeyEC2(key)) {
    const crv = ecCurves[key.get(cose.COSEKEYS.crv) ?? -1];
    return crv ? { kty: 'EC', crv, x: b64(key.get(cose.COSEKEYS.x)), y: b64(key.get(cose.COSEKEYS.y)) } : undefined;
  }
  if (cose.isCOSEPublicKeyOKP(key)) {
    return key.get(cose.COSEKEYS.crv) === cose.COSECRV.ED25519 ? { kty: 'OKP', crv: 'Ed25519', x: b64(key.get(cose.COSEKEYS.x)) } : undefined;
  }
  if (cose.isCOSEPublicKeyRSA(key)) return { kty: 'RSA', n: b64(key.get(cose.COSEKEYS.n)), e: b64(key.get(cose.COSEKEYS.e)) };
  return undefined;
}

/**
 * The key's SubjectPublicKeyInfo (DER, base64url) and its COSE algorithm; refused (`passkey_failed`) for a kind this
 * cannot express, and for a key that is not one (a coordinate of the wrong length, an RSA key without its modulus):
 * what the authenticator sent is the caller's mistake, never the service's fault.
 */
export function spkiOfCoseKey(coseKey: Uint8Array<ArrayBuffer>): { spki: string; algorithm: number } {
  const key = decodeCoseKey(coseKey);
  const algorithm = key.get(cose.COSEKEYS.alg);
  const jwk = jwkOf(key);
  if (algorithm === undefined || !jwk) throw new AppError('passkey_failed', 'This passkey uses a kind of key Gatehouse does not take (ES256, ES384, ES512, EdDSA or RSA are)');
  try {
    return { spki: createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'der' }).toString('base64url'), algorithm };
  } catch (error) {
    throw malformed(error);
  }
}

const malformed = (cause: unknown) => new AppError('passkey_failed', 'The passkey could not be registered: its public key is malformed', undefined, { cause });

function decodeCoseKey(coseKey: Uint8Array<ArrayBuffer>): cose.COSEPublicKey {
  try {
    return decodeCredentialPublicKey(coseKey);
  } catch (error) {
    throw malformed(error);
  }
}
