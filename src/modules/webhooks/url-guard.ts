import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';

/**
 * Which addresses a webhook may reach (docs/webhooks.md, "Safety"): only public unicast ones,
 * unless WEBHOOK_ALLOW_PRIVATE_URLS is set. A name is resolved once per connection and the
 * connection goes to the address that was checked (guardedLookup below is the socket's own
 * lookup), so a name that answers differently the second time (DNS rebinding) cannot reach inside.
 */

export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const resolveWithDns: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export const MAX_URL_LENGTH = 2048;

type Range = readonly [bigint, number]; // network, prefix length

function v4(a: string): bigint | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

/** An IPv6 text (with an optional zone and a trailing dotted IPv4) as its 128-bit value. */
function v6(a: string): bigint | null {
  let s = a
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const n = v4(dotted[1]!);
    if (n === null) return null;
    s = s.slice(0, -dotted[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const inRange = (value: bigint, bits: number, [net, len]: Range) => value >> BigInt(bits - len) === net >> BigInt(bits - len);

const NON_PUBLIC_V4: Range[] = (
  [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const
).map(([a, l]) => [v4(a)!, l]);

// Inside 2000::/3 (the only global unicast block): the special-purpose ranges.
const NON_PUBLIC_V6: Range[] = (
  [
    ['2001::', 23],
    ['2001:db8::', 32],
    ['3fff::', 20],
  ] as const
).map(([a, l]) => [v6(a)!, l]);

/** IPv6 forms that carry an IPv4 address: the address is judged by the IPv4 inside. */
function embeddedV4(n: bigint): bigint | null {
  if (n >> 32n === 0xffffn) return n & 0xffffffffn; // ::ffff:a.b.c.d (IPv4-mapped)
  if (n >> 32n === 0x64ff9b0000000000000000n) return n & 0xffffffffn; // 64:ff9b::/96 (NAT64)
  if (n >> 112n === 0x2002n) return (n >> 80n) & 0xffffffffn; // 2002::/16 (6to4)
  return null;
}

/** Whether an IP address (IPv4 or IPv6 text) is a public unicast address a webhook may reach. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (family === 4) {
    const n = v4(address);
    return n !== null && !NON_PUBLIC_V4.some((r) => inRange(n, 32, r));
  }
  if (family === 6) {
    const n = v6(address);
    if (n === null) return false;
    const inner = embeddedV4(n);
    if (inner !== null) return !NON_PUBLIC_V4.some((r) => inRange(inner, 32, r));
    return inRange(n, 128, [0x2n << 124n, 3]) && !NON_PUBLIC_V6.some((r) => inRange(n, 128, r));
  }
  return false;
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; error: string };

/**
 * Syntax of a webhook URL: http(s), at most 2,048 characters, no credentials, not port 0. The
 * WHATWG parser already turns `0x7f000001`, `2130706433`, `0177.0.0.1` and `127.1` into `127.0.0.1`.
 */
export function parseWebhookUrl(raw: string): UrlVerdict {
  // Characters as the schema counts them (code points: an emoji is one), in the schema's words.
  if (raw.length > MAX_URL_LENGTH && [...raw].length > MAX_URL_LENGTH)
    return { ok: false, error: `The url field must not be greater than ${MAX_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, error: 'The url must be a valid URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: 'The url must be an http or https URL.' };
  if (url.username || url.password) return { ok: false, error: 'The url may not contain credentials.' };
  // The parser keeps an explicit port 0, to which no connection can ever be made.
  if (url.port === '0') return { ok: false, error: "The url's port must be between 1 and 65535." };
  return { ok: true, url };
}

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Resolves the URL's host and refuses it unless every address is public (or private ones are allowed). */
export async function checkWebhookUrl(raw: string, opts: { allowPrivate: boolean; resolve: ResolveHost }): Promise<UrlVerdict> {
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok || opts.allowPrivate) return parsed;
  const host = bareHost(parsed.url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await opts.resolve(host)).map((a) => a.address);
    } catch {
      return { ok: false, error: "The url's host name could not be resolved." };
    }
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    return { ok: false, error: 'The url must resolve to a public address (not loopback, private, link-local or reserved).' };
  }
  return parsed;
}

export class BlockedAddressError extends Error {
  readonly code = 'WEBHOOK_BLOCKED_ADDRESS';
}

/** Refuses an IP-literal host at an attempt (a socket to a literal never calls the lookup). */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = bareHost(url);
  if (!allowPrivate && isIP(host) && !isPublicAddress(host)) throw new BlockedAddressError(`${host} is not a public address`);
}

/**
 * The socket's lookup: resolve, refuse when any answer is not public, and hand the checked
 * addresses to the connection itself, so no second resolution happens between check and connect.
 */
export function guardedLookup(opts: { allowPrivate: boolean; resolve: ResolveHost }): LookupFunction {
  return (hostname, options, callback) => {
    opts
      .resolve(hostname)
      .then((answers) => {
        if (answers.length === 0) throw new Error(`${hostname} has no address`);
        if (!opts.allowPrivate) {
          const bad = answers.find((a) => !isPublicAddress(a.address));
          if (bad) throw new BlockedAddressError(`${hostname} resolves to ${bad.address}, not a public address`);
        }
        const family = (options as { family?: number }).family;
        const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
        if (usable.length === 0) throw new Error(`${hostname} has no IPv${family} address`);
        if ((options as { all?: boolean }).all) (callback as (e: null, a: typeof usable) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      })
      .catch((e: Error) => callback(e as NodeJS.ErrnoException, '', 0));
  };
}
