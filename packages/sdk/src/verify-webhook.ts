/**
 * Standard Webhooks 1.0 verification (https://www.standardwebhooks.com), on WebCrypto only so
 * that it runs in Node, Deno, Bun, browsers and edge runtimes without a dependency. regwatch signs
 * `${webhook-id}.${webhook-timestamp}.${body}` with HMAC-SHA256 under the endpoint's secret
 * (`whsec_` + base64) and sends `v1,<base64>` signatures, space-separated (two during the 24 hours
 * after a rotation).
 */

import type { WebhookMessage } from './types.ts';

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the message's timestamp may be from now (default 300 s, the standard's). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default `Date.now()`). */
  now?: number;
}

/**
 * Checks a received message and returns its parsed body (`{ type, timestamp, data }`). Pass the
 * body exactly as received (the raw string or bytes, not a re-serialised object), the request
 * headers and the endpoint's secret. Throws `WebhookVerificationError` when a header is missing,
 * the timestamp is outside the tolerance or no signature matches.
 */
export async function verifyWebhook<T = WebhookMessage>(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) throw new WebhookVerificationError('Invalid webhook-timestamp header.');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (seconds < now - tolerance) throw new WebhookVerificationError('Message timestamp too old.');
  if (seconds > now + tolerance) throw new WebhookVerificationError('Message timestamp too new.');

  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const key = await crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const signature = base64Bytes(entry.slice(comma + 1));
    // subtle.verify compares in constant time.
    if (signature && (await crypto.subtle.verify('HMAC', key, signature, signed))) {
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new WebhookVerificationError('The body is not JSON.');
      }
    }
  }
  throw new WebhookVerificationError('No matching signature found.');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError('The secret is not whsec_ followed by base64.');
  return bytes;
}

function base64Bytes(value: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(value);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}
