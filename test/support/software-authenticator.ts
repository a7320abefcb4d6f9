import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

// A WebAuthn authenticator in software, for tests over HTTP: a P-256 key (ES256, COSE -7), registration with
// "none" attestation and assertions, byte for byte as a browser hands them to a relying party. The browser tests
// use Chromium's virtual authenticator instead; this one lets a test sign what a browser would not (another
// review's challenge, a stale time) and check what the service and the offline verifier make of it.

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

/** CBOR's head of a major type with a length (only what the shapes below need). */
function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
}
const cborBytes = (bytes: Buffer) => Buffer.concat([cborHead(2, bytes.length), bytes]);
const cborText = (text: string) => Buffer.concat([cborHead(3, Buffer.byteLength(text)), Buffer.from(text)]);
/** A small CBOR integer (-24 … 23). */
const cborInt = (value: number) => (value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value));

export interface WebAuthnOptions {
  /** The relying party's id (the console's host name) and the page's origin. */
  rpId: string;
  origin: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private counter = 0;

  constructor(private readonly options: WebAuthnOptions) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  /** The public key as COSE (EC2, P-256, ES256). */
  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    return Buffer.concat([cborHead(5, 5), cborInt(1), cborInt(2), cborInt(3), cborInt(-7), cborInt(-1), cborInt(1), cborInt(-2), cborBytes(x), cborInt(-3), cborBytes(y)]);
  }

  private authenticatorData(flags: number, attested?: Buffer): Buffer {
    this.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(this.options.rpId), Buffer.from([flags]), counter, attested ?? Buffer.alloc(0)]);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.options.origin, crossOrigin: false }));
  }

  /**
   * A public key no verifier can use, as a broken or hostile authenticator might send: a P-256 key whose x is a
   * byte short, an RSA key without its modulus, or a key type COSE does not define.
   */
  malformedCoseKey(kind: 'short-coordinate' | 'rsa-without-n' | 'unknown-kty'): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    if (kind === 'short-coordinate') {
      return Buffer.concat([cborHead(5, 5), cborInt(1), cborInt(2), cborInt(3), cborInt(-7), cborInt(-1), cborInt(1), cborInt(-2), cborBytes(x.subarray(1)), cborInt(-3), cborBytes(y)]);
    }
    // RS256 is COSE -257, two bytes past CBOR's small integers: 0x39 0x0100.
    if (kind === 'rsa-without-n') return Buffer.concat([cborHead(5, 3), cborInt(1), cborInt(3), cborInt(3), Buffer.from([0x39, 0x01, 0x00]), cborInt(-2), cborBytes(Buffer.from([1, 0, 1]))]);
    return Buffer.concat([cborHead(5, 3), cborInt(1), cborInt(9), cborInt(3), cborInt(-7), cborInt(-1), cborBytes(x)]);
  }

  /** A registration response (RegistrationResponseJSON) to the relying party's challenge (base64url); `coseKey` replaces the real public key. */
  register(challenge: string, coseKey: Buffer = this.coseKey()): Record<string, unknown> {
    const length = Buffer.from([this.credentialId.length >> 8, this.credentialId.length & 0xff]);
    // User present, user verified, attested credential data included.
    const authData = this.authenticatorData(0x45, Buffer.concat([Buffer.alloc(16), length, this.credentialId, coseKey]));
    const attestationObject = Buffer.concat([cborHead(5, 3), cborText('fmt'), cborText('none'), cborText('attStmt'), cborHead(5, 0), cborText('authData'), cborBytes(authData)]);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: this.clientData('webauthn.create', challenge).toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** An assertion over a challenge (base64url), as the four fields Gatehouse keeps with a signed verdict. */
  assert(challenge: string): { credential_id: string; authenticator_data: string; client_data_json: string; signature: string } {
    const authenticatorData = this.authenticatorData(0x05);
    const clientDataJson = this.clientData('webauthn.get', challenge);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJson)]), this.privateKey);
    return {
      credential_id: this.id,
      authenticator_data: authenticatorData.toString('base64url'),
      client_data_json: clientDataJson.toString('base64url'),
      signature: signature.toString('base64url'),
    };
  }
}
