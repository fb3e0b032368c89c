import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';

/** A price set to 0 in PRICES is described as free, in the OpenAPI document and in the MCP tools. */
test('a price of 0 reads "free" in the OpenAPI document and in the MCP tool descriptions', async () => {
  const t = await createTestApp({ env: { PRICES: JSON.stringify({ 'companies.search': 0 }) } });
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const search = doc.paths['/api/v1/companies/search'].get.description as string;
  assert.match(search, /\*\*Price:\*\* free \(`companies\.search` is priced at 0 on this service\)\./);
  const snapshot = doc.paths['/api/v1/companies/snapshot'].post.description as string;
  assert.match(snapshot, /\*\*Price:\*\* 1 credit per successful request/);

  const a = await createAccount(t);
  const list = await t.app.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: { ...bearer(a.master), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  assert.equal(list.statusCode, 200, list.body);
  const tools = new Map((list.json().result.tools as { name: string; description: string }[]).map((x) => [x.name, x.description]));
  assert.match(tools.get('search_companies')!, /Price: free \(`companies\.search` is priced at 0 on this service\)\./);
  assert.match(tools.get('get_company')!, /Price: 1 credit /);
});
