/**
 * company_events and watchlist_events take from_date and to_date as GET /companies/events and
 * GET /watchlist/events take them: an empty value is no bound (an agent filling every optional
 * argument sends ""), and a bad date is refused with the route's own message. The tools' schema
 * refused "" with its date format, which the routes had stopped doing. Driven by the official
 * SDK client over Streamable HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer } from './helpers/app.ts';
import { mcpFixture } from './helpers/mcp.ts';
import { nipFor } from './helpers/registry.ts';
import { runDay } from './watchlist-support.ts';

const { t, alice, client } = await mcpFixture('date-filters', [990]);
// A second day with the company moved: its events to filter.
await runDay(t.db.db, '2026-11-21', [{ n: 990, city: 'Gdańsk' }]);

async function tool(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { isError: r.isError === true, body: r.structuredContent as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const company = { identifier_type: 'NIP', identifier_value: nipFor(990) };

async function rest(url: string, query: Record<string, string>) {
  return t.app.inject({ method: 'GET', url: `${url}?${new URLSearchParams(query)}`, headers: bearer(alice.master) });
}

test('company_events: empty dates are no bound, as on GET /companies/events', async () => {
  const unbounded = await tool('company_events', company);
  assert.equal(unbounded.isError, false, JSON.stringify(unbounded.body));
  assert.ok(unbounded.body.meta.total > 0, 'the company has events to filter');
  const empty = await tool('company_events', { ...company, from_date: '', to_date: '' });
  assert.equal(empty.isError, false, JSON.stringify(empty.body));
  assert.equal(empty.body.meta.total, unbounded.body.meta.total);
  const route = await rest('/api/v1/companies/events', { ...company, from_date: '', to_date: '' });
  assert.equal(route.statusCode, 200, route.body);
  assert.equal(route.json().meta.total, empty.body.meta.total);
});

test('watchlist_events: empty dates are no bound, as on GET /watchlist/events', async () => {
  const empty = await tool('watchlist_events', { from_date: '', to_date: '' });
  assert.equal(empty.isError, false, JSON.stringify(empty.body));
  const route = await rest('/api/v1/watchlist/events', { from_date: '', to_date: '' });
  assert.equal(route.statusCode, 200, route.body);
  assert.equal(empty.body.meta.total, route.json().meta.total);
});

test('a bad date is the route’s 422 with its message, and a date is still checked', async () => {
  for (const [from_date, to_date] of [
    ['2026-02-30', ''],
    ['', '2026-1-1'],
    ['2026-11-21', '2026-11-20'],
  ] as const) {
    const r = await tool('company_events', { ...company, from_date, to_date });
    assert.equal(r.isError, true, `${from_date}..${to_date}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.status, 422);
    const route = await rest('/api/v1/companies/events', { ...company, from_date, to_date });
    assert.equal(route.statusCode, 422, route.body);
    assert.equal(r.body.error.message, route.json().message, `${from_date}..${to_date}`);
  }
  const bounded = await tool('company_events', { ...company, from_date: '2030-01-01' });
  assert.equal(bounded.isError, false, JSON.stringify(bounded.body));
  assert.equal(bounded.body.meta.total, 0);
});
