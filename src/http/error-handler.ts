import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import findMyWay from 'find-my-way';
import { STATUS_CODES } from 'node:http';
import {
  DomainError,
  ForbiddenError,
  InsufficientCreditsError,
  NotFoundError,
  TemporarilyUnavailableError,
  UnauthorizedError,
  UpstreamError,
  ValidationError,
  summarizeErrors,
} from '../lib/errors.ts';
import { validationErrorsFromAjv, withCheckErrors } from './validation.ts';
import { FORBIDDEN_JSON_KEY } from './request-parsing.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's checks that its body schema cannot express (a query with a name or an
     * identifier), run on a body the schema refused as well, so that a 422 says every problem at
     * once (DECISIONS 7). Given the raw body: it must take any value.
     */
    bodyChecks?: (body: unknown) => Record<string, string[]>;
  }
}

const pathOf = (url: string) => url.split('?')[0];

/** The specification's 404 text, naming the path (without the query) that names nothing. */
export function routeNotFoundMessage(url: string): string {
  return `The route ${pathOf(url)} could not be found.`;
}

/**
 * Maps every failure to the bodies of docs/api-contract.md and docs/authentication.md ("Other errors"). Nothing internal
 * ever reaches a client: a 500 says `Server Error`, and the cause is logged with the request id.
 */
/**
 * Returns the not-found handler (404, or 405 for a known route with another method) for the
 * caller to set once the rate limit is installed, so that unknown routes are limited and carry
 * its headers like every other answer (DECISIONS 7).
 */
export function installErrorHandling(app: FastifyInstance): {
  notFound: (request: FastifyRequest, reply: FastifyReply) => void;
  shadowedMethod: (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => void;
} {
  // A shadow router of every declared route, to tell "no such route" (404) from "no such method
  // on this route" (405) in the not-found handler.
  const shadow = findMyWay();
  const methodsByRoute = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      const key = route.url;
      let set = methodsByRoute.get(key);
      if (!set) {
        set = new Set();
        methodsByRoute.set(key, set);
        shadow.on('GET', key, () => {}, { url: key });
      }
      set.add(m);
    }
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = pathOf(request.url);
    const found = shadow.find('GET', path) as unknown as { store?: { url: string } } | null;
    const methods = found?.store ? methodsByRoute.get(found.store.url) : undefined;
    if (methods && !methods.has(request.method)) {
      void methodNotAllowed(request, reply, path, methods);
      return;
    }
    void reply.code(404).send({ message: routeNotFoundMessage(request.url) });
  };
  const methodNotAllowed = (request: FastifyRequest, reply: FastifyReply, path: string, methods: Set<string>) =>
    reply
      .code(405)
      .header('allow', [...methods].join(', '))
      .send({
        message: `The ${request.method} method is not supported for route ${path}. Supported methods: ${[...methods].join(', ')}.`,
      });

  /**
   * A static path that a parameter route also matches (`GET /tokens/verify` would be
   * `GET /tokens/:token_ref` with the ref `verify`) is the static route's, as with any other
   * method it lacks: 405 with its Allow, not the parameter route's answer. A preParsing hook, set
   * where the not-found handler is: after the rate limit (whose headers it then carries, its
   * onRequest hooks being done) and before authentication is enforced, as for any other 405.
   */
  const shadowedMethod = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    const routeUrl = request.routeOptions.url;
    // HEAD on a priced GET (Fastify adds one to every GET) would cost a credit and deliver no data,
    // or, free, answer 200 or 404 as a free lookup: neither, it is the 405 of a method the route lacks.
    if (request.method === 'HEAD' && request.routeOptions.config.price !== undefined && routeUrl !== undefined) {
      const methods = methodsByRoute.get(routeUrl);
      if (methods) return void methodNotAllowed(request, reply, pathOf(request.url)!, methods);
    }
    if (routeUrl === undefined || !routeUrl.includes(':')) return done(null, payload);
    const path = pathOf(request.url)!;
    const methods = methodsByRoute.get(path);
    if (methods === undefined || methods.has(request.method) || (request.method === 'HEAD' && methods.has('GET')))
      return done(null, payload);
    void methodNotAllowed(request, reply, path, methods);
  };

  app.setErrorHandler((error: FastifyError & { validation?: unknown[] }, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ValidationError) {
      return reply.code(422).send({ message: error.message, errors: error.errors });
    }
    if (error instanceof UnauthorizedError) {
      return reply.code(401).send({ error: error.message, code: 'UNAUTHORIZED' });
    }
    if (error instanceof ForbiddenError) {
      return reply.code(403).send({ error: error.message, code: 'FORBIDDEN' });
    }
    if (error instanceof InsufficientCreditsError) {
      return reply
        .code(402)
        .send({ message: error.message, code: 'INSUFFICIENT_CREDITS', balance: error.balance, required: error.required });
    }
    if (error instanceof NotFoundError) return reply.code(404).send({ message: error.message });
    if (error instanceof TemporarilyUnavailableError) return reply.code(503).send({ message: error.message });
    if (error instanceof UpstreamError) return reply.code(502).send({ message: error.message });
    if (error instanceof DomainError) {
      // A domain error without a mapping is a bug here, not the caller's fault.
      request.log.error({ err: error }, 'unmapped domain error');
      return reply.code(500).send({ message: 'Server Error' });
    }
    if (error.validation) {
      // An empty path id (`DELETE /tokens/`) names nothing: the unknown route's 404, as the
      // collection's path with a slash is.
      if (
        (error as { validationContext?: string }).validationContext === 'params' &&
        (error.validation as { keyword?: string }[]).every((e) => e.keyword === 'minLength')
      )
        return reply.code(404).send({ message: routeNotFoundMessage(request.url) });
      const context = (error as { validationContext?: string }).validationContext;
      const more = context === 'body' ? request.routeOptions.config?.bodyChecks?.(request.body) : undefined;
      const errors = withCheckErrors(validationErrorsFromAjv(error.validation as never, context), more);
      return reply.code(422).send({ message: summarizeErrors(errors), errors });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send({ message: 'The request body is not valid JSON.' });
      case FORBIDDEN_JSON_KEY:
        return reply.code(400).send({
          message: 'The request body uses a forbidden key: "__proto__", or "constructor" holding "prototype". Rename or remove it.',
        });
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send({ message: 'The request body is larger than the 1 MB limit.' });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send({ message: 'Unsupported Content-Type: send application/json.' });
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send({ message: 'The Content-Length header does not match the body.' });
      case 'FST_ERR_CTP_INVALID_TYPE':
        return reply.code(400).send({ message: 'The request body could not be read.' });
    }
    if (error.statusCode === 429) {
      return reply.code(429).send({ message: 'Too Many Attempts.' });
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own client errors (bad URL encoding, etc.): keep the status, plain message.
      return reply.code(error.statusCode).send({ message: error.message || 'Bad Request' });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ message: 'Server Error' });
  });
  return { notFound, shadowedMethod };
}

