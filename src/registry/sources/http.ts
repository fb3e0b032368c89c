import { setTimeout as sleepFor } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { SourceName } from '../model.ts';
import { isAbortError, SourceUnavailableError, type EntityErrorHandler, isRunFatal } from './errors.ts';

/**
 * The one HTTP client of the registry connectors: undici with per-attempt timeouts, retries with
 * exponential backoff and jitter on network errors, timeouts, 5xx and 429, and client-side rate
 * limits so the documented upstream quotas are never exceeded by this process.
 */

import { silentLog, type Log } from '../../logger.ts';

export interface RateLimitRule {
  limit: number;
  windowMs: number;
}

export interface RetryPolicy {
  /** Attempts after the first one. */
  retries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A server's Retry-After is honoured up to this many milliseconds. */
  retryAfterMaxMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 3,
  backoffBaseMs: 500,
  backoffMaxMs: 30_000,
  retryAfterMaxMs: 180_000,
};

export interface HttpClientOptions {
  source: SourceName;
  /** Per-attempt limit for connecting, receiving headers and receiving the body. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  rateLimits?: RateLimitRule[];
  maxConcurrent?: number;
  headers?: Record<string, string>;
  logger?: Log;
  /** Tests pass a fixed sequence; production uses Math.random. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
  dispatcher?: Dispatcher;
}

export interface HttpRequest {
  method?: 'GET' | 'POST';
  url: string;
  query?: Record<string, string | string[] | undefined>;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Extra retry condition for answers that are transient in a registry-specific way. */
  isRetryable?: (response: HttpResponse) => boolean;
  /** Used in log lines and errors instead of the URL (which may carry identifiers). */
  label?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  url: string;
}

