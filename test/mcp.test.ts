import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import type { CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { createMatchEngine } from '../src/modules/match/engine.ts';
import { bearer, createAccount, createApiToken, createTestApp, drainJobs } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';
import { createTestDatabase } from './helpers/db.ts';
import { nipFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, ledger, runDay, setBalance } from './watchlist-support.ts';

/**
 * The MCP endpoint (docs/mcp.md) driven by the official SDK client over a real socket: the tool
 * list, each tool once, charges (taken once, as the REST route takes them), dry_run, tool errors
 * carrying the REST messages, and the HTTP side (401, rate-limit headers, 405).
 */

// The registry is loaded before the app starts, so that its search index holds the companies.
const db = await createTestDatabase();
const specs: CompanySpec[] = Array.from({ length: 6 }, (_, i) => ({
  n: 500 + i,
  name: `KWIATEX ${500 + i} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`,
  city: 'Kraków',
}));
await runDay(db.db, '2026-11-20', specs);
await runDay(
  db.db,
  '2026-11-21',
  specs.map((s, i) => (i === 0 ? { ...s, city: 'Warszawa', postalCode: '00-950' } : s)),
);
// The match index is built before the app serves too: the app's own first build runs in a worker
// thread at start, which on a loaded machine can outlast the 5 s a batch waits for it (a 503).
const matchEngine = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }) });
await matchEngine.refresh();
defer(() => matchEngine.stop());
const t = await createTestApp({ db, listen: true, overrides: { matchEngine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const alice = await createAccount(t);
const aliceId = await accountIdOf(t, alice.userRef);
const endpoint = new URL('/api/v1/mcp', t.baseUrl);

const NINE_TOOLS = [
  'search_companies',
  'get_company',
  'match_companies',
  'watch_companies',
  'unwatch_companies',
  'list_watched',
  'company_events',
  'watchlist_events',
  'get_wallet',
];

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'regwatch-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: bearer(token) } }));
  defer(() => client.close());
  return client;
}

const client = await connect(alice.master);

async function call(name: string, args: Record<string, unknown> = {}, c = client): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (r: CallToolResult, i = 0) => (r.content[i] as { type: 'text'; text: string }).text;
const structured = (r: CallToolResult) => r.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function rest(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) {
  return t.app.inject({ method, url: `/api/v1${url}`, headers: bearer(alice.master), ...(payload ? { payload } : {}) });
}

async function balance(): Promise<number> {
  return (await rest('GET', '/wallet')).json().data.balance;
}

/** Every string in a JSON Schema has a bound (maxLength or an enum). */
function unboundedStrings(schema: unknown, path = ''): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  if (s.type === 'string' && s.maxLength === undefined && s.enum === undefined && s.const === undefined) out.push(path || '(root)');
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && v && typeof v === 'object')
      for (const [p, sub] of Object.entries(v)) out.push(...unboundedStrings(sub, `${path}.${p}`));
    else if (k === 'items' || k === 'anyOf' || k === 'oneOf') out.push(...unboundedStrings(v, `${path}[]`));
    else if (Array.isArray(v)) v.forEach((sub) => out.push(...unboundedStrings(sub, path)));
  }
  return out;
}

test('initialize names the server; tools/list: the tools with their prices, bounded JSON Schemas and dry_run', async () => {
  assert.equal(client.getServerVersion()?.name, 'regwatch');
  assert.match(client.getInstructions() ?? '', /dry_run/);
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  assert.deepEqual(names, NINE_TOOLS);
  for (const tool of tools) {
    assert.match(tool.description ?? '', /Price: (free|\d+ credits? )/, tool.name);
    assert.equal(tool.inputSchema.type, 'object');
    assert.ok(tool.inputSchema.properties?.dry_run, `${tool.name} takes dry_run`);
    assert.deepEqual(unboundedStrings(tool.inputSchema), [], `${tool.name}: every string bounded`);
  }
  const byName = new Map(tools.map((x) => [x.name, x]));
  assert.match(byName.get('search_companies')!.description!, /Price: 1 credit per successful call \(`companies\.search`\)/);
  assert.match(byName.get('watch_companies')!.description!, /Price: 1 credit per identifier newly queued/);
  assert.match(byName.get('get_wallet')!.description!, /Price: free\./);
  assert.match(byName.get('match_companies')!.description!, /Price: 1 credit per query \(`companies\.match`\)/);
  assert.equal(byName.get('get_wallet')!.annotations?.readOnlyHint, true);
  assert.equal(byName.get('watch_companies')!.annotations?.readOnlyHint, false);
  // The tools that may look a company the service does not hold yet up in the live registries.
  assert.deepEqual(
    [...byName.values()].filter((d) => d.annotations?.openWorldHint).map((d) => d.name),
    ['get_company', 'watch_companies', 'company_events'],
  );
  // Only unwatching takes something away.
  assert.deepEqual(
    [...byName.values()].filter((d) => d.annotations?.destructiveHint).map((d) => d.name),
    ['unwatch_companies'],
  );
});

