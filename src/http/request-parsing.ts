import { isUtf8 } from 'node:buffer';
import { parse, unescape } from 'node:querystring';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { bodyErrorResponses } from './schemas.ts';

/**
 * How a request's query string and JSON body become text (docs/api-contract.md, "Text the service
 * refuses"). Both are bytes that must be UTF-8; left to the defaults, bytes that are not were
 * kept raw (`%FF` in a query) or became U+FFFD (in a body) and reached a search or a stored name.
 */

/** What an undecodable query value becomes: an unpaired surrogate, which the text guard refuses (422 on the field). */
const UNDECODABLE = '\uD800';

function decodeQueryComponent(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    // A `%` that starts no escape (`%zz`) is taken as it is, as before; well-formed escapes of
    // bytes that are not UTF-8 (`%FF`, `%ED%A0%80`) are refused.
    return /%(?![0-9a-fA-F]{2})/.test(value) ? unescape(value) : UNDECODABLE;
  }
}

/** Fastify's `querystringParser`: repeated keys as arrays, `+` as a space, no limit on keys (the URL's is 16 KB). */
export function parseQueryString(query: string): Record<string, string | string[] | undefined> {
  return parse(query, '&', '=', { decodeURIComponent: decodeQueryComponent, maxKeys: 0 });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `true`: the route also takes an HTML form's body (`application/x-www-form-urlencoded`): the
     * recovery confirmation and the dev checkout, which pages of the service submit. Every other
     * route takes JSON only (the specification's "Content-Type: application/json"): a form body
     * there is 415, so a cross-site form cannot drive the API.
     */
    formBody?: boolean;
  }
}

/**
 * HTML form bodies, for the routes that opt in (`config.formBody`); elsewhere refused as an
 * unsupported media type (415, as any other type the API does not read).
 */
export async function installFormBodyParser(app: FastifyInstance): Promise<void> {
  // The service's one body limit (DECISIONS 7: over 1 MB is 413), as the JSON parser's (app.ts).
  await app.register(formbody, { bodyLimit: 1024 * 1024 });
  app.addHook('preParsing', async (request) => {
    if (request.routeOptions.config?.formBody === true) return;
    const type = request.headers['content-type'];
    if (typeof type === 'string' && /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) throw unsupportedMediaType();
  });
}

function unsupportedMediaType(): Error {
  return Object.assign(new Error('Unsupported Content-Type: send application/json.'), {
    code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
    statusCode: 415,
  });
}

/** The error code of a JSON body refused for a prototype-poisoning key (error-handler.ts answers 400). */
export const FORBIDDEN_JSON_KEY = 'REGWATCH_FORBIDDEN_JSON_KEY';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * JSON bodies (sent as `application/json` or `text/plain`): an empty body is no body (many clients send `Content-Type: application/json` on a
 * DELETE or a bodiless POST), so a route that takes none answers as without the header, and one
 * that needs one says which fields are missing (422). A body that is not UTF-8 is not JSON (400,
 * RFC 8259). Everything else goes to Fastify's own parser (prototype poisoning refused: 400 naming
 * the key, FORBIDDEN_JSON_KEY). Every route that can be sent a body documents these answers (400, 413,
 * 415) in the OpenAPI document.
 */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function installJsonBodyParser(app: FastifyInstance): void {
  // Documented wherever a body is read: a route with a body schema, and every POST, PUT, PATCH or
  // DELETE without one (a body sent to it is parsed all the same, so `{bad` is a 400 there too).
  app.addHook('onRoute', (route) => {
    const schema = route.schema as (Record<string, unknown> & { body?: unknown; hide?: boolean; response?: object }) | undefined;
    if (!schema || schema.hide) return;
    const methods = [route.method].flat();
    if (!schema.body && !methods.some((m) => BODY_METHODS.has(m))) return;
    route.schema = { ...schema, response: { ...bodyErrorResponses(), ...(schema.response ?? {}) } };
  });
  // No body where the route takes an object: validated as an empty object, so that the 422 names
  // the missing fields ("The name field is required.") rather than saying the body is not an object.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && (request.routeOptions.schema as { body?: { type?: unknown } } | undefined)?.body?.type === 'object')
      request.body = {};
    done();
  });
  // `text/plain` is also what an HTML form with `enctype="text/plain"` sends, with no CORS
  // preflight, and such a form can spell a JSON object. A route that needs a token is out of its
  // reach (a form cannot send one); a route that needs none (registration, init, recovery) reads
  // `application/json` only, so another site's page cannot drive it from its visitors' browsers.
  app.addHook('preParsing', async (request) => {
    if ((request.routeOptions.config?.auth ?? 'none') !== 'none' || !BODY_METHODS.has(request.method)) return;
    const type = request.headers['content-type'];
    if (typeof type === 'string' && /^\s*text\/plain\s*(;|$)/i.test(type)) throw unsupportedMediaType();
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // `text/plain` is read as JSON too: it is what `fetch` sends a string body as when no
  // Content-Type is set, and a body that is not JSON is the same 400 either way (DECISIONS 7).
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(
        Object.assign(new Error('The request body is not UTF-8.'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }),
        undefined,
      );
      return;
    }
    const text = bytes.toString('utf8');
    void parseJson(request, text, (error, parsed) => {
      if (error === null) return done(null, parsed);
      // Valid JSON refused for a `__proto__` key (or `constructor.prototype`) is said so, not
      // called "not valid JSON" (the failure path only: JSON.parse keeps such a key as data).
      if (isJson(text)) {
        return done(
          Object.assign(new Error('The request body has a forbidden key.'), { code: FORBIDDEN_JSON_KEY, statusCode: 400 }),
          undefined,
        );
      }
      done(error, undefined);
    });
  });
}