type Limiter = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Fastify's own answers before a route runs (its `frameworkErrors` option), in the specified
 * shape: a path that does not decode (`/tokens/%FF`, `%ED%A0%80` an encoded lone surrogate) or
 * a path parameter over the router's 100-character limit names nothing, so 404 as an unknown id.
 * No hook runs for these, so `limiter()` (the rate limit's handler, there once its plugin is
 * installed) counts the request and sets the limit headers; before authentication, per client IP.
 */
export function createFrameworkErrors(limiter: () => Limiter | undefined) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id).header('cache-control', 'no-store');
    if (error.code !== 'FST_ERR_BAD_URL' && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') {
      request.log.error({ err: error }, 'unhandled framework error');
      void reply.code(500).send({ message: 'Server Error' });
      return;
    }
    void (async () => {
      try {
        await limiter()?.(request, reply);
      } catch (e) {
        if ((e as { statusCode?: number }).statusCode === 429) return reply.code(429).send({ message: 'Too Many Attempts.' });
        request.log.error({ err: e }, 'rate limit failed');
        return reply.code(500).send({ message: 'Server Error' });
      }
      return reply.code(404).send({ message: routeNotFoundMessage(request.url) });
    })();
  };
}

/**
 * A request Node's HTTP parser refuses (a NUL or control byte in a header or the path, a header
 * block over the limit, a timeout) is answered on the socket, as Fastify's default handler does,
 * but with the specified `{message}` body instead of Fastify's own shape.
 */
export const clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']> = (error, socket) => {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request took too long to arrive.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request headers are too large.']
        : [400, 'The request is not valid HTTP.'];
  if (socket.writable) {
    const body = JSON.stringify({ message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
};
