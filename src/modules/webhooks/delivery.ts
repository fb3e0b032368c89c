import { Agent, request } from 'undici';
import { checkLiteralHost, guardedLookup, type ResolveHost } from './url-guard.ts';

/** What one attempt came to: a 2xx within the timeout is delivered; anything else failed. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  /** The receiver's answer, at most 1 KB of it. */
  body: string | null;
  error: string | null;
  /** Seconds asked by `Retry-After` on a 429 or 503. */
  retryAfter: number | null;
  seconds: number;
}

export const MAX_RESPONSE_BYTES = 1024;
export const ATTEMPT_TIMEOUT_MS = 15_000;

/** `Retry-After`: delta seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d{1,9}$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, now: Date): Promise<AttemptResult>;
  close(): Promise<void>;
}

/**
 * POSTs messages through one connection pool whose sockets resolve names with the URL guard
 * (url-guard.ts). Redirects are not followed (undici's request never follows them); the answer is
 * read up to 1 KB and the connection dropped beyond that.
 */
export function createSender(opts: { allowPrivate: boolean; resolve: ResolveHost; timeoutMs?: number; connections?: number }): Sender {
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const agent = new Agent({
    connect: { lookup: guardedLookup(opts), timeout: timeoutMs },
    connections: opts.connections ?? 256,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 10_000,
  });
  return {
    async send(url, headers, body, now) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        checkLiteralHost(new URL(url), opts.allowPrivate);
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'user-agent': 'regwatch-webhooks/1', ...headers },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          const b = chunk as Buffer;
          chunks.push(b);
          size += b.length;
          if (size >= MAX_RESPONSE_BYTES) {
            res.body.destroy();
            break;
          }
        }
        const text = Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
        const ok = res.statusCode >= 200 && res.statusCode < 300;
        const retryAfter = res.statusCode === 429 || res.statusCode === 503 ? parseRetryAfter(res.headers['retry-after'], now) : null;
        return { ok, status: res.statusCode, body: text, error: ok ? null : `HTTP ${res.statusCode}`, retryAfter, seconds: seconds() };
      } catch (e) {
        const err = e as Error & { code?: string };
        const timedOut =
          err.name === 'TimeoutError' ||
          err.code === 'UND_ERR_HEADERS_TIMEOUT' ||
          err.code === 'UND_ERR_BODY_TIMEOUT' ||
          err.code === 'UND_ERR_CONNECT_TIMEOUT';
        const error = timedOut ? `No answer within ${timeoutMs / 1000} s` : `${err.code ?? err.name}: ${err.message}`.slice(0, 500);
        return { ok: false, status: null, body: null, error, retryAfter: null, seconds: seconds() };
      }
    },
    close: () => agent.close(),
  };
}
