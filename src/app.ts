import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { compose, type Composition, type Core, type PartOverrides } from './composition.ts';
import { setSecurityHeaders } from './http/security-headers.ts';
import { databaseHealth } from './http/health.ts';
import { validatorCompiler } from './http/ajv.ts';
import { installAuthEnforcement, installAuthResolution } from './http/auth.ts';
import { clientErrorHandler, createFrameworkErrors, installErrorHandling } from './http/error-handler.ts';
import { createMetricsRegistry, installMetrics } from './http/metrics.ts';
import { installPricing } from './http/pricing.ts';
import { installRateLimits } from './http/rate-limit.ts';
import { MAX_PATH_PARAM_LENGTH, sharedSchemas } from './http/schemas.ts';
import { finishOpenApiDocument, type OpenApiDocument } from './http/openapi-document.ts';
import { installFormBodyParser, installJsonBodyParser, parseQueryString } from './http/request-parsing.ts';
import { installTextGuard } from './http/text-guard.ts';

export interface AppOptions {
  /** Set: rate-limit counters live in Redis, shared by every API process. */
  redis?: Redis;
  /** The process's metrics (made here when absent), and whether GET /metrics is on the API's port (default true; false with METRICS_PORT). */
  metrics?: { registry: Registry; serve: boolean };
}

export const API_PREFIX = '/api/v1';

/**
 * The HTTP service over the parts the composition root built (src/composition.ts): the hooks
 * every request goes through (request id, auth, rate limit, pricing, metrics, errors), the
 * OpenAPI document, and every module's routes under /api/v1. The caller closes the composition.
 */
/** How long a request may take to arrive, headers and body (Node's `server.requestTimeout`). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long a kept-alive connection stays open after its last answer once the server closes (buildApp). */
const KEPT_ALIVE_GRACE_MS = 1_000;

