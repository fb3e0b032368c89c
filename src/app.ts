import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { Clock } from './lib/clock.ts';
import { validatorCompiler } from './http/ajv.ts';
import { installAuthEnforcement, installAuthResolution } from './http/auth.ts';
import { installErrorHandling } from './http/error-handler.ts';
import { installMetrics } from './http/metrics.ts';
import { installPricing } from './http/pricing.ts';
import { installRateLimits } from './http/rate-limit.ts';
import { sharedSchemas } from './http/schemas.ts';
import { accountRoutes } from './modules/accounts/routes.ts';
import { createAccountsService } from './modules/accounts/service.ts';
import { tokenRoutes } from './modules/tokens/routes.ts';
import { createTokensService } from './modules/tokens/service.ts';
import { createUsageTracker, type UsageTracker } from './modules/tokens/usage.ts';
import { extraRoutes, type ExtraRouteDeps } from './modules/index.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  /** Set: rate-limit counters live in Redis, shared by every API process. */
  redis?: Redis;
  /** Test seam: collaborators later modules need (payments, sources), passed through untouched. */
  extras?: Partial<ExtraRouteDeps>;
}

export const API_PREFIX = '/api/v1';

/** The one composition root: every route, hook and dependency of the HTTP service. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance & { usage: UsageTracker }> {
  const { config, db, clock } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    ajv: { customOptions: { allErrors: true } },
    return503OnClosing: true,
  });
  app.setValidatorCompiler(validatorCompiler);

  for (const s of sharedSchemas) app.addSchema(s);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandling(app);

  const usage = createUsageTracker(db, { onError: (e) => deps.logger.warn({ err: e }, 'token usage flush failed') });
  app.addHook('onClose', async () => usage.stop());

  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'regwatch API',
        version: '1.0.0',
        description: 'Polish company registry search, company snapshots and daily change monitoring. Authenticate with `Authorization: Bearer <token>`.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Master Token (sk_live_…) or API token (sk_api_…)' } } },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  installAuthResolution(app, { db, clock, usage });
  await installRateLimits(app, { perMinute: config.rateLimit.perMinute, statsPerMinute: config.rateLimit.statsPerMinute, redis: deps.redis });
  installAuthEnforcement(app, { clock, usage });
  installPricing(app, { db, prices: config.prices });
  installMetrics(app, { db });

  app.get('/health', {
    config: { auth: 'none', rateLimitGroup: 'none' },
    schema: { tags: ['Service'], summary: 'Liveness and database readiness', response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Type.Object({ status: Type.String(), message: Type.String() }) } },
  }, async (_req, reply) => {
    try {
      await sql`SELECT 1`.execute(db);
      return { status: 'ok' as const };
    } catch {
      return reply.code(503).send({ status: 'unavailable', message: 'The database is not reachable.' });
    }
  });

  const accounts = createAccountsService({ db, clock, publicBaseUrl: config.publicBaseUrl });
  const tokens = createTokensService({ db, clock, usage });

  await app.register(async (api) => {
    api.get('/openapi.json', { config: { auth: 'none', rateLimitGroup: 'none' }, schema: { hide: true } }, async () => app.swagger());
    await api.register(accountRoutes({ accounts }));
    await api.register(tokenRoutes({ tokens, clock }));
    await extraRoutes(api, { ...deps, usage, ...deps.extras });
  }, { prefix: API_PREFIX });

  return Object.assign(app, { usage }) as unknown as FastifyInstance & { usage: UsageTracker };
}
