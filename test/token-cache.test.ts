import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { compose, type Composition } from '../src/composition.ts';
import { hashSecret } from '../src/lib/ids.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import { runDaily } from '../src/registry/daily.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { defer } from './helpers/cleanup.ts';
import { bearer, createAccount, createApiToken, createManualClock, testConfig, type TestApp } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor } from './helpers/registry.ts';
import { waitFor } from './helpers/wait.ts';

/**
 * The token cache (src/modules/tokens/token-cache.ts) across processes: two apps, each composed
 * on its own as two API processes would be, on one database. A revocation through one is honoured
 * at once by the other, even one that has the token cached; the cache is trusted only while its
 * LISTEN connection is up; and parallel charges never take a balance below zero.
 */

type ComposedApp = TestApp & { parts: Composition };

async function composedApp(db: TestDatabase, clock: Clock = systemClock, env: Record<string, string> = {}): Promise<ComposedApp> {
  const config = testConfig({ RATE_LIMIT_PER_MINUTE: '100000', ...env });
  const parts = compose({ config, db: db.db, logger: pino({ level: 'silent' }), clock });
  const app = await buildApp(parts);
  defer(async () => {
    await app.close();
    await parts.close();
  });
  await app.ready();
  return { app, parts, db, config, clock, logLines: [] };
}

async function twoApps(clockB?: Clock) {
  const db = await createTestDatabase();
  await runDaily(db.db, {
    date: '2026-11-20',
    source: arraySource([companySnapshot({ n: 1 }), companySnapshot({ n: 2 })]),
    sourceKey: 'file:token-cache-test',
  });
  const a = await composedApp(db);
  const b = await composedApp(db, clockB);
  await waitFor('both token caches listening', () => a.parts.modules.tokens.cache.active && b.parts.modules.tokens.cache.active, 10_000);
  const account = await createAccount(a);
  const accountId = (await db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow()).id;
  return { db, a, b, account, accountId };
}

const snapshot = (t: TestApp, token: string, n = 1) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/snapshot',
    headers: bearer(token),
    payload: { identifier_type: 'NIP', identifier_value: nipFor(n) },
  });
const search = (t: TestApp, token: string) =>
  t.app.inject({ method: 'GET', url: '/api/v1/companies/search?city=lodz', headers: bearer(token) });
const cached = (t: ComposedApp, token: string) => t.parts.modules.tokens.cache.get(hashSecret(token), new Date()) !== null;