export interface HttpClient {
  request(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

export function responseText(response: HttpResponse): string {
  return response.body.toString('utf8');
}

export function headerValue(response: HttpResponse, name: string): string | undefined {
  const value = response.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Joins a configured base URL (trailing slash tolerated) with a path. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export function trimBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> => sleepFor(ms, undefined, signal ? { signal } : undefined);

/** Exponential backoff with "equal jitter": half the step is fixed, half random. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** attempt);
  return Math.round(step / 2 + random() * (step / 2));
}

/** Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * Sliding-window limiter over several windows at once (e.g. 3/s and 120/min), plus a cap on
 * requests in flight. Starts are recorded when granted, so bursts never exceed any window.
 */
export class RateLimiter {
  readonly #rules: RateLimitRule[];
  readonly #starts: number[][];
  readonly #maxConcurrent: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  #inFlight = 0;
  #waiters: Array<() => void> = [];
  #queue: Promise<void> = Promise.resolve();

  constructor(options: {
    rules?: RateLimitRule[];
    maxConcurrent?: number;
    now?: () => number;
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  }) {
    this.#rules = options.rules ?? [];
    this.#starts = this.#rules.map(() => []);
    this.#maxConcurrent = Math.max(1, options.maxConcurrent ?? Number.POSITIVE_INFINITY);
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? defaultSleep;
  }

  /** Resolves with a release function once a slot in every window and in flight is free. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    await this.#acquireConcurrency(signal);
    try {
      // Window checks run one caller at a time so two callers cannot take the same free slot.
      const turn = this.#queue.then(() => this.#waitForWindows(signal));
      this.#queue = turn.catch(() => undefined);
      await turn;
    } catch (error) {
      this.#releaseConcurrency();
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#releaseConcurrency();
    };
  }

  async #waitForWindows(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.#now();
      let waitMs = 0;
      this.#rules.forEach((rule, i) => {
        const starts = this.#starts[i]!;
        while (starts.length > 0 && starts[0]! <= now - rule.windowMs) starts.shift();
        if (starts.length >= rule.limit) waitMs = Math.max(waitMs, starts[0]! + rule.windowMs - now);
      });
      if (waitMs <= 0) {
        for (const starts of this.#starts) starts.push(now);
        return;
      }
      await this.#sleep(waitMs, signal);
    }
  }

  async #acquireConcurrency(signal?: AbortSignal): Promise<void> {
    while (this.#inFlight >= this.#maxConcurrent) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    this.#inFlight += 1;
  }

  #releaseConcurrency(): void {
    this.#inFlight -= 1;
    this.#waiters.shift()?.();
  }
}

function buildUrl(url: string, query: HttpRequest['query']): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) u.searchParams.append(key, v);
  }
  return u.toString();
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function describeNetworkError(error: unknown): { reason: 'timeout' | 'network'; detail: string } {
  const code = (error as { code?: string })?.code ?? '';
  const detail = error instanceof Error ? `${code ? `${code} ` : ''}${error.message}` : String(error);
  const timeout = /TIMEOUT/i.test(code) || (error instanceof Error && error.name === 'TimeoutError');
  return { reason: timeout ? 'timeout' : 'network', detail };
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const logger = options.logger ?? silentLog;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const ownsDispatcher = !options.dispatcher;
  const dispatcher =
    options.dispatcher ??
    new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4_000 });
  const limiter = new RateLimiter({ rules: options.rateLimits, maxConcurrent: options.maxConcurrent, now, sleep });

  async function attempt(req: HttpRequest, url: string): Promise<HttpResponse> {
    const release = await limiter.acquire(req.signal);
    // The timeout signal also bounds slow bodies that trickle in below undici's idle timeouts.
    const timeoutSignal = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeoutSignal]) : timeoutSignal;
    try {
      const res = await request(url, {
        method: req.method ?? 'GET',
        headers: { ...options.headers, ...req.headers },
        body: req.body,
        signal,
        dispatcher,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, body, url };
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason ?? error;
      if (timeoutSignal.aborted) {
        const timeout = new Error(`no complete answer within ${timeoutMs} ms`);
        timeout.name = 'TimeoutError';
        throw timeout;
      }
      throw error;
    } finally {
      release();
    }
  }

  return {
    async request(req) {
      const url = buildUrl(req.url, req.query);
      const label = req.label ?? `${req.method ?? 'GET'} ${new URL(url).pathname}`;
      for (let attemptNo = 0; ; attemptNo++) {
        const lastAttempt = attemptNo >= policy.retries;
        let waitMs: number;
        try {
          const response = await attempt(req, url);
          const retryable = isRetryableStatus(response.status) || (req.isRetryable?.(response) ?? false);
          if (!retryable) return response;
          if (lastAttempt) {
            throw new SourceUnavailableError(
              options.source,
              `${options.source} ${label}: HTTP ${response.status} after ${attemptNo + 1} attempts`,
              { reason: response.status === 429 ? 'rate_limited' : 'http', status: response.status },
            );
          }
          const retryAfter = parseRetryAfter(headerValue(response, 'retry-after'), now());
          waitMs = retryAfter !== null ? Math.min(retryAfter, policy.retryAfterMaxMs) : backoffDelay(attemptNo, policy, random);
          logger.warn(
            { source: options.source, request: label, status: response.status, attempt: attemptNo + 1, waitMs },
            'registry request failed, retrying',
          );
        } catch (error) {
          if (error instanceof SourceUnavailableError || isAbortError(error) || req.signal?.aborted) throw error;
          const { reason, detail } = describeNetworkError(error);
          if (lastAttempt) {
            throw new SourceUnavailableError(options.source, `${options.source} ${label}: ${detail} after ${attemptNo + 1} attempts`, {
              reason,
              cause: error,
            });
          }
          waitMs = backoffDelay(attemptNo, policy, random);
          logger.warn(
            { source: options.source, request: label, error: detail, attempt: attemptNo + 1, waitMs },
            'registry request failed, retrying',
          );
        }
        await sleep(waitMs, req.signal);
      }
    },
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/**
 * Maps items with bounded concurrency and yields results in input order, so a daily run stays
 * deterministic while several entities are fetched at once. A rejection surfaces when its turn
 * comes; the generator then stops.
 */
export async function* mapOrdered<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  concurrency: number,
  fn: (item: T) => Promise<R>,
): AsyncGenerator<R> {
  const pending: Array<Promise<R>> = [];
  const limit = Math.max(1, concurrency);
  for await (const item of items as AsyncIterable<T>) {
    const p = fn(item);
    // Observed later in order; this keeps an early rejection from being reported as unhandled.
    p.catch(() => undefined);
    pending.push(p);
    if (pending.length >= limit) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}

type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Fetches entities with bounded concurrency and yields them in input order. Run-level failures
 * (source down, abort) are thrown when their turn comes; anything else is reported for that
 * entity, also in input order, and the run goes on. A null result is skipped silently.
 */
export async function* fetchEntities<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  options: { concurrency: number; onEntityError: EntityErrorHandler; identify: (item: T) => string },
  fetch: (item: T) => Promise<R | null>,
): AsyncGenerator<R> {
  const settled = mapOrdered(items, options.concurrency, async (item): Promise<[T, Settled<R | null>]> => {
    try {
      return [item, { ok: true, value: await fetch(item) }];
    } catch (error) {
      return [item, { ok: false, error }];
    }
  });
  for await (const [item, result] of settled) {
    if (result.ok) {
      if (result.value !== null) yield result.value;
      continue;
    }
    if (isRunFatal(result.error)) throw result.error;
    options.onEntityError(options.identify(item), result.error instanceof Error ? result.error : new Error(String(result.error)));
  }
}

export function defaultEntityErrorHandler(source: SourceName, logger: Log): EntityErrorHandler {
  return (identifier, error) => logger.warn({ source, identifier, error: error.message, errorName: error.name }, 'registry entity skipped');
}

/** Today's date in Poland (the registries' calendar), as YYYY-MM-DD. */
export function polishDate(at: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Warsaw', year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
