import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Tokens read `gate_k_<key id>_<secret>` (API keys) or `gate_p_<token id>_<secret>` (people). The id
 * finds the row; the secret (256 random bits) is checked against a SHA-256 digest in constant time.
 */
export type TokenKind = 'api_key' | 'personal';

const prefixes: Record<TokenKind, string> = { api_key: 'gate_k_', personal: 'gate_p_' };
const shape = /^gate_([kp])_([a-z]+_[0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;

export function issueToken(kind: TokenKind, id: string): { token: string; digest: Buffer } {
  const token = `${prefixes[kind]}${id}_${randomBytes(32).toString('base64url')}`;
  return { token, digest: digestToken(token) };
}

export function parseToken(token: string): { kind: TokenKind; id: string } | undefined {
  const match = shape.exec(token);
  if (!match) return undefined;
  return { kind: match[1] === 'k' ? 'api_key' : 'personal', id: match[2]! };
}

export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export function tokenMatches(token: string, storedDigest: Buffer): boolean {
  const digest = digestToken(token);
  return digest.length === storedDigest.length && timingSafeEqual(digest, storedDigest);
}
