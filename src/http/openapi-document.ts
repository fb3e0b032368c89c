/**
 * The last pass over the OpenAPI document @fastify/swagger builds from the routes' schemas
 * (app.ts, `transformObject`): what the route schemas cannot say on their own, the same for every
 * operation, so that a client generated in any language (openapi-generator, NSwag, Kiota) gets
 * stable method names, the meaning of each status and the headers the service sends.
 */

type Json = Record<string, unknown>;

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
  responses?: Record<string, { description?: string; headers?: Json }>;
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
  components?: Json & { headers?: Json };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/** What each status means on this API (docs/api-contract.md), instead of swagger's "Default Response". */
const STATUS_TEXT: Record<string, string> = {
  '200': 'Success.',
  '201': 'Created.',
  '202': 'Accepted: the work is queued.',
  '303': 'See Other: the form was handled; the page shows the outcome.',
  '400': 'The body is not valid JSON (or not UTF-8, or uses a forbidden key).',
  '401': 'The token is missing, malformed, invalid, revoked or expired: `{error, code: "UNAUTHORIZED"}`.',
  '402': 'Too few credits: `{message, code: "INSUFFICIENT_CREDITS", balance, required}`; nothing was done or charged.',
  '403': 'This operation requires the Master Token: `{error, code: "FORBIDDEN"}`.',
  '404': 'Not found: `{message}`.',
  '405': 'The method is not supported on this path (see `Allow`).',
  '409': 'The resource is not in a state that allows this: `{message}`.',
  '413': 'The body is larger than 1 MB.',
  '415': 'Unsupported Content-Type: send application/json.',
  '422': 'Validation failed: `{message, errors: {field: [messages]}}`; nothing was changed.',
  '429': 'Too many requests: wait for `Retry-After` seconds.',
  '500': 'Unexpected failure: `{message: "Server Error"}` (the cause is logged with the request id).',
  '502': 'A registry could not be reached: `{message}`.',
  '503': 'Temporarily unavailable: `{message}`; try again shortly.',
};

const HEADERS: Json = {
  RequestId: {
    description: 'The request id (the one sent, if it was 1 to 64 letters, digits, `_` or `-`); quoted in logs.',
    schema: { type: 'string' },
  },
  RateLimitLimit: { description: 'Requests allowed in the current minute.', schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests left in the current minute.', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Seconds until the current minute ends.', schema: { type: 'integer' } },
  RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
  CreditsCharged: { description: 'Credits this request took (absent when it took none).', schema: { type: 'integer' } },
  CreditsRemaining: { description: 'The balance after the charge (absent when nothing was charged).', schema: { type: 'integer' } },
};
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** `GET /api/v1/tokens/{token_ref}/rotate` → `postTokensByTokenRefRotate`: stable while the path is. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const camel = (param ? param[1]! : segment)
        .split(/[-_.]/)
        .filter(Boolean)
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
      return param ? `By${camel}` : camel;
    });
  return method.toLowerCase() + words.join('');
}

/**
 * A JSON Schema's `examples` (an array, which TypeBox writes) is not an OpenAPI 3.0 Schema Object
 * keyword: the first becomes `example`. @fastify/swagger converts it on plain properties but not
 * inside an `anyOf` (a nullable value). Media-type and parameter `examples` are maps, left alone.
 */
function singularExamples(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) singularExamples(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Json;
  if (Array.isArray(o.examples)) {
    if (o.example === undefined && o.examples.length > 0) o.example = o.examples[0];
    delete o.examples;
  }
  for (const value of Object.values(o)) singularExamples(value);
}

/**
 * - A query parameter with a default (`page`, `per_page`) is filled in by validation when absent,
 *   so the TypeBox property is not optional and the document would call it required: it says
 *   optional, as a client may leave it out.
 * - Every operation gets an operationId (operationIdOf), `security: []` when it takes no
 *   credential, every response the meaning of its status
 *   and the headers the service sends with it: the request id and the rate limit's on every
 *   answer of /api/v1, `Retry-After` on a 429, the credits' headers on a priced route's 2xx.
 */
export function finishOpenApiDocument<T extends OpenApiDocument>(doc: T): T {
  singularExamples(doc.paths);
  singularExamples(doc.components);
  doc.components = { ...(doc.components ?? {}), headers: { ...(doc.components?.headers ?? {}), ...HEADERS } };
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    const api = path.startsWith('/api/v1/');
    for (const [method, op] of Object.entries(operations)) {
      if (!METHODS.has(method)) continue;
      for (const p of op.parameters ?? []) if (p.in === 'query' && p.schema?.default !== undefined) p.required = false;
      op.operationId ??= operationIdOf(method, path);
      // A route that takes no credential says so (an empty list), rather than leaving it unsaid.
      op.security ??= [];
      const priced = op.responses?.['402'] !== undefined;
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (response.description === undefined || response.description === 'Default Response')
          response.description = STATUS_TEXT[status] ?? response.description ?? 'Response.';
        if (!api) continue;
        const headers: Json = {
          'X-Request-Id': ref('RequestId'),
          'X-RateLimit-Limit': ref('RateLimitLimit'),
          'X-RateLimit-Remaining': ref('RateLimitRemaining'),
          'X-RateLimit-Reset': ref('RateLimitReset'),
        };
        if (status === '429') headers['Retry-After'] = ref('RetryAfter');
        if (priced && status.startsWith('2')) {
          headers['X-Credits-Charged'] = ref('CreditsCharged');
          headers['X-Credits-Remaining'] = ref('CreditsRemaining');
        }
        response.headers = { ...headers, ...(response.headers ?? {}) };
      }
    }
  }
  return doc;
}
