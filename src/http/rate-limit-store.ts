import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

type Counted = { current: number; ttl: number };
type Callback = (err: Error | null, res?: Counted) => void;

/** The store interface of @fastify/rate-limit (its types/index.d.ts), as its own two stores implement it. */
interface Store {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(routeOptions: object): Store;
}
interface StoreOptions {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}

// The plugin's own stores (CommonJS files without type declarations): the Redis one's Lua script
// and the memory one's window arithmetic are reused as they are, not written again here.
const require = createRequire(import.meta.url);
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean | undefined,
  exponentialBackoff: boolean | undefined,
  redis: Redis,
  nameSpace: string,
) => Store;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean | undefined,
  exponentialBackoff: boolean | undefined,
) => Store;

/**
 * A rate-limit store whose counters live in Redis while it answers, and in this process's memory
 * while it does not (docs/configuration.md, `REDIS_URL`): an unreachable Redis makes the limit
 * per process for a while, never every request a 500. A command is sent only while the
 * connection is ready, so a request does not wait for ioredis's reconnection either; a command
 * that fails is counted in memory instead. `onFallback` hears each such request (with the error
 * when a command failed).
 */
export function redisStoreWithFallback(redis: Redis, nameSpace: string, onFallback: (err: Error | null) => void) {
  return class RedisWithFallback implements Store {
    private readonly shared: Store;
    private readonly local: Store;

    constructor(options: object, parts?: { shared: Store; local: Store }) {
      const { continueExceeding, exponentialBackoff } = options as StoreOptions;
      this.shared = parts?.shared ?? new RedisStore(continueExceeding, exponentialBackoff, redis, nameSpace);
      this.local = parts?.local ?? new LocalStore(continueExceeding, exponentialBackoff);
    }

    incr(key: string, cb: Callback, timeWindow: number, max: number): void {
      this.count('incr', key, cb, timeWindow, max);
    }

    read(key: string, cb: Callback, timeWindow: number, max: number): void {
      this.count('read', key, cb, timeWindow, max);
    }

    // The plugin passes a route's merged rate-limit options (continueExceeding and the rest).
    child(routeOptions: object): Store {
      return new RedisWithFallback(routeOptions, { shared: this.shared.child(routeOptions), local: this.local.child(routeOptions) });
    }

    private count(method: 'incr' | 'read', key: string, cb: Callback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready') {
        onFallback(null);
        this.local[method](key, cb, timeWindow, max);
        return;
      }
      this.shared[method](
        key,
        (err, res) => {
          if (err === null) {
            cb(null, res);
            return;
          }
          onFallback(err);
          this.local[method](key, cb, timeWindow, max);
        },
        timeWindow,
        max,
      );
    }
  };
}