export async function buildApp(parts: Composition, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, db } = parts;
  /** The rate limit's handler for requests no route takes (set once its plugin is installed, below). */
  let limitUnrouted: ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | undefined;
  const app = Fastify({
    loggerInstance: parts.logger as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // A request whose headers and body have not all arrived in 30 s is answered 408 and its
    // connection closed (Fastify's default, 0, let a client that sends a byte now and then hold a
    // connection for ever). Node checks every 30 s, so it goes after 30 to 60 s.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // A hop count, not `true`: trusting every hop would take the left-most X-Forwarded-For entry,
    // which the client writes itself (a load balancer appends to what it is sent).
    trustProxy: config.trustProxy > 0 ? (_address: string, hop: number) => hop < config.trustProxy : false,
    ajv: { customOptions: { allErrors: true } },
    // Closing is answered below, in the service's shape and with its headers.
    return503OnClosing: false,
    frameworkErrors: createFrameworkErrors(() => limitUnrouted),
    clientErrorHandler,
    routerOptions: { querystringParser: parseQueryString, maxParamLength: MAX_PATH_PARAM_LENGTH },
  });
  app.setValidatorCompiler(validatorCompiler);

  for (const s of sharedSchemas) app.addSchema(s);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    setSecurityHeaders(request, reply);
    // API answers are per token and some carry a secret once (a token's plaintext, a webhook
    // secret): no cache or proxy keeps them. The OpenAPI document may be cached.
    if (!reply.hasHeader('cache-control') && request.url.startsWith('/api/v1/') && !request.url.startsWith('/api/v1/openapi.json'))
      reply.header('cache-control', 'no-store');
  });
  const { notFound, shadowedMethod } = installErrorHandling(app);
  installJsonBodyParser(app);
  installTextGuard(app);

  await installFormBodyParser(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'regwatch API',
        version: '1.0.0',
        description:
          'Polish company registry search, company snapshots and daily change monitoring. Authenticate with `Authorization: Bearer <token>`.\n\n' +
          'Client library: the typed TypeScript SDK `@regwatch/sdk` (`packages/sdk` and `docs/sdk.md` in the repository): one method per operation, ' +
          'page iterators, the `after_id` feed as a stream, retries on 429/503, typed errors and `verifyWebhook`.\n\n' +
          `**AI agents (MCP):** the same operations as Model Context Protocol tools at \`${config.publicBaseUrl}/api/v1/mcp\` (Streamable HTTP, the same Bearer token, prices and rate limits), ` +
          'or over stdio with `npx regwatch mcp` (`REGWATCH_URL`, `REGWATCH_TOKEN`). Client set-up (Claude, Cursor, VS Code), the tools and their prices: docs/mcp.md.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Master Token (sk_live_…) or API token (sk_api_…)' } },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? finishOpenApiDocument(documentObject.openapiObject as OpenApiDocument)
        : documentObject.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  const { authenticator } = parts.modules.tokens;
  installAuthResolution(app, { authenticator });
  await installRateLimits(app, {
    perMinute: config.rateLimit.perMinute,
    statsPerMinute: config.rateLimit.statsPerMinute,
    redis: options.redis,
  });
  // Set after the rate limit, whose hooks then cover unknown routes as well.
  limitUnrouted = app.rateLimit();
  // Once the server closes (SIGTERM), a request that still arrives on a kept-alive connection is
  // 503 `{message}`, with the headers of every answer (request id, rate limit) and
  // `Connection: close`; requests already under way finish (docs/deployment.md).
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // A connection whose last request is answered while the server closes is ended a moment later:
  // Node's server.close() ends only the connections idle at its start, so a client that kept one
  // (any keep-alive agent) held the server open, and the stop with it, until the grace limit killed
  // the process (found by an audit of the shutdown). Within the moment, a request the client sends
  // on it is still answered (503 below, which closes the connection). Requests are counted per
  // socket as Node parses them (its 'request' event, before any hook).
  const pending = new WeakMap<object, number>();
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    pending.set(socket, (pending.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (pending.get(socket) ?? 1) - 1;
      pending.set(socket, left);
      if (closing && left === 0)
        setTimeout(() => pending.get(socket) === 0 && !socket.destroyed && socket.end(), KEPT_ALIVE_GRACE_MS).unref();
    });
  });
  // preParsing: after every onRequest hook, the route's rate limit included, so its headers are set.
  app.addHook('preParsing', async (_request, reply) => {
    if (!closing) return;
    return reply
      .code(503)
      .header('connection', 'close')
      .header('retry-after', '1')
      .send({ message: 'The server is shutting down: retry the request.' });
  });
  app.setNotFoundHandler({ preHandler: limitUnrouted }, notFound);
  app.addHook('preParsing', shadowedMethod as never);
  installAuthEnforcement(app, { authenticator });
  installPricing(app, { db, prices: config.prices, clock: parts.clock });
  installMetrics(app, {
    registry: options.metrics?.registry ?? createMetricsRegistry({ db, clock: parts.clock, sources: parts.modules.sources.service }),
    serve: options.metrics?.serve ?? true,
  });

  app.get(
    '/health',
    {
      config: { auth: 'none', rateLimitGroup: 'none' },
      schema: {
        tags: ['Service'],
        summary: 'Liveness and database readiness',
        description:
          '200 `{status: "ok"}` once the database answers and is migrated; 503 while it cannot be reached. No credential and no rate limit: for load balancers and orchestrators.',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: Type.Object({ status: Type.String(), message: Type.String() }) },
      },
    },
    async (_req, reply) => {
      const health = await databaseHealth(db);
      return reply.code(health.code).send(health.body);
    },
  );

  await app.register(
    async (api) => {
      api.get('/openapi.json', { config: { auth: 'none', rateLimitGroup: 'none' }, schema: { hide: true } }, async () => app.swagger());
      for (const module of parts.list) if (module.routes) await api.register(module.routes);
    },
    { prefix: API_PREFIX },
  );
  app.addHook('onReady', async () => {
    for (const module of parts.list) await module.startServing?.();
  });

  return app;
}

/**
 * An HTTP app over parts of its own, closed with it: for a process that serves only HTTP
 * (tests, benchmarks). The server composes once and shares the parts with its worker instead.
 */
export async function buildStandaloneApp(core: Core, options: AppOptions & { overrides?: PartOverrides } = {}): Promise<FastifyInstance> {
  const parts = compose(core, options.overrides);
  try {
    const app = await buildApp(parts, options);
    app.addHook('onClose', async () => parts.close());
    return app;
  } catch (e) {
    await parts.close();
    throw e;
  }
}
