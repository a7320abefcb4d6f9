import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { AppError, invalidFields } from '../kit/errors';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;

/**
 * scrypt, memory-hard: N = 2^15, r = 8 takes 32 MiB and some 50–100 ms a hash here, which is what OWASP asks
 * for. The parameters are stored with each hash, so raising them later leaves older hashes readable.
 */
const current = { N: 2 ** 15, r: 8, p: 1 };
const keyLength = 32;

export const passwordRules = { minLength: 12, maxLength: 200 };

/** Refuses what is too short to resist guessing or too long to hash cheaply (a denial of service). */
export function checkPasswordStrength(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < passwordRules.minLength) {
    throw invalidFields([{ field, message: `must be at least ${passwordRules.minLength} characters` }]);
  }
  if (length > passwordRules.maxLength) {
    throw invalidFields([{ field, message: `must be at most ${passwordRules.maxLength} characters` }]);
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, current);
  return ['scrypt', current.N, current.r, current.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether the password matches; a missing hash (no password set yet) is checked against a decoy, in the same time. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = (stored ?? decoy).split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password.slice(0, passwordRules.maxLength * 4), Buffer.from(salt, 'base64url'), { N: Number(N), r: Number(r), p: Number(p) });
  return stored !== null && actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Two hashes at a time, a short queue behind them: scrypt runs on libuv's four threads, which file reads and the
 * rest of crypto share, so a flood of sign-ins must not take them all; past the queue, callers are told to wait.
 */
const hashing = pLimit(2);
const maxWaiting = 50;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  if (hashing.pendingCount >= maxWaiting) {
    return Promise.reject(new AppError('rate_limited', 'Too many sign-ins at once; try again in a moment'));
  }
  return hashing(() => scrypt(password.normalize('NFKC'), salt, keyLength, { ...cost, maxmem: 256 * cost.N * cost.r }));
}

/** A hash nobody's password matches, so that an unknown person costs a sign-in as long as a known one. */
const decoy = ['scrypt', current.N, current.r, current.p, randomBytes(16).toString('base64url'), randomBytes(keyLength).toString('base64url')].join('$');
