import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { readOpenApiDocument } from '../scripts/openapi-document.ts';
import { operationIdOf } from '../src/http/openapi-document.ts';

/**
 * The served OpenAPI document, as a client generator in another language reads it: valid
 * OpenAPI 3.0.3 with nothing for a linter to warn about (Redocly's recommended rules), a stable
 * operationId on every operation, the meaning of every status, and the headers the service sends.
 */

type Doc = {
  paths: Record<
    string,
    Record<string, { operationId?: string; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>
  >;
};

test('the document is valid OpenAPI 3.0 with no linter warning (Redocly, recommended rules)', async () => {
  const doc = await readOpenApiDocument();
  // The licence is the business's to state, not the document's; /health has no 4xx to give.
  const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } } as never);
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config } as never);
  const shown = problems
    .filter((p) => !(p.ruleId === 'operation-4xx-response' && p.location[0]?.pointer === '#/paths/~1health/get/responses'))
    .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
  assert.deepEqual(shown, []);
  assert.ok(!JSON.stringify(doc).includes('"examples":['), 'no JSON Schema `examples` arrays in a 3.0 document');
});

test('every operation has a unique operationId, every response a meaning; the rate limit, request id and credits headers are declared', async () => {
  const doc = (await readOpenApiDocument()) as Doc;
  const ids = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.ok(op.operationId, `${method} ${path}`);
      assert.ok(!ids.has(op.operationId), `unique: ${op.operationId}`);
      ids.add(op.operationId);
      for (const [status, r] of Object.entries(op.responses)) {
        assert.notEqual(r.description, 'Default Response', `${method} ${path} ${status}`);
        if (!path.startsWith('/api/v1/')) continue;
        assert.ok(r.headers?.['X-Request-Id'] && r.headers['X-RateLimit-Remaining'], `${method} ${path} ${status}: headers`);
        if (status === '429') assert.ok(r.headers['Retry-After'], `${method} ${path}: Retry-After`);
      }
    }
  }
  const snapshot = doc.paths['/api/v1/companies/snapshot']!.post!;
  assert.equal(snapshot.operationId, 'postCompaniesSnapshot');
  assert.ok(snapshot.responses['200']!.headers!['X-Credits-Charged'], 'a priced route declares its credits headers');
  assert.equal(doc.paths['/api/v1/tokens']!.get!.responses['200']!.headers!['X-Credits-Charged'], undefined, 'a free one does not');
  assert.equal(
    operationIdOf('post', '/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry'),
    'postWebhooksByIdDeliveriesByDeliveryIdRetry',
  );
  assert.equal(operationIdOf('get', '/api/v1/dictionaries/legal-forms'), 'getDictionariesLegalForms');
});

test('every operation lists the answers every request can get: 429 and 500, and 400, 413 and 415 wherever a body can be sent', async () => {
  const doc = (await readOpenApiDocument()) as Doc;
  const missing: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/v1/') || path === '/api/v1/mcp') continue;
    for (const [method, op] of Object.entries(ops)) {
      const need = ['429', '500', ...(['post', 'put', 'patch', 'delete'].includes(method) ? ['400', '413', '415'] : [])];
      for (const status of need) if (!op.responses[status]) missing.push(`${method} ${path} ${status}`);
    }
  }
  assert.deepEqual(missing, []);
});
