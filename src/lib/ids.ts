import { createHash, randomBytes, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const UPPER_ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Uniform random characters (rejection-free via randomInt). */
function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** `user_ref` and `token_ref`: 12 characters, uppercase letters and digits. */
export function newRef(): string {
  return randomString(UPPER_ALNUM, 12);
}

export const MASTER_PREFIX = 'sk_live_';
export const API_PREFIX = 'sk_api_';
export const SECRET_LENGTH = 40;

/** A token secret: prefix + 40 random base62 characters (about 238 bits). */
export function newTokenSecret(kind: 'master' | 'api'): string {
  return (kind === 'master' ? MASTER_PREFIX : API_PREFIX) + randomString(BASE62, SECRET_LENGTH);
}

/** One-time tokens mailed to people (init, recovery): URL-safe, 43 characters. */
export function newOneTimeToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Secrets are high-entropy, so a fast hash is the right tool (no need for a password KDF); the
 * lookup is by hash equality in the database, which never compares the secret itself.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export const TOKEN_FORMAT = /^(sk_live_|sk_api_)[0-9A-Za-z]{32,128}$/;
