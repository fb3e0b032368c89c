import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { redisStoreWithFallback } from './rate-limit-store.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `stats`: 10 a minute per client IP; `none`: not limited (health, docs); default 180 a minute. */
    rateLimitGroup?: 'default' | 'stats' | 'none';
  }
}

/** How often an unreachable Redis is logged while it stays so. */
const FALLBACK_LOG_MS = 60_000;

/**
 * Counters in Redis, in this process's memory while Redis cannot be reached (rate-limit-store.ts),
 * with a warning when that starts (again at most once a minute while it lasts) and a line when
 * Redis answers again. Redis's own connection errors are those warnings, not ioredis's unhandled
 * error events.
 */
function redisFallbackStore(app: FastifyInstance, redis: Redis) {
  let warnedAt = -Infinity;
  let degraded = false;
  redis.on('error', () => {}); // reported below, once a minute, by the requests that fall back
  redis.on('ready', () => {
    if (!degraded) return;
    degraded = false;
    app.log.info('Redis answers again: rate-limit counters are shared again');
  });
  return redisStoreWithFallback(redis, 'regwatch-rl:', (err) => {
    degraded = true;
    if (performance.now() - warnedAt < FALLBACK_LOG_MS) return;
    warnedAt = performance.now();
    app.log.warn(
      { err: err?.message ?? `connection ${redis.status}` },
      "Redis cannot be reached: rate-limit counters are kept in this process's memory until it answers (the limit is per process meanwhile)",
    );
  });
}

/**
 * 180 requests a minute per account (per client IP when unauthenticated), 10 a minute per IP on
 * the stats routes. Counters live in memory, or in Redis when given, so that several API
 * processes share one limit (in memory again while Redis cannot be reached). Every limited
 * response (unknown routes included: app.ts sets the not-found handler after this plugin, whose
 * hooks then cover it) carries X-RateLimit-Limit and X-RateLimit-Remaining; a 429 also Retry-After.
 */
export async function installRateLimits(
  app: FastifyInstance,
  options: { perMinute: number; statsPerMinute: number; redis?: Redis },
): Promise<void> {
  const group = (req: FastifyRequest) => req.routeOptions.config?.rateLimitGroup ?? 'default';
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: 60_000,
    ...(options.redis ? { store: redisFallbackStore(app, options.redis) } : {}),
    skipOnError: false,
    max: (req) => (group(req) === 'stats' ? options.statsPerMinute : options.perMinute),
    keyGenerator: (req) => {
      const g = group(req);
      if (g === 'stats') return `stats:ip:${req.ip}`;
      return req.auth ? `acct:${req.auth.userRef}` : `ip:${req.ip}`;
    },
    allowList: (req) => group(req) === 'none',
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    errorResponseBuilder: (_req, context) => {
      const err = new Error('Too Many Attempts.') as Error & { statusCode: number; retryAfter: number };
      err.statusCode = 429;
      err.retryAfter = context.ttl;
      return err;
    },
  });
}
