import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Tokens read `gate_<kind>_<id>_<secret>`: `k` an API key, `p` a person's personal token, `s` a console session
 * (the cookie), `l` a one-time link to set a password. The id finds the row; the secret (256 random bits) is
 * checked by its SHA-256 digest (`bearerLookup`). The kind is part of the token, so one never passes for another.
 */
export type TokenKind = 'api_key' | 'personal' | 'session' | 'password_link';

const letters: Record<TokenKind, string> = { api_key: 'k', personal: 'p', session: 's', password_link: 'l' };
const kindOfLetter = new Map(Object.entries(letters).map(([kind, letter]) => [letter, kind as TokenKind]));
const shape = /^gate_([kpsl])_([a-z]+_[0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;

export function issueToken(kind: TokenKind, id: string): { token: string; digest: Buffer } {
  const token = `gate_${letters[kind]}_${id}_${randomBytes(32).toString('base64url')}`;
  return { token, digest: digestToken(token) };
}

export function parseToken(token: string): { kind: TokenKind; id: string } | undefined {
  const match = shape.exec(token);
  if (!match) return undefined;
  return { kind: kindOfLetter.get(match[1]!)!, id: match[2]! };
}

export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Two secrets compared in constant time (a CSRF token against the session's, say). */
export function secretsMatch(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
