import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { runDaily } from '../src/registry/daily.ts';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { findCompaniesCharging, type ChargedRead } from '../src/modules/companies/repo.ts';
import { createTurnBatcher } from '../src/lib/turn-batcher.ts';
import { testConfig, bearer, createApiToken, createTestApp, type TestApp } from './helpers/app.ts';
import { accountWithBalance, balanceOf as balanceOfAccount } from './helpers/wallet.ts';
import { createTestDatabase } from './helpers/db.ts';
import { ALFA, BETA, COMPANIES, sourceOf } from './companies-dataset.test.ts';

/**
 * Snapshot charges batched in one statement (src/modules/wallet/ledger-batch.ts): per request,
 * exactly once, never below zero, the ledger chained and summing to the balance, also when several
 * requests of one account with too few credits share a batch, and when batches run concurrently.
 */
describe('snapshot charges in one statement', () => {
  let t: TestApp;
  const prices = testConfig().prices;

  before(async () => {
    const db = await createTestDatabase();
    await runDaily(db.db, { date: '2026-11-20', source: sourceOf(COMPANIES), sourceKey: 'file:snapshot-batch-test' });
    t = await createTestApp({ db, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  });

  const account = (balance: number) => accountWithBalance(t, balance);
  const read = (who: { id: string; tokenId: string }, value: string): ChargedRead => ({
    identifier: { type: 'NIP', value },
    charge: { accountId: who.id, operation: 'companies.snapshot', prices, ifTokenActive: { tokenId: who.tokenId, now: new Date() } },
  });
  const balanceOf = (id: string) => balanceOfAccount(t, id);

  test('one batch: a prefix of an account’s charges fits its balance, the rest are refused; not found and revoked tokens take nothing', async () => {
    assert.equal(prices['companies.snapshot'], 1);
    const a = await account(2);
    const b = await account(5);
    const revoked = await account(5);
    await sql`UPDATE api_tokens SET revoked_at = now() WHERE id = ${revoked.tokenId}::bigint`.execute(t.db.db);
    const out = await findCompaniesCharging(t.db.db, [
      read(a, ALFA),
      read(b, BETA),
      read(a, ALFA),
      read(a, '5261040828'), // valid, not stored
      read(revoked, ALFA),
      read(a, BETA),
      read(b, ALFA),
    ]);
    assert.deepEqual(
      out.map((o) => o && { nip: o.company.primary_identifier, attempt: o.attempt }),
      [
        { nip: ALFA, attempt: { taken: true, charged: 1, balanceAfter: 1 } },
        { nip: BETA, attempt: { taken: true, charged: 1, balanceAfter: 4 } },
        { nip: ALFA, attempt: { taken: true, charged: 1, balanceAfter: 0 } },
        null,
        { nip: ALFA, attempt: { taken: false, reason: 'inactive-token' } },
        { nip: BETA, attempt: { taken: false, reason: 'insufficient', balance: 0, required: 1 } },
        { nip: ALFA, attempt: { taken: true, charged: 1, balanceAfter: 3 } },
      ],
    );
    assert.equal(out[0]!.company.snapshot.identity?.identifiers[0]?.value, ALFA);
    assert.deepEqual([await balanceOf(a.id), await balanceOf(b.id), await balanceOf(revoked.id)], [0, 3, 5]);
    assert.deepEqual((await auditWallets(t.db.db)).findings, []);
  });

  test('concurrent batches over the same accounts: exactly the credits there were are taken, never below zero, the ledger chained', async () => {
    const accounts = await Promise.all([account(17), account(3), account(40)]);
    const batches = Array.from({ length: 12 }, (_, n) =>
      Array.from({ length: 9 }, (_, k) => read(accounts[(n + k) % accounts.length]!, k % 2 === 0 ? ALFA : BETA)),
    );
    const outs = (await Promise.all(batches.map((reads) => findCompaniesCharging(t.db.db, reads)))).flat();
    const taken = outs.filter((o) => o?.attempt.taken).length;
    const refused = outs.filter((o) => o && !o.attempt.taken);
    assert.equal(outs.length, 108);
    assert.equal(taken, 17 + 3 + 36, 'each account pays for exactly the snapshots its credits cover (36 asked of the third)');
    for (const o of refused) assert.deepEqual(o!.attempt, { taken: false, reason: 'insufficient', balance: 0, required: 1 });
    assert.deepEqual(await Promise.all(accounts.map((a) => balanceOf(a.id))), [0, 0, 4]);
    assert.deepEqual((await auditWallets(t.db.db)).findings, []);
  });

  test('over HTTP: concurrent snapshots of one account with too few credits, batched by the service', async () => {
    const a = await account(7);
    const api = await createApiToken(t, a.master);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/companies/snapshot',
          headers: bearer(i % 2 === 0 ? a.master : api.plaintext),
          payload: { identifier_type: 'NIP', identifier_value: i % 3 === 0 ? BETA : ALFA },
        }),
      ),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 7);
    assert.equal(responses.filter((r) => r.statusCode === 402).length, 23);
    assert.deepEqual(ok.map((r) => Number(r.headers['x-credits-remaining'])).sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(await balanceOf(a.id), 0);
    assert.deepEqual((await auditWallets(t.db.db)).findings, []);
  });
});

test('the turn batcher: calls of one turn in one run, each answered in order, a failure rejects its batch only', async () => {
  const runs: number[][] = [];
  const double = createTurnBatcher(async (xs: number[]) => {
    runs.push(xs);
    if (xs.includes(-1)) throw new Error('bad batch');
    return xs.map((x) => 2 * x);
  });
  assert.deepEqual(await Promise.all([double(1), double(2), double(3)]), [2, 4, 6]);
  const bad = Promise.allSettled([double(4), double(-1)]);
  await new Promise((r) => setImmediate(r));
  const good = double(5);
  assert.deepEqual(
    (await bad).map((s) => s.status),
    ['rejected', 'rejected'],
  );
  assert.equal(await good, 10);
  assert.deepEqual(runs, [[1, 2, 3], [4, -1], [5]]);
});

test('the turn batcher with maxInFlight: calls made while a batch runs wait and go together in the next', async () => {
  const runs: number[][] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const echo = createTurnBatcher(
    async (xs: number[]) => {
      runs.push(xs);
      if (runs.length === 1) await gate;
      return xs;
    },
    { maxInFlight: 1 },
  );
  const first = echo(1);
  await new Promise((r) => setImmediate(r));
  const later = [echo(2), echo(3)];
  await new Promise((r) => setImmediate(r));
  const last = echo(4);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(runs, [[1]], 'nothing else runs while the first batch is in flight');
  release();
  assert.deepEqual(await Promise.all([first, ...later, last]), [1, 2, 3, 4]);
  assert.deepEqual(runs, [[1], [2, 3, 4]]);
});
