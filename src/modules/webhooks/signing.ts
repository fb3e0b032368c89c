import { createHash, randomBytes, type Hash } from 'node:crypto';

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

/**
 * HMAC-SHA256 keyed by one secret, its two padded key blocks hashed once (RFC 2104): an
 * attempt's signature copies the two hash states instead of setting up an HMAC from the key.
 */
interface Keyed {
  inner: Hash;
  outer: Hash;
}

/** The keyed states of the secrets seen last (a worker signs with the same few thousand over and over). */
const keys = new Map<string, Keyed>();

function keyed(secret: string): Keyed {
  let k = keys.get(secret);
  if (k === undefined) {
    let key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
    if (key.length > 64) key = createHash('sha256').update(key).digest();
    const ipad = Buffer.alloc(64, 0x36);
    const opad = Buffer.alloc(64, 0x5c);
    for (let i = 0; i < key.length; i++) {
      ipad[i]! ^= key[i]!;
      opad[i]! ^= key[i]!;
    }
    k = { inner: createHash('sha256').update(ipad), outer: createHash('sha256').update(opad) };
    if (keys.size >= 10_000) keys.clear();
    keys.set(secret, k);
  }
  return k;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under one secret. */
export function signMessage(secret: string, id: string, timestampSeconds: number, body: string): string {
  const k = keyed(secret);
  const inner = k.inner.copy().update(`${id}.${timestampSeconds}.${body}`).digest();
  return `v1,${k.outer.copy().update(inner).digest('base64')}`;
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
