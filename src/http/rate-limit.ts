import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `stats`: 10 a minute per client IP; `none`: not limited (health, docs); default 180 a minute. */
    rateLimitGroup?: 'default' | 'stats' | 'none';
  }
}

/**
 * 180 requests a minute per account (per client IP when unauthenticated), 10 a minute per IP on
 * the stats routes. Counters live in memory, or in Redis when given, so that several API
 * processes share one limit. Every limited response (unknown routes included: app.ts sets the
 * not-found handler after this plugin, whose hooks then cover it) carries X-RateLimit-Limit and
 * X-RateLimit-Remaining; a 429 also Retry-After.
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
    redis: options.redis,
    nameSpace: 'regwatch-rl:',
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
