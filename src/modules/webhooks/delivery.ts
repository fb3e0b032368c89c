import { Agent } from 'undici';
import { toStorableText } from '../../lib/storable-text.ts';
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

/**
 * `Retry-After`: delta seconds or an HTTP date; null for anything else (the schedule applies).
 * Only a value that names a day goes to Date.parse: its fallback reads a date into bare numbers
 * ("-5", "120.5", "1 2" are days of 2001), which made such a wait 0, an attempt at once.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^\d{1,9}$/.test(v)) return Number(v);
  // Not in the grammar, but plain in what it asks: that long, rounded up.
  if (/^\d{1,9}\.\d{1,9}$/.test(v)) return Math.ceil(Number(v));
  // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") and the two obsolete forms begin with the day's name.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, now: Date): Promise<AttemptResult>;
  close(): Promise<void>;
}

/** Where a URL's requests go, parsed once (and its literal host checked once: a pure function of the URL). */
interface Target {
  origin: string;
  path: string;
}

/** An attempt in flight: when it started, and how to abort it (once connected). */
interface Running {
  started: number;
  abort: ((reason: Error) => void) | null;
}

/** The `Retry-After` of an answer's raw headers (name, value, name, value, ...). */
function rawRetryAfter(raw: readonly (Buffer | string)[] | null): string | undefined {
  if (!raw) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toString().toLowerCase() === 'retry-after') return raw[i + 1]!.toString();
  return undefined;
}

/**
 * POSTs messages through one connection pool whose sockets resolve names with the URL guard
 * (url-guard.ts). Redirects are not followed (undici's dispatch never follows them); the answer is
 * read up to 1 KB and the connection dropped beyond that. Each attempt is undici's `dispatch`
 * with a handler of its own rather than `request`: no Readable stream, header object or abort
 * signal an answer (undici's request was about 120 µs of CPU an attempt under load). The 15-second
 * rule: the pool's connect, headers and body timeouts, and a sweep (every tenth of the timeout)
 * that aborts an attempt running longer than the timeout; an answer later than that counts as a
 * timeout whatever its status.
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
  const timeoutError = `No answer within ${timeoutMs / 1000} s`;
  const targets = new Map<string, Target>();
  const running = new Set<Running>();
  let sweeper: NodeJS.Timeout | null = null;
  const sweep = () => {
    const now = performance.now();
    for (const r of running)
      if (now - r.started > timeoutMs && r.abort) r.abort(new DOMException('The attempt timed out', 'TimeoutError') as Error);
    if (running.size === 0 && sweeper !== null) {
      clearInterval(sweeper);
      sweeper = null;
    }
  };
  const target = (url: string): Target => {
    let t = targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      checkLiteralHost(u, opts.allowPrivate);
      t = { origin: u.origin, path: `${u.pathname}${u.search}` };
      if (targets.size >= 10_000) targets.clear();
      targets.set(url, t);
    }
    return t;
  };
  return {
    send(url, headers, body, now) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      const failure = (e: unknown): AttemptResult => {
        const err = e as Error & { code?: string };
        const timedOut =
          err.name === 'TimeoutError' ||
          err.code === 'UND_ERR_HEADERS_TIMEOUT' ||
          err.code === 'UND_ERR_BODY_TIMEOUT' ||
          err.code === 'UND_ERR_CONNECT_TIMEOUT';
        // The message may quote the receiver (a TLS name, a parser's view of its answer): kept storable.
        const error = timedOut ? timeoutError : toStorableText(`${err.code ?? err.name}: ${err.message}`.slice(0, 500));
        return { ok: false, status: null, body: null, error, retryAfter: null, seconds: seconds() };
      };
      let t: Target;
      try {
        t = target(url);
      } catch (e) {
        return Promise.resolve(failure(e));
      }
      const flat = ['content-type', 'application/json', 'user-agent', 'regwatch-webhooks/1'];
      for (const k in headers) flat.push(k, headers[k]!);
      return new Promise<AttemptResult>((resolve) => {
        const entry: Running = { started, abort: null };
        running.add(entry);
        sweeper ??= setInterval(sweep, Math.max(10, timeoutMs / 10)).unref();
        let status = 0;
        let retryAfter: string | undefined;
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const settle = (r: AttemptResult) => {
          if (settled) return;
          settled = true;
          running.delete(entry);
          resolve(r);
        };
        const answered = () => {
          if (seconds() > timeoutMs / 1000) return settle(failure(new DOMException('The attempt timed out', 'TimeoutError')));
          const ok = status >= 200 && status < 300;
          // The receiver's bytes: a NUL in them would fail the batch of outcomes it is recorded with.
          const text = toStorableText(Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8'));
          const wait = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : null;
          settle({ ok, status, body: text, error: ok ? null : `HTTP ${status}`, retryAfter: wait, seconds: seconds() });
        };
        agent.dispatch(
          { origin: t.origin, path: t.path, method: 'POST', headers: flat, body },
          {
            onConnect(abort: (reason?: Error) => void) {
              entry.abort = abort;
            },
            onHeaders(statusCode: number, raw: Buffer[]) {
              status = statusCode;
              if (statusCode === 429 || statusCode === 503) retryAfter = rawRetryAfter(raw);
              return true;
            },
            onData(chunk: Buffer) {
              chunks.push(chunk);
              size += chunk.length;
              if (size >= MAX_RESPONSE_BYTES) {
                answered(); // enough read: the rest is dropped with the connection
                entry.abort?.(new Error('answer longer than the limit'));
                return false;
              }
              return true;
            },
            onComplete() {
              answered();
            },
            onError(err: Error) {
              settle(failure(err));
            },
          },
        );
      });
    },
    close: () => {
      if (sweeper !== null) clearInterval(sweeper);
      return agent.close();
    },
  };
}
