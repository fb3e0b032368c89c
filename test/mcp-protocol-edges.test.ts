/**
 * The MCP endpoint's answers to malformed input (JSON-RPC codes, tool arguments of the wrong type)
 * and the SDK's search iterator at the API's page limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import type { CompanySpec } from './helpers/registry.ts';
import { runDay } from './watchlist-support.ts';

const db = await createTestDatabase();
const specs: CompanySpec[] = [700, 701, 702].map((n) => ({ n, city: 'Kraków' }));
await runDay(db.db, '2026-11-20', specs);
const t = await createTestApp({ db, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const alice = await createAccount(t);

let nextId = 1;
async function rpc(token: string, method: string, params?: unknown, app = t.app) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/mcp',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: nextId++, method, ...(params === undefined ? {} : { params }) },
  });
  return res;
}
async function callTool(token: string, name: string, args: unknown) {
  const res = await rpc(token, 'tools/call', { name, arguments: args });
  return { status: res.statusCode, body: res.json() };
}

test('search_companies: a non-string `activities` / `open_from` is a 422 tool error, not a 500', async () => {
  for (const args of [{ activities: 5 }, { activities: ['6201Z'] }, { open_from: 20260101 }]) {
    const { body } = await callTool(alice.master, 'search_companies', args);
    const r = body.result;
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.equal(r.structuredContent.error.status, 422, `${JSON.stringify(args)}: ${JSON.stringify(r.structuredContent)}`);
  }
});

test('JSON that is not a JSON-RPC 2.0 message is Invalid Request (-32600), as docs/mcp.md says, not a Parse error', async () => {
  for (const body of [
    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"error":5}',
  ]) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      headers: { ...bearer(alice.master), 'content-type': 'application/json', accept: 'application/json' },
      payload: body,
    });
    assert.equal(res.statusCode, 400, body);
    assert.equal(res.json().error.code, -32600, `${body} => ${res.body}`);
  }
});

test('initialize / tools/list with malformed params: invalid params (-32602), not an internal error (-32603) with a zod dump', async () => {
  for (const [method, params] of [
    ['initialize', {}],
    ['tools/list', { cursor: 5 }],
  ] as const) {
    const res = await rpc(alice.master, method, params);
    const { error } = res.json();
    assert.equal(error.code, -32602, `${method}: ${res.body}`);
    assert.doesNotMatch(error.message, /invalid_type/);
  }
});

test('SDK searchAll: a search with more than 10,000 results ends after the 500 pages the API serves instead of throwing', async () => {
  const { Regwatch } = await import('../packages/sdk/src/index.ts');
  const asked: number[] = [];
  // The API as docs/search.md describes it: total exact, last_page from it, page 501 refused with 422 while results lie beyond.
  const fakeFetch = async (req: Request) => {
    const page = Number(new URL(req.url).searchParams.get('page'));
    asked.push(page);
    if (page > 500)
      return Response.json({ message: 'The page field must not be greater than 500 …', errors: { page: ['…'] } }, { status: 422 });
    const results = Array.from({ length: 20 }, (_, i) => ({
      identifiers: [{ type: 'NIP', value: String(page * 100 + i) }],
      name: 'X',
      city: null,
      voivodeship: null,
      activity_start: null,
      activity_main: null,
      status: 'ACTIVE',
      contacts: [],
    }));
    return Response.json({
      status: 'success',
      data: { total: 12_345, per_page: 20, current_page: page, last_page: 618, data_as_of: null, results },
    });
  };
  const rw = new Regwatch({ baseUrl: 'http://regwatch.test', token: 'sk_api_x', fetch: fakeFetch });
  let n = 0;
  await assert.doesNotReject(async () => {
    for await (const _ of rw.companies.searchAll({ q: 'x' })) n++;
  });
  assert.equal(n, 10_000);
  assert.equal(Math.max(...asked), 500);
});
