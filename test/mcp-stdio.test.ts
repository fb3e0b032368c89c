import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema, type CallToolResult, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';
import { createTestDatabase } from './helpers/db.ts';
import { connectMcpClient } from './helpers/mcp.ts';
import { nipFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, ledger, runDay, setBalance } from './watchlist-support.ts';

/**
 * `regwatch mcp` (the stdio bridge, src/modules/mcp/bridge.ts) spawned as a client would spawn it,
 * relaying to the app listening on a real port: the same tools, charges taken once, dry_run,
 * tool errors with the REST messages, and a bad token, a missing token or a server down.
 */

const db = await createTestDatabase();
const specs: CompanySpec[] = Array.from({ length: 3 }, (_, i) => ({
  n: 700 + i,
  name: `STOKROTKA ${700 + i} SPÓŁKA AKCYJNA`,
  city: 'Gdańsk',
}));
await runDay(db.db, '2026-11-20', specs);
const t = await createTestApp({ db, listen: true, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const alice = await createAccount(t);
const aliceId = await accountIdOf(t, alice.userRef);

function bridgeEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
}

async function spawnBridge(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['bin/regwatch.js', 'mcp'],
    env: bridgeEnv(env),
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const client = new Client({ name: 'regwatch-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  defer(() => client.close());
  return { client, stderr: () => err };
}

const { client } = await spawnBridge({ REGWATCH_URL: t.baseUrl, REGWATCH_TOKEN: alice.master });

async function call(c: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}
const text = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;
const structured = (r: CallToolResult) => r.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function balance(): Promise<number> {
  return (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(alice.master) })).json().data.balance;
}

test('the bridge lists the tools the HTTP endpoint lists, and says it is regwatch', async () => {
  assert.equal(client.getServerVersion()?.name, 'regwatch');
  const direct = new Client({ name: 'direct', version: '1.0.0' });
  await direct.connect(
    new StreamableHTTPClientTransport(new URL('/api/v1/mcp', t.baseUrl), { requestInit: { headers: bearer(alice.master) } }),
  );
  defer(() => direct.close());
  assert.deepEqual((await client.listTools()).tools, (await direct.listTools()).tools);
  // The server's JSON-RPC error relayed as it is: its code said once, as the HTTP endpoint says it.
  const viaBridge = await client.callTool({ name: 'nosuchtool', arguments: {} }).catch((e: Error) => e.message);
  const viaHttp = await direct.callTool({ name: 'nosuchtool', arguments: {} }).catch((e: Error) => e.message);
  assert.equal(viaBridge, 'MCP error -32602: Unknown tool: nosuchtool');
  assert.equal(viaBridge, viaHttp);
});

test('malformed params: -32602 naming the field through the bridge, as over HTTP, not -32603 with a zod dump', async () => {
  const direct = await connectMcpClient(t.baseUrl, alice.master, 'direct');
  const failure = (c: Client, method: string, params?: Record<string, unknown>) =>
    c.request({ method, ...(params ? { params } : {}) } as never, EmptyResultSchema).then(
      () => null,
      (e: McpError) => ({ code: e.code, message: e.message }),
    );
  for (const [method, params, field] of [
    ['tools/call', { name: 'get_wallet', arguments: null }, 'params.arguments'],
    ['tools/call', { name: 'get_wallet', arguments: 'x' }, 'params.arguments'],
    ['tools/call', { arguments: {} }, 'params.name'],
    ['tools/call', undefined, 'params'],
    ['tools/list', { cursor: 5 }, 'params.cursor'],
    ['initialize', {}, 'params.protocolVersion'],
  ] as const) {
    const what = `${method} ${JSON.stringify(params)}`;
    const viaBridge = await failure(client, method, params);
    assert.equal(viaBridge?.code, -32602, `${what}: ${viaBridge?.message}`);
    assert.match(viaBridge.message, new RegExp(`^MCP error -32602: Invalid params of ${method}: .*${field.replace('.', '\\.')}: `), what);
    assert.doesNotMatch(viaBridge.message, /invalid_type|\[/, what);
    assert.deepEqual(viaBridge, await failure(direct, method, params), `${what}: the HTTP endpoint's answer`);
  }
});

test('through the bridge: a call charged once, dry_run free, a bad argument and an exhausted wallet as tool errors', async () => {
  const before = await balance();
  const rowsBefore = (await ledger(t, aliceId)).length;
  const search = await call(client, 'search_companies', { q: 'stokrotka' });
  assert.equal(search.isError, undefined, text(search));
  assert.equal(structured(search).data.total, 3);
  assert.match(text(search), /^3 companies\./);
  assert.equal(await balance(), before - 1);
  assert.deepEqual(
    (await ledger(t, aliceId)).slice(rowsBefore).map((r) => [r.type, r.amount, r.description]),
    [['usage', -1, 'companies.search']],
  );

  const dry = await call(client, 'get_company', { identifier_type: 'NIP', identifier_value: nipFor(700), dry_run: true });
  assert.equal(structured(dry).credits, 1);
  assert.equal(await balance(), before - 1);

  const company = await call(client, 'get_company', { identifier_type: 'NIP', identifier_value: nipFor(700) });
  assert.match(text(company), /^STOKROTKA 700 SPÓŁKA AKCYJNA/);
  assert.equal(await balance(), before - 2);

  const bad = await call(client, 'get_company', { identifier_type: 'NIP', identifier_value: '123' });
  assert.equal(bad.isError, true);
  assert.equal(text(bad), 'The NIP must be 10 digits with a valid checksum.');
  assert.equal(structured(bad).error.status, 422);

  await setBalance(t, aliceId, 0);
  const broke = await call(client, 'company_events', { identifier_type: 'NIP', identifier_value: nipFor(701) });
  assert.equal(broke.isError, true);
  assert.equal(text(broke), 'Insufficient credits');
  assert.equal(structured(broke).error.required, 1);
  assert.equal(structured(await call(client, 'get_wallet')).data.balance, 0, 'free tools still answer');
  await setBalance(t, aliceId, 100);
});

test('a bad token: tools/list fails and a call is a tool error, both with the 401 message; the bridge stays up', async () => {
  const { client: c, stderr } = await spawnBridge({ REGWATCH_URL: `${t.baseUrl}/api/v1/mcp`, REGWATCH_TOKEN: `sk_api_${'Z'.repeat(40)}` });
  await assert.rejects(c.listTools(), (e: Error) => e.message === 'MCP error -32603: Invalid API token');
  const r = await call(c, 'get_wallet');
  assert.equal(r.isError, true);
  assert.equal(text(r), 'Invalid API token');
  assert.equal(structured(r).error.status, 401);
  assert.equal(structured(r).error.code, 'UNAUTHORIZED', "the REST body's code, as over HTTP");
  assert.match(stderr(), /Invalid API token/, 'diagnostics go to stderr');
});

test('a server that is down: a tool error saying so', async () => {
  const { client: c } = await spawnBridge({ REGWATCH_URL: 'http://127.0.0.1:9', REGWATCH_TOKEN: alice.master });
  const r = await call(c, 'get_wallet');
  assert.equal(r.isError, true);
  assert.match(text(r), /^The regwatch server at http:\/\/127\.0\.0\.1:9 could not be reached/);
});

test('no REGWATCH_TOKEN: exit 78 with a message, nothing on stdout', async () => {
  const child = spawn(process.execPath, ['bin/regwatch.js', 'mcp'], {
    env: bridgeEnv({ REGWATCH_URL: t.baseUrl }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 78);
  assert.equal(out, '');
  assert.match(err, /REGWATCH_TOKEN/);
});
