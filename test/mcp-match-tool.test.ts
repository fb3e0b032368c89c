import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { compose } from '../src/composition.ts';
import { createMcpServer, toolDefinitions } from '../src/modules/mcp/server.ts';
import { createTools, type MatchService } from '../src/modules/mcp/tools.ts';
import { createAccount, createTestApp } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';
import { accountIdOf, ledger, setBalance } from './watchlist-support.ts';

/**
 * match_companies, the one tool priced per unit of its arguments (1 credit a query): the balance
 * check and the charge cover the whole batch, as the REST route's `unitsOf`. The tool is built
 * over a stand-in match service here (the other services are the composition's, connected in
 * memory), so the pricing is tested whatever the matching index answers; test/mcp.test.ts calls
 * the real one.
 */

const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const alice = await createAccount(t);
const accountId = await accountIdOf(t, alice.userRef);
const parts = compose({ config: t.config, db: t.db.db, logger: pino({ level: 'silent' }), clock: t.clock });
defer(() => parts.close());

const calls: unknown[] = [];
const match: MatchService = {
  // The real checks are test/mcp.test.ts's (a query without a name or an identifier).
  check() {},
  async match(queries) {
    calls.push(queries);
    return queries.map((q, i) => ({
      query_index: i,
      candidates: [
        { identifiers: [{ type: 'NIP', value: '5261040828' }], name: `${q.name ?? 'X'} SPÓŁKA AKCYJNA`, score: 0.93, match: i === 0 },
      ],
    }));
  },
};
const m = parts.modules;
const tools = createTools({
  companies: m.companies.service,
  watchlist: m.watchlist.service,
  events: m.watchlist.events,
  wallet: m.wallet.service,
  match: { service: match, operation: 'companies.match' },
});
const deps = { db: t.db.db, prices: t.config.prices, tools, logger: pino({ level: 'silent' }) };
const server = createMcpServer(deps, toolDefinitions(tools, t.config.prices), { accountId }, deps.logger);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'regwatch-test', version: '1.0.0' });
await client.connect(clientSide);
defer(() => client.close());

const call = async (args: Record<string, unknown>) =>
  (await client.callTool({ name: 'match_companies', arguments: args })) as CallToolResult;
const structured = (r: CallToolResult) => r.structuredContent as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;
const queries = [{ name: 'Orlen', city: 'Płock' }, { nip: '5261040828' }, { name: 'Kowalski' }];

test('listed with its per-query price when a match service is given', async () => {
  const tool = (await client.listTools()).tools.find((x) => x.name === 'match_companies');
  assert.ok(tool);
  assert.match(tool.description!, /Price: 1 credit per query/);
});

test('a batch of 3: dry_run quotes 3 credits, the call takes 3 in one ledger row, the summary names the bets', async () => {
  await setBalance(t, accountId, 10);
  const dry = await call({ queries, dry_run: true });
  assert.deepEqual(
    { units: structured(dry).units, credits: structured(dry).credits, balance: structured(dry).balance },
    { units: 3, credits: 3, balance: 10 },
  );
  assert.equal(calls.length, 0, 'dry_run does not match');
  const before = (await ledger(t, accountId)).length;
  const r = await call({ queries });
  assert.equal(r.isError, undefined, text(r));
  assert.equal(structured(r).data.length, 3);
  assert.deepEqual(structured(r).credits, { charged: 3, balance: 7 });
  assert.match(text(r), /^1 of 3 queries matched\.\n- #0: match Orlen SPÓŁKA AKCYJNA \(NIP 5261040828\), score 0\.93/);
  assert.deepEqual(
    (await ledger(t, accountId)).slice(before).map((x) => x.amount),
    [-3],
  );
});

test('a wallet that cannot pay for the whole batch: the 402 tool error with the batch price, nothing matched or charged', async () => {
  await setBalance(t, accountId, 2);
  calls.length = 0;
  const r = await call({ queries });
  assert.equal(r.isError, true);
  assert.equal(text(r), 'Insufficient credits');
  assert.deepEqual({ balance: structured(r).error.balance, required: structured(r).error.required }, { balance: 2, required: 3 });
  assert.equal(calls.length, 0);
  const tooMany = await call({ queries: Array.from({ length: 101 }, () => ({ name: 'x' })) });
  assert.equal(tooMany.isError, true);
  assert.equal(text(tooMany), 'The queries field must not have more than 100 items.');
});