test('search_companies: the REST search answer, one credit taken once (balance and ledger), a readable summary', async () => {
  const before = await balance();
  const ledgerBefore = (await ledger(t, aliceId)).length;
  const r = await call('search_companies', { q: 'kwiatex', city: 'krakow' });
  assert.equal(r.isError, undefined);
  const s = structured(r);
  assert.equal(s.status, 'success');
  assert.equal(s.data.total, 5);
  assert.deepEqual(s.credits, { charged: 1, balance: before - 1 });
  const viaRest = (await rest('GET', '/companies/search?q=kwiatex&city=krakow')).json();
  assert.deepEqual(s.data, viaRest.data, 'the same service answers both');
  assert.match(text(r), /^5 companies\./);
  assert.match(text(r), /KWIATEX 501 SPÓŁKA/);
  assert.match(text(r), /Charged 1 credit; balance \d+ credits\./);
  assert.deepEqual(JSON.parse(text(r, 1)), s, 'the JSON follows the summary for clients that show text only');
  assert.equal(await balance(), before - 2, 'one credit for the tool, one for the REST comparison');
  const rows = (await ledger(t, aliceId)).slice(ledgerBefore);
  assert.deepEqual(
    rows.map((x) => [x.type, x.amount, x.description]),
    [
      ['usage', -1, 'companies.search'],
      ['usage', -1, 'companies.search'],
    ],
  );
});

test('dry_run answers the price and the balance and takes nothing; it checks the arguments as the call would', async () => {
  const before = await balance();
  const ledgerBefore = (await ledger(t, aliceId)).length;
  const r = await call('search_companies', { q: 'kwiatex', dry_run: true });
  assert.equal(r.isError, undefined);
  assert.deepEqual(structured(r), {
    dry_run: true,
    tool: 'search_companies',
    operation: 'companies.search',
    units: 1,
    credits: 1,
    balance: before,
    sufficient: true,
  });
  assert.match(text(r), /nothing was done or charged/);
  const free = await call('get_wallet', { dry_run: true });
  assert.equal(structured(free).credits, 0);
  const watch = await call('watch_companies', {
    identifier_type: 'NIP',
    identifier_value: [nipFor(500), nipFor(501), nipFor(501)],
    dry_run: true,
  });
  assert.equal(structured(watch).credits, 2);
  assert.equal(structured(watch).detail.duplicates, 1);
  const bad = await call('get_company', { identifier_type: 'NIP', identifier_value: '1234567890', dry_run: true });
  assert.equal(bad.isError, true);
  assert.equal(await balance(), before);
  assert.equal((await ledger(t, aliceId)).length, ledgerBefore);
  const [watched] = await Promise.all([rest('GET', '/companies/watched')]);
  assert.equal(watched.json().data.length, 0, 'the dry run watched nothing');
});

