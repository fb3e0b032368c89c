import { ConnectionError, parseRetryAfter } from './errors.ts';

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retrying off). */
  maxAttempts?: number;
  /** Wait before a retry when the answer gave no `Retry-After` (doubled each time; default 500 ms). */
  baseDelayMs?: number;
  /** The longest wait accepted: a `Retry-After` above it is not waited for, the error is thrown (default 60 s). */
  maxDelayMs?: number;
}

export type FetchLike = (input: Request) => Promise<Response>;

/** Statuses worth asking again: the rate limit and a service that is (briefly) unable to answer. */
const RETRIED = new Set([429, 503]);

/**
 * A fetch that asks again on 429 and 503, waiting what `Retry-After` says (or a doubling delay
 * when it says nothing), a bounded number of times. Every request the API takes is safe to send
 * twice after a 429 or 503: both are answered before the request is acted on.
 */
export function retryingFetch(
  base: FetchLike,
  options: RetryOptions = {},
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = delay,
): FetchLike {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await base(attempt < maxAttempts ? request.clone() : request);
      } catch (e) {
        if (request.signal.aborted) throw e;
        throw new ConnectionError({
          status: 0,
          code: 'CONNECTION_FAILED',
          message: `${request.method} ${request.url}: ${e instanceof Error ? e.message : String(e)}`,
        });
      }
      if (!RETRIED.has(response.status) || attempt >= maxAttempts) return response;
      const wait = parseRetryAfter(response.headers.get('retry-after')) ?? baseDelayMs * 2 ** (attempt - 1);
      if (wait > maxDelayMs) return response;
      await response.body?.cancel().catch(() => {});
      await sleep(wait, request.signal);
      if (request.signal.aborted) throw request.signal.reason;
    }
  };
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks `signal.aborted`). */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
