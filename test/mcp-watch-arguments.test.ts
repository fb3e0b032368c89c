/**
 * watch_companies / unwatch_companies check their identifier list as POST /companies/add and
 * DELETE /companies/watched check their body (parseIdentifierList): the same 422 message and
 * errors for a value that is no identifier, a null one, a missing type, every bad value at once.
 * The tools' schema used to answer some of them first in its own words ("The identifier value
 * item 0 field must be a string." for the route's "The identifier value item 0 must be a
 * string."). Driven by the official SDK client over Streamable HTTP.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer } from './helpers/app.ts';
import { mcpFixture } from './helpers/mcp.ts';
import { nipFor } from './helpers/registry.ts';

const { t, alice, client } = await mcpFixture('watch-arguments', [970, 971]);

type Outcome = { status: number; message?: string; errors?: Record<string, string[]> };

async function tool(name: string, args: Record<string, unknown>): Promise<Outcome> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!r.isError) return { status: 200 };
  const { status, message, errors } = (r.structuredContent as { error: Outcome }).error;
  assert.equal((r.content[0] as { text: string }).text, message, 'the first text is the message');
  return { status, message, errors };
}
async function rest(method: 'POST' | 'DELETE', url: string, payload: object): Promise<Outcome> {
  const r = await t.app.inject({ method, url: `/api/v1${url}`, headers: bearer(alice.master), payload });
  if (r.statusCode < 400) return { status: 200 };
  const { message, errors } = r.json() as Outcome;
  return { status: r.statusCode, message, errors };
}

const BAD_BODIES: Record<string, unknown>[] = [
  { identifier_type: 'NIP', identifier_value: ['12345678901'] }, // a PESEL's 11 digits
  { identifier_type: 'NIP', identifier_value: [''] },
  { identifier_type: 'NIP', identifier_value: [null] },
  { identifier_type: 'NIP', identifier_value: ['12345678901', '', null, nipFor(970)] },
  { identifier_type: 'NIP', identifier_value: null },
  { identifier_type: '', identifier_value: [nipFor(970)] },
  { identifier_type: null, identifier_value: [nipFor(970)] },
  { identifier_type: null, identifier_value: [null] },
];

for (const [toolName, method, url] of [
  ['watch_companies', 'POST', '/companies/add'],
  ['unwatch_companies', 'DELETE', '/companies/watched'],
] as const) {
  test(`${toolName}: the same 422 as ${method} ${url}, message and errors`, async () => {
    for (const body of BAD_BODIES) {
      const expected = await rest(method, url, body);
      assert.equal(expected.status, 422, JSON.stringify(body));
      assert.deepEqual(await tool(toolName, body), expected, JSON.stringify(body));
      assert.deepEqual(await tool(toolName, { ...body, dry_run: true }), expected, `dry_run: ${JSON.stringify(body)}`);
    }
  });
}

test('a bad dry_run is said beside the identifier list problems, in the REST words', async () => {
  const r = await tool('watch_companies', { identifier_type: 'NIP', identifier_value: [null], dry_run: 'yes' });
  assert.equal(r.status, 422);
  assert.deepEqual(r.errors, {
    dry_run: ['The dry run field must be true or false.'],
    'identifier_value.0': ['The identifier value item 0 must be a string.'],
  });
});

test("the REST body's aliases `name` / `value` are taken, as the routes take them", async () => {
  assert.deepEqual(await rest('POST', '/companies/add', { name: 'NIP', value: [nipFor(971)] }), { status: 200 });
  assert.deepEqual(await tool('unwatch_companies', { name: 'NIP', value: [nipFor(971)] }), { status: 200 });
});