test('match_companies: the REST match answer for a batch, one credit a query in one ledger row', async () => {
  const queries = [
    { name: 'Kwiatex 501 sp. z o.o.', city: 'Krakow' },
    { nip: nipFor(502) },
    { name: 'zupełnie inna nazwa', city: 'Gdynia' },
  ];
  const before = await balance();
  const rowsBefore = (await ledger(t, aliceId)).length;
  const badDry = await call('match_companies', { queries: [{ city: 'Gdynia' }], dry_run: true });
  const badCall = await call('match_companies', { queries: [{ city: 'Gdynia' }] });
  assert.equal(badDry.isError, true, 'the dry run checks the queries as the call does');
  assert.equal(text(badDry), text(badCall));
  // Every problem at once, as the route says it: the schema's and the name-or-identifier check's.
  const mixed = await call('match_companies', { queries: [{ name: 5 }, {}] });
  assert.equal(mixed.isError, true);
  const viaRestMixed = await rest('POST', '/companies/match', { queries: [{ name: 5 }, {}] });
  assert.deepEqual(Object.keys(structured(mixed).error.errors), Object.keys(viaRestMixed.json().errors));
  assert.deepEqual(Object.keys(structured(mixed).error.errors), ['queries.0.name', 'queries.1']);
  const dry = await call('match_companies', { queries, dry_run: true });
  assert.deepEqual({ units: structured(dry).units, credits: structured(dry).credits }, { units: 3, credits: 3 });
  const r = await call('match_companies', { queries });
  assert.equal(r.isError, undefined, text(r));
  const viaRest = await rest('POST', '/companies/match', { queries });
  assert.equal(viaRest.statusCode, 200);
  assert.deepEqual(structured(r).data, viaRest.json().data, 'the same service answers both');
  const bets = structured(r).data.map(
    (a: { candidates: { match: boolean; identifiers: { type: string; value: string }[] }[] }) =>
      a.candidates.find((c) => c.match)?.identifiers.find((i) => i.type === 'NIP')?.value ?? null,
  );
  assert.deepEqual(bets.slice(0, 2), [nipFor(501), nipFor(502)]);
  assert.match(text(r), /^\d of 3 queries matched\.\n- #0: match KWIATEX 501/);
  assert.deepEqual(structured(r).credits, { charged: 3, balance: before - 3 });
  assert.deepEqual(
    (await ledger(t, aliceId)).slice(rowsBefore).map((x) => [x.amount, x.description]),
    [
      [-3, 'companies.match'],
      [-3, 'companies.match'],
    ],
  );
  const empty = await call('match_companies', { queries: [{ city: 'Kraków' }] });
  assert.equal(empty.isError, true);
  assert.equal(text(empty), (await rest('POST', '/companies/match', { queries: [{ city: 'Kraków' }] })).json().message);
});

test('get_company: the snapshot for one credit; a bad identifier and an unknown company are tool errors with the REST message, free', async () => {
  const before = await balance();
  const r = await call('get_company', { identifier_type: 'NIP', identifier_value: nipFor(500) });
  assert.equal(r.isError, undefined);
  assert.equal(structured(r).data.identity.identifiers[0].value, nipFor(500));
  assert.equal(structured(r).meta.last_changed_date, '2026-11-21');
  assert.match(text(r), /^KWIATEX 500 SPÓŁKA.*\(NIP \d{10}, REGON9 \d{9}, KRS \d{10}\)\n/);
  assert.equal(await balance(), before - 1);

  const invalid = await call('get_company', { identifier_type: 'NIP', identifier_value: '1234567890' });
  const restInvalid = await rest('POST', '/companies/snapshot', { identifier_type: 'NIP', identifier_value: '1234567890' });
  assert.equal(restInvalid.statusCode, 422);
  assert.equal(invalid.isError, true);
  assert.equal(text(invalid), restInvalid.json().message);
  assert.deepEqual(structured(invalid).error, { status: 422, message: restInvalid.json().message, errors: restInvalid.json().errors });

  const shape = await call('get_company', { identifier_type: 'PESEL', identifier_value: 'x'.repeat(51) });
  assert.equal(shape.isError, true);
  assert.deepEqual(Object.keys(structured(shape).error.errors).sort(), ['identifier_type', 'identifier_value']);
  assert.equal(text(shape), 'The selected identifier type is invalid. (and 1 more error)');

  // The text guard's rule, on the arguments: a tool error as from the REST route, nothing stored or charged.
  const nul = await call('search_companies', { q: 'kwiat\u0000ex', city: '\ud800' });
  const restNul = await rest('GET', `/companies/search?q=${encodeURIComponent('kwiat\u0000ex')}`);
  assert.equal(restNul.statusCode, 422);
  assert.equal(nul.isError, true);
  assert.deepEqual(Object.keys(structured(nul).error.errors), ['q', 'city']);
  assert.equal(structured(nul).error.errors.q[0], restNul.json().errors.q[0]);

  const unknown = await call('get_company', { identifier_type: 'NIP', identifier_value: nipFor(999) });
  assert.equal(unknown.isError, true);
  assert.equal(text(unknown), 'Company not found');
  assert.equal(structured(unknown).error.status, 404);
  assert.doesNotMatch(JSON.stringify(unknown), /at .*\.ts:\d+/, 'no stack');
  assert.equal(await balance(), before - 1, 'failures are free');
});

test('watch, list, company and feed events, unwatch, wallet: each answers as its REST route and charges what it charges', async () => {
  const b0 = await balance();
  const w = await call('watch_companies', { identifier_type: 'NIP', identifier_value: [nipFor(500), nipFor(501)] });
  assert.equal(w.isError, undefined, text(w));
  assert.equal(structured(w).queued, 2);
  assert.equal(structured(w).credits_charged, 2);
  assert.deepEqual(structured(w).credits, { charged: 2, balance: b0 - 2 });
  assert.match(
    text(w),
    /^2 identifiers queued for monitoring\. A confirmation e-mail follows once every company is ready\.\nRequest \w+\.\nCharged 2 credits; balance \d+ credits\./,
  );
  assert.equal(structured(w).message, '2 identifiers queued for monitoring. A confirmation e-mail follows once every company is ready.');
  assert.equal(await balance(), b0 - 2);
  const again = await call('watch_companies', { identifier_type: 'NIP', identifier_value: [nipFor(500)] });
  assert.equal(structured(again).credits_charged, 0, 'already queued: free');
  assert.equal(structured(again).credits, undefined, 'nothing charged: no credits object');

  await drainJobs(t);
  const list = await call('list_watched');
  assert.deepEqual(
    structured(list)
      .data.map((x: { primary_identifier: string }) => x.primary_identifier)
      .sort(),
    [nipFor(500), nipFor(501)].sort(),
  );
  assert.match(text(list), /^2 watched companies\.\n- KWIATEX/);

  const b1 = await balance();
  const ev = await call('company_events', { identifier_type: 'NIP', identifier_value: nipFor(500), scope: 'address' });
  assert.equal(ev.isError, undefined, text(ev));
  assert.ok(structured(ev).data.events.length >= 1);
  assert.equal(structured(ev).data.events[0].event_type, 'COMPANY_REGISTERED_ADDRESS_CHANGED');
  assert.match(text(ev), /COMPANY_REGISTERED_ADDRESS_CHANGED \[info\]: .*Kraków → .*Warszawa/);
  const badFilter = await call('company_events', { identifier_type: 'NIP', identifier_value: nipFor(500), scope: 'nonsense' });
  assert.equal(badFilter.isError, true);
  assert.match(text(badFilter), /^The selected scope is invalid/);

  const feed = await call('watchlist_events', { after_id: 0 });
  assert.equal(feed.isError, undefined, text(feed));
  assert.equal(structured(feed).meta.after_id, 0);
  assert.match(text(feed), /events? after id 0/);
  assert.equal(await balance(), b1 - 2, 'one credit for each event call; the failed one free');

  const un = await call('unwatch_companies', { identifier_type: 'NIP', identifier_value: [nipFor(500), nipFor(502), nipFor(999)] });
  assert.deepEqual(structured(un).data, { removed: [nipFor(500)], not_found: [nipFor(999)], not_watched: [nipFor(502)] });
  assert.deepEqual({ ...structured(un).meta, removed_at: null }, { total: 3, removed: 1, not_found: 1, not_watched: 1, removed_at: null });
  const wallet = await call('get_wallet');
  assert.deepEqual(structured(wallet).data, (await rest('GET', '/wallet')).json().data);
  assert.match(text(wallet), /^Balance: \d+ credits/);
  assert.equal(await balance(), b1 - 2, 'unwatch, list and wallet are free');
});

test('an exhausted wallet: a tool error with the 402 message and nothing done; concurrent calls never take the balance below zero', async () => {
  await setBalance(t, aliceId, 0);
  const r = await call('search_companies', { q: 'kwiatex' });
  assert.equal(r.isError, true);
  assert.equal(text(r), 'Insufficient credits');
  assert.deepEqual(structured(r).error, {
    status: 402,
    message: 'Insufficient credits',
    code: 'INSUFFICIENT_CREDITS',
    balance: 0,
    required: 1,
  });
  const watch = await call('watch_companies', { identifier_type: 'NIP', identifier_value: [nipFor(503)] });
  assert.equal(text(watch), 'Insufficient credits');
  // Bad arguments are the REST route's 422 whatever the balance, as REST answers them.
  const badCalls: [string, Record<string, unknown>, string, string][] = [
    ['get_company', { identifier_type: 'NIP', identifier_value: '1234567890' }, 'POST', '/companies/snapshot'],
    ['search_companies', { status: 'FOO' }, 'GET', '/companies/search?status=FOO'],
    // A schema error and a value error together, reported at once by both.
    ['search_companies', { page: 0, status: 'FOO' }, 'GET', '/companies/search?page=0&status=FOO'],
    ['match_companies', { queries: [{ name: 'x' }, { city: 'Kraków' }] }, 'POST', '/companies/match'],
    [
      'company_events',
      { identifier_type: 'NIP', identifier_value: nipFor(500), scope: 'nonsense' },
      'GET',
      `/companies/events?identifier_type=NIP&identifier_value=${nipFor(500)}&scope=nonsense`,
    ],
    ['watchlist_events', { scope: 'nonsense' }, 'GET', '/watchlist/events?scope=nonsense'],
  ];
  for (const [tool, args, method, url] of badCalls) {
    const viaMcp = await call(tool, args);
    assert.equal(viaMcp.isError, true, tool);
    assert.equal(structured(viaMcp).error.status, 422, `${tool}: ${text(viaMcp)}`);
    const body =
      method === 'POST' ? (tool === 'get_company' ? { identifier_type: 'NIP', identifier_value: '1234567890' } : args) : undefined;
    const viaRest = await rest(method as 'GET', url, body);
    assert.equal(viaRest.statusCode, 422, `${method} ${url} with no credits: ${viaRest.body}`);
    assert.equal(text(viaMcp), viaRest.json().message, tool);
  }
  assert.equal(
    (await rest('GET', '/companies/watched')).json().data.some((x: { primary_identifier: string }) => x.primary_identifier === nipFor(503)),
    false,
  );

  await setBalance(t, aliceId, 3);
  const ledgerBefore = (await ledger(t, aliceId)).length;
  const results = await Promise.all(Array.from({ length: 8 }, () => call('search_companies', { q: 'kwiatex' })));
  assert.equal(results.filter((x) => !x.isError).length, 3, 'exactly what the balance pays for');
  assert.ok(results.filter((x) => x.isError).every((x) => text(x) === 'Insufficient credits'));
  assert.equal(await balance(), 0);
  assert.equal((await ledger(t, aliceId)).slice(ledgerBefore).length, 3, 'one ledger row per answered call');
  await setBalance(t, aliceId, 100);
});

test('HTTP: no token or a bad one is 401 with the REST body; an API token works; rate-limit headers; GET is 405', async () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(endpoint, {
      method: 'POST',
      body: JSON.stringify(initialize),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    });
  const none = await post({});
  assert.equal(none.status, 401);
  assert.deepEqual(await none.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });
  const invalid = await post(bearer(`sk_live_${'A'.repeat(40)}`));
  assert.equal(invalid.status, 401);
  assert.deepEqual(await invalid.json(), { error: 'Invalid API token', code: 'UNAUTHORIZED' });
  await assert.rejects(connect(`sk_api_${'B'.repeat(40)}`), /Invalid API token/);

  const ok = await post(bearer(alice.master));
  assert.equal(ok.status, 200);
  assert.ok(ok.headers.get('x-ratelimit-limit'));
  assert.ok(ok.headers.get('x-request-id'));
  assert.equal(ok.headers.get('mcp-session-id'), null, 'stateless');
  assert.equal((await ok.json()).result.serverInfo.name, 'regwatch');
  // The Host header is the client's: empty or malformed, the request is still answered.
  for (const host of ['', 'a@b', 'x:99999', '[::1']) {
    const odd = await t.app.inject({
      method: 'POST',
      url: '/api/v1/mcp',
      payload: initialize,
      headers: { host, 'content-type': 'application/json', ...bearer(alice.master) },
    });
    assert.equal(odd.statusCode, 200, `Host ${JSON.stringify(host)}: ${odd.body}`);
  }

  const api = await createApiToken(t, alice.master);
  const viaApiToken = await connect(api.plaintext);
  assert.equal(structured(await call('get_wallet', {}, viaApiToken)).data.balance, await balance());

  const jsonOnly = await fetch(endpoint, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_wallet', arguments: {} } }),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
  });
  assert.equal(jsonOnly.status, 200, 'no initialize needed (stateless), and a JSON-only Accept is served');
  assert.equal((await jsonOnly.json()).result.structuredContent.data.balance, await balance());

  // Malformed call params are JSON-RPC's invalid params, not an internal error.
  for (const params of [{ name: 'get_wallet', arguments: null }, { name: 'get_wallet', arguments: 'x' }, { arguments: {} }]) {
    const bad = await fetch(endpoint, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }),
      headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
    });
    const { error } = (await bad.json()) as { error: { code: number; message: string } };
    assert.equal(error.code, -32602, JSON.stringify(params));
    assert.match(error.message, /^Invalid params of tools\/call: params\.(arguments|name): invalid input: /);
  }

  // A JSON-RPC batch would be many tool calls for one request of the rate limit: refused, nothing run.
  const before = await balance();
  const batch = await fetch(endpoint, {
    method: 'POST',
    body: JSON.stringify(
      Array.from({ length: 3 }, (_, id) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'search_companies', arguments: { q: 'kwiatex' } },
      })),
    ),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
  });
  assert.equal(batch.status, 400);
  assert.equal(((await batch.json()) as { error: { code: number } }).error.code, -32600);
  assert.ok(batch.headers.get('x-ratelimit-remaining'));
  assert.equal(await balance(), before, 'nothing was run or charged');

  // A body that is not JSON is JSON-RPC's Parse error; without a token still the 401 first.
  const garbled = await fetch(endpoint, {
    method: 'POST',
    body: '{"jsonrpc": "2.0", "id": 1,',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
  });
  assert.equal(garbled.status, 400);
  assert.deepEqual(await garbled.json(), {
    jsonrpc: '2.0',
    error: { code: -32700, message: 'Parse error: the request body is not valid JSON.' },
    id: null,
  });
  // JSON that is no JSON-RPC message is an Invalid Request (-32600), not a parse error.
  for (const body of ['{"foo":1}', '"x"', '[]', '[1]', '{"jsonrpc":"2.0"}', '{"jsonrpc":"1.0","id":1,"method":"ping"}']) {
    const res = await fetch(endpoint, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
    });
    assert.equal(res.status, 400, body);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32600, body);
  }
  const ping = await fetch(endpoint, {
    method: 'POST',
    body: '[{"jsonrpc":"2.0","id":7,"method":"ping"}]',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...bearer(alice.master) },
  });
  assert.equal(ping.status, 200, 'a batch of one message is still served');
  const anonymous = await fetch(endpoint, { method: 'POST', body: '{', headers: { 'content-type': 'application/json' } });
  assert.equal(anonymous.status, 401);

  const get = await fetch(endpoint, { headers: { ...bearer(alice.master), accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
});

test('the /docs page (the OpenAPI description) points agents at the endpoint; the JSON-RPC route stays out of the REST document', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  assert.match(doc.info.description, new RegExp(`${t.baseUrl}/api/v1/mcp`));
  assert.match(doc.info.description, /npx regwatch mcp/);
  assert.match(doc.info.description, /docs\/mcp\.md/);
  assert.equal(doc.paths['/api/v1/mcp'], undefined);
});

