/**
 * Every tool taking `identifier_type` takes it in any letter case, as its REST route does
 * (src/http/identifier-type.ts): get_company and company_events answered `nip` with 422 "The
 * selected identifier type is invalid." where POST /companies/snapshot and GET /companies/events
 * serve it. Driven by the official SDK client over Streamable HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer } from './helpers/app.ts';
import { mcpFixture } from './helpers/mcp.ts';
import { nipFor } from './helpers/registry.ts';

const { t, alice, client } = await mcpFixture('identifier-type', [980, 981]);

async function tool(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { isError: r.isError === true, body: r.structuredContent as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const TYPES = ['nip', ' Nip ', 'NIP'];

test('get_company and company_events: a lower-case identifier_type is served, as the routes serve it', async () => {
  for (const type of TYPES) {
    const rest = await t.app.inject({
      method: 'POST',
      url: '/api/v1/companies/snapshot',
      headers: bearer(alice.master),
      payload: { identifier_type: type, identifier_value: nipFor(980) },
    });
    assert.equal(rest.statusCode, 200, `REST snapshot ${JSON.stringify(type)}: ${rest.body}`);
    const company = await tool('get_company', { identifier_type: type, identifier_value: nipFor(980) });
    assert.equal(company.isError, false, `${JSON.stringify(type)}: ${JSON.stringify(company.body)}`);
    assert.deepEqual(company.body.data, rest.json().data);

    const query = new URLSearchParams({ identifier_type: type, identifier_value: nipFor(981) });
    const restEvents = await t.app.inject({ method: 'GET', url: `/api/v1/companies/events?${query}`, headers: bearer(alice.master) });
    assert.equal(restEvents.statusCode, 200, `REST events ${JSON.stringify(type)}: ${restEvents.body}`);
    const events = await tool('company_events', { identifier_type: type, identifier_value: nipFor(981) });
    assert.equal(events.isError, false, `${JSON.stringify(type)}: ${JSON.stringify(events.body)}`);
    assert.equal(events.body.data.company.identifier_type, 'NIP');
    assert.equal(events.body.meta.total, restEvents.json().meta.total);

    const dry = await tool('get_company', { identifier_type: type, identifier_value: nipFor(980), dry_run: true });
    assert.equal(dry.body.credits, 1, 'dry_run checks the arguments as the call does');
  }
});

test('watch_companies and unwatch_companies: a lower-case identifier_type is taken, as the add and remove routes take it', async () => {
  const watch = await tool('watch_companies', { identifier_type: 'nip', identifier_value: [nipFor(980)] });
  assert.equal(watch.isError, false, JSON.stringify(watch.body));
  assert.equal(watch.body.identifier_type, 'NIP');
  const dry = await tool('watch_companies', { identifier_type: 'krs', identifier_value: ['1'], dry_run: true });
  assert.equal(dry.isError, false, JSON.stringify(dry.body));
  const unwatch = await tool('unwatch_companies', { identifier_type: 'nip', identifier_value: [nipFor(980)] });
  assert.equal(unwatch.isError, false, JSON.stringify(unwatch.body));
});

test('a type that is none in any case is still the route’s 422', async () => {
  const r = await tool('get_company', { identifier_type: 'pesel', identifier_value: '12345678901' });
  assert.equal(r.isError, true);
  assert.equal(r.body.error.status, 422);
  const rest = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/snapshot',
    headers: bearer(alice.master),
    payload: { identifier_type: 'pesel', identifier_value: '12345678901' },
  });
  assert.equal(r.body.error.message, rest.json().message);
});
