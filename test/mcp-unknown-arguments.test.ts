/**
 * An argument no tool names is ignored, as the REST routes ignore an unknown parameter
 * (docs/mcp.md: "Arguments are the REST parameters under the same names"): `search_companies`
 * refused a non-string one (`limit: 10`, as agents add) with 422 "The limit field must be a
 * string." (found by an audit). Driven by the official SDK client over Streamable HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer } from './helpers/app.ts';
import { mcpFixture } from './helpers/mcp.ts';
import { nipFor } from './helpers/registry.ts';

const { t, alice, client } = await mcpFixture('unknown-arguments', [960, 961, 962]);

async function tool(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const error = (r.structuredContent as { error?: { status: number; message: string } }).error;
  return r.isError ? { status: error!.status, message: error!.message } : { status: 200 };
}
async function rest(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) {
  const r = await t.app.inject({ method, url: `/api/v1${url}`, headers: bearer(alice.master), ...(payload ? { payload } : {}) });
  return r.statusCode >= 400 ? { status: r.statusCode, message: r.json().message as string } : { status: 200 };
}

test('search_companies: an argument neither the tool nor the route knows is ignored, as the route ignores it (and as every other tool does)', async () => {
  assert.equal((await rest('GET', '/companies/search?limit=10')).status, 200, 'REST: "Unknown parameters are ignored."');
  assert.equal((await tool('get_company', { identifier_type: 'NIP', identifier_value: nipFor(962), limit: 10 })).status, 200);
  assert.equal((await tool('list_watched', { limit: 10 })).status, 200);
  assert.deepEqual(await tool('search_companies', { limit: 10 }), { status: 200 });
});

test('search_companies: an unknown argument beside real filters changes nothing; a filter of the wrong type is still refused', async () => {
  const plain = (await client.callTool({ name: 'search_companies', arguments: { city: 'Kraków' } })) as CallToolResult;
  const extra = (await client.callTool({
    name: 'search_companies',
    arguments: { city: 'Kraków', limit: 10, sort: ['x'] },
  })) as CallToolResult;
  assert.deepEqual(
    (extra.structuredContent as { data: { total: number } }).data.total,
    (plain.structuredContent as { data: { total: number } }).data.total,
  );
  assert.deepEqual(await tool('search_companies', { city: 5 }), { status: 422, message: 'The city field must be a string.' });
});