async function wallet(db: TestDatabase, accountId: string) {
  const w = await db.db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow();
  const rows = await db.db
    .selectFrom('wallet_transactions')
    .select(['amount', 'balance_after', 'type'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  return {
    balance: Number(w.balance),
    ledgerSum: rows.reduce((s, r) => s + Number(r.amount), 0),
    usage: rows.filter((r) => r.type === 'usage').length,
    lowest: Math.min(...rows.map((r) => Number(r.balance_after))),
  };
}

test('a token revoked through one app is refused at once by another app that has it cached, and then leaves its cache', async () => {
  const { a, b, account, accountId, db } = await twoApps();
  const api = await createApiToken(a, account.master);
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 200);
  assert.equal((await search(b, api.plaintext)).statusCode, 200);
  assert.ok(cached(b, api.plaintext), 'B holds the token');

  const revoked = await a.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${api.ref}`, headers: bearer(account.master) });
  assert.equal(revoked.statusCode, 200, revoked.body);
  // No waiting: whether or not B has heard of it yet, its next request is refused and free.
  const before = await wallet(db, accountId);
  for (const res of [await snapshot(b, api.plaintext), await search(b, api.plaintext)]) {
    assert.equal(res.statusCode, 401, res.body);
    assert.deepEqual(res.json(), { error: 'Token revoked', code: 'UNAUTHORIZED' });
    assert.equal(res.headers['x-credits-charged'], undefined);
  }
  assert.deepEqual(await wallet(db, accountId), before);
  await waitFor("the notification to empty B's entry", () => !cached(b, api.plaintext), 5000);
  // The Master Token, untouched, still works through both.
  assert.equal((await snapshot(b, account.master)).statusCode, 200);
  assert.equal((await snapshot(a, account.master)).statusCode, 200);
});

test('a revocation whose notification never arrives is still refused: the charge checks the token in its statement', async () => {
  const { a, b, account, accountId, db } = await twoApps();
  const api = await createApiToken(a, account.master);
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 200);
  assert.ok(cached(b, api.plaintext));
  const before = await wallet(db, accountId);

  // Revoke behind the trigger's back: B is never told.
  await sql`ALTER TABLE api_tokens DISABLE TRIGGER api_tokens_notify_auth`.execute(db.db);
  try {
    await db.db.updateTable('api_tokens').set({ revoked_at: new Date() }).where('token_ref', '=', api.ref).execute();
  } finally {
    await sql`ALTER TABLE api_tokens ENABLE TRIGGER api_tokens_notify_auth`.execute(db.db);
  }
  // Company 99 is unknown: refused before its on-demand import, not answered 404.
  for (const res of [
    await snapshot(b, api.plaintext),
    await search(b, api.plaintext),
    await snapshot(b, api.plaintext, 2),
    await snapshot(b, api.plaintext, 99),
  ]) {
    assert.equal(res.statusCode, 401, res.body);
    assert.deepEqual(res.json(), { error: 'Token revoked', code: 'UNAUTHORIZED' });
  }
  assert.ok(cached(b, api.plaintext), 'the entry was still there: the charge, not the lookup, refused');
  assert.deepEqual(await wallet(db, accountId), before);
  // A, which never cached it, refuses it at the lookup.
  assert.equal((await snapshot(a, api.plaintext)).statusCode, 401);
});

test('free reads (snapshot and search priced 0) refuse a cached token revoked without a notification too', async () => {
  const db = await createTestDatabase();
  await runDaily(db.db, { date: '2026-11-20', source: arraySource([companySnapshot({ n: 1 })]), sourceKey: 'file:token-cache-free' });
  const app = await composedApp(db, systemClock, { PRICES: '{"companies.snapshot": 0, "companies.search": 0}' });
  await waitFor('the token cache listening', () => app.parts.modules.tokens.cache.active, 10_000);
  const account = await createAccount(app);
  const api = await createApiToken(app, account.master);
  assert.equal((await snapshot(app, api.plaintext)).statusCode, 200);
  assert.ok(cached(app, api.plaintext));
  await sql`ALTER TABLE api_tokens DISABLE TRIGGER api_tokens_notify_auth`.execute(db.db);
  try {
    await db.db.updateTable('api_tokens').set({ revoked_at: new Date() }).where('token_ref', '=', api.ref).execute();
  } finally {
    await sql`ALTER TABLE api_tokens ENABLE TRIGGER api_tokens_notify_auth`.execute(db.db);
  }
  for (const res of [await snapshot(app, api.plaintext), await search(app, api.plaintext)]) {
    assert.equal(res.statusCode, 401, res.body);
    assert.deepEqual(res.json(), { error: 'Token revoked', code: 'UNAUTHORIZED' });
  }
});

test('a cached token past its expiry is refused as expired', async () => {
  const clock = createManualClock(new Date());
  const { a, b, account } = await twoApps(clock);
  const api = await createApiToken(a, account.master, 'short', 1);
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 200);
  clock.advance(2 * 86_400_000);
  const res = await snapshot(b, api.plaintext);
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { error: 'Token expired', code: 'UNAUTHORIZED' });
});

test('when the LISTEN connection drops, nothing is served from the cache until it listens again, and a revocation meanwhile is honoured', async () => {
  const { a, b, account, db } = await twoApps();
  const api = await createApiToken(a, account.master);
  const other = await createApiToken(a, account.master, 'other');
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 200);
  assert.ok(cached(b, api.plaintext));

  const { rows } = await sql<{ n: number }>`
    SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name LIKE '%:listen'`.execute(db.db);
  assert.equal(rows[0]!.n, 2, 'one listener per app');
  await waitFor('B to stop trusting its cache', () => !b.parts.modules.tokens.cache.active, 5000);
  assert.equal(cached(b, api.plaintext), false);
  // Revoked while B cannot hear it: refused anyway.
  assert.equal(
    (await a.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${api.ref}`, headers: bearer(account.master) })).statusCode,
    200,
  );
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 401);
  assert.equal((await snapshot(b, other.plaintext)).statusCode, 200);
  assert.equal(cached(b, other.plaintext), false, 'nothing is cached while not listening');

  await waitFor('B to listen again', () => b.parts.modules.tokens.cache.active, 10_000);
  assert.equal((await snapshot(b, other.plaintext)).statusCode, 200);
  assert.ok(cached(b, other.plaintext), 'cached again once listening');
  assert.equal((await snapshot(b, api.plaintext)).statusCode, 401);
});

test('parallel charges through two apps never take the balance below zero, and the ledger always sums to the balance', async () => {
  const { a, b, account, accountId, db } = await twoApps();
  const api = await createApiToken(a, account.master);
  // 100 welcome credits; leave 30.
  assert.equal((await applyLedgerEntry(db.db, { accountId, type: 'usage', amount: -70, description: 'drain' })).applied, true);
  // Warm both caches, then put the credits back.
  for (const t of [a, b]) assert.equal((await search(t, api.plaintext)).statusCode, 200);
  assert.equal((await applyLedgerEntry(db.db, { accountId, type: 'refund', amount: 2, description: 'test' })).applied, true);

  const kinds = [
    (t: TestApp) => snapshot(t, api.plaintext),
    (t: TestApp) => search(t, api.plaintext),
    (t: TestApp) => snapshot(t, account.master, 2),
    (t: TestApp) => search(t, account.master),
  ];
  const responses = await Promise.all(Array.from({ length: 120 }, (_, i) => kinds[i % kinds.length]!(i % 2 === 0 ? a : b)));
  const ok = responses.filter((r) => r.statusCode === 200);
  const refused = responses.filter((r) => r.statusCode === 402);
  assert.equal(ok.length, 30);
  assert.equal(refused.length, 90);
  for (const r of ok) assert.equal(r.headers['x-credits-charged'], '1');
  for (const r of refused)
    assert.deepEqual(r.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
  const w = await wallet(db, accountId);
  assert.equal(w.balance, 0);
  assert.equal(w.ledgerSum, w.balance);
  assert.ok(w.lowest >= 0);
  assert.equal(w.usage, 1 + 2 + 30, 'the drain, the two warm-ups and the thirty paid requests');
});

test('TOKEN_CACHE_SIZE=0: no cache, no LISTEN connection, every request looks its token up', async () => {
  const { a, account, db } = await twoApps();
  const off = await composedApp(db, systemClock, { TOKEN_CACHE_SIZE: '0' });
  assert.equal((await snapshot(off, account.master)).statusCode, 200);
  assert.equal(off.parts.modules.tokens.cache.active, false);
  assert.equal(cached(off, account.master), false);
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%:listen'`.execute(
    db.db,
  );
  assert.equal(rows[0]!.n, 2, 'the two apps with a cache listen; the third does not');
  assert.equal((await snapshot(a, account.master)).statusCode, 200);
});
