import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';

/**
 * Shared parts of the fuzz tests (test/fuzz-*.test.ts): hostile values, the routes of the app's
 * own OpenAPI document (so a route added later is fuzzed without editing a test) and the one
 * property they all check: never a 5xx, and an error body in the shape the specification fixes.
 */

/** Fixed, so a run is repeatable; FUZZ_SEED=<n> explores another part of the space. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 19);

/** Any UTF-16 code units, lone surrogates included (fast-check's `unit: 'binary'` is ~100 times slower to generate). */
export const codeUnitString = (maxLength: number) =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((units) => String.fromCharCode(...units));

export const hostileString = fc.oneof(
  fc.string({ maxLength: 300 }),
  // Text PostgreSQL refuses inside an otherwise valid value (long enough for a minLength).
  fc
    .tuple(fc.string({ maxLength: 20 }), fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff'), fc.string({ maxLength: 20 }))
    .map(([a, bad, b]) => `val${a}${bad}${b}`),
  codeUnitString(40),
  fc.constantFrom(
    "'; DROP TABLE accounts; --",
    '" OR 1=1 --',
    '<script>alert(1)</script>',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff',
    'x\udbff',
    '\uFFFF',
    '\uFEFF',
    '😀'.repeat(100),
    'a'.repeat(5000),
    '../../etc/passwd',
    '${7*7}',
    '{{constructor.constructor("x")()}}',
    '%00',
    '\r\nX-Injected: 1',
    'sk_live_' + 'A'.repeat(40),
    'NaN',
    '-1',
    '1e309',
    'true',
    'null',
    '__proto__',
    '',
    ' ',
    '\t\n',
  ),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(
        hostileString,
        fc.constantFrom('__proto__', 'constructor', 'email', 'name', 'token', 'identifier_type', 'identifier_value', 'package_slug'),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** A JSON body for the route: any hostile value, or an object of its own fields (and a stray one) holding hostile values. */
export function hostileBody(route: DocumentedRoute): fc.Arbitrary<unknown> {
  if (route.bodyFields.length === 0) return hostileValue;
  const fields = fc.dictionary(fc.oneof(fc.constantFrom(...route.bodyFields), hostileString), fc.oneof(hostileString, hostileValue), {
    minKeys: 1,
    maxKeys: route.bodyFields.length + 1,
  });
  return fc.oneof(hostileValue, fields);
}

export interface DocumentedRoute {
  method: string;
  /** OpenAPI form: `/api/v1/tokens/{token_ref}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: boolean;
  /** Top-level property names of the JSON body schema, so hostile values land on real fields. */
  bodyFields: string[];
  /** Documents an HTML page for some status (the browser pages): an HTML error is its own. */
  producesHtml: boolean;
}

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export async function documentedRoutes(app: FastifyInstance): Promise<DocumentedRoute[]> {
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  const routes: DocumentedRoute[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = op.parameters ?? [];
      routes.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        hasBody: op.requestBody !== undefined,
        bodyFields: Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {}),
        producesHtml: Object.values(op.responses ?? {}).some((r) => r.content?.['text/html'] !== undefined),
      });
    }
  }
  return routes;
}

/**
 * Never a 5xx; an error is JSON (an HTML page only on a route that documents one) in the
 * specification's shape for its status: 401/403 `{error, code}`, 402 the credits body, 422
 * `{message, errors: {field: [text]}}`, any other `{message}`.
 */
export function assertErrorShape(res: { status: number; contentType: string; body: string }, where: string, route?: DocumentedRoute): void {
  const { status, contentType, body } = res;
  if (process.env.FUZZ_DEBUG) console.log(where, status, body.slice(0, 300));
  assert.ok(status < 500, `${where}: ${status} ${body.slice(0, 500)}`);
  if (status < 400) return;
  if (contentType.startsWith('text/html') && route?.producesHtml) return;
  assert.match(contentType, /^application\/json/, `${where}: ${status} ${contentType} ${body.slice(0, 200)}`);
  const b = JSON.parse(body) as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  const shaped = `${where}: ${status} ${body.slice(0, 500)}`;
  if (status === 401 || status === 403) {
    assert.equal(keys, 'code,error', shaped);
    assert.equal(typeof b.error, 'string', shaped);
    assert.equal(b.code, status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', shaped);
  } else if (status === 402) {
    assert.equal(keys, 'balance,code,message,required', shaped);
    assert.equal(b.code, 'INSUFFICIENT_CREDITS', shaped);
  } else if (status === 422) {
    assert.equal(keys, 'errors,message', shaped);
    assert.equal(typeof b.message, 'string', shaped);
    for (const [k, v] of Object.entries(b.errors as object)) {
      assert.ok(Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === 'string'), `${shaped}: errors.${k}`);
    }
  } else {
    assert.equal(keys, 'message', shaped);
    assert.equal(typeof b.message, 'string', shaped);
  }
}

/** assertErrorShape over an inject() response. */
export function assertInjectedErrorShape(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  where: string,
  route?: DocumentedRoute,
): void {
  assertErrorShape({ status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body }, where, route);
}