test('an unexpected failure is a tool error saying "Server Error", uncharged, with nothing internal; the cause is logged', async () => {
  const failing: CompanySearchEngine = {
    search: async () => {
      throw new Error('secret internal detail');
    },
    answerUnchecked: () => null,
    confirm: async () => null,
    start() {},
    refresh: async () => {},
    status: () => ({}) as ReturnType<CompanySearchEngine['status']>,
    stop: async () => {},
  };
  const broken = await createTestApp({ db, listen: true, env: { RATE_LIMIT_PER_MINUTE: '100000' }, overrides: { companySearch: failing } });
  const c = new Client({ name: 'regwatch-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL('/api/v1/mcp', broken.baseUrl), { requestInit: { headers: bearer(alice.master) } }),
  );
  defer(() => c.close());
  const before = await balance();
  const r = await call('search_companies', { q: 'kwiatex' }, c);
  assert.equal(r.isError, true);
  assert.equal(text(r), 'Server Error');
  assert.deepEqual(structured(r).error, { status: 500, message: 'Server Error' });
  assert.doesNotMatch(JSON.stringify(r), /secret|\.ts:\d+/);
  assert.equal(await balance(), before);
  assert.ok(
    broken.logLines.some((l) => l.includes('secret internal detail') && l.includes('search_companies')),
    'logged with the tool name',
  );
  const unknownTool = c.callTool({ name: 'drop_database', arguments: {} });
  // The client's McpError says its code once: the server's message is the message alone.
  await assert.rejects(
    unknownTool,
    (e: Error & { code?: number }) => e.code === -32602 && e.message === 'MCP error -32602: Unknown tool: drop_database',
  );
});
