import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signing (docs/webhooks.md). Written here rather than taken from the
 * `standardwebhooks` package: signing is one HMAC, and the package (which the tests use to verify
 * every message) would bring two dependencies for it.
 */

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** Decoded keys of the secrets seen last (a worker signs with the same few thousand over and over). */
const keys = new Map<string, Buffer>();

function secretKey(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (keys.size >= 10_000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under one secret. */
export function signMessage(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three signing headers of one attempt; several secrets (a rotation's overlap) give space-separated signatures. */
export function signatureHeaders(secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signMessage(s, id, timestamp, body)).join(' '),
  };
}
