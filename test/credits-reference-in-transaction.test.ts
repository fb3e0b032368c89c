import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { chargeCredits, refundCredits } from '../src/modules/wallet/credits.ts';
import type { Trx } from '../src/db/database.ts';
import { createAccount, createTestApp } from './helpers/app.ts';
import { accountIdOf, balance } from './watchlist-support.ts';

/**
 * docs/credits.md: a service charges (and refunds) inside its own transaction, and a `reference`
 * makes a retried call take nothing. When the first call's transaction is still open, the retry
 * waits for it; once it commits, the retry must learn "already charged" and its own transaction
 * must go on. A unique violation (23505) caught after the fact would have aborted that
 * transaction (every later statement 25P02), however the entry's result read.
 */

const t = await createTestApp();
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);

/** Two transactions applying `entry` with one reference, the second while the first is still open; each then reads on. */
async function twice<R>(entry: (trx: Trx) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  let firstApplied!: () => void;
  const applied = new Promise<void>((ok) => (firstApplied = ok));
  const first = t.db.db.transaction().execute(async (trx) => {
    const r = await entry(trx);
    firstApplied();
    // Long enough for the second to reach the wallet row and wait for this transaction.
    await new Promise((ok) => setTimeout(ok, 300));
    await trx.selectFrom('wallets').select('balance').where('account_id', '=', accountId).execute();
    return r;
  });
  const second = (async () => {
    await applied;
    return t.db.db.transaction().execute(async (trx) => {
      const r = await entry(trx);
      await trx.selectFrom('wallets').select('balance').where('account_id', '=', accountId).execute();
      return r;
    });
  })();
  return Promise.allSettled([first, second]);
}

const values = <R>(out: PromiseSettledResult<R>[]) =>
  out.map((o) => (o.status === 'fulfilled' ? o.value : `${(o.reason as Error).message} (${(o.reason as { code?: string }).code})`));

test('a charge retried with its reference while the first is uncommitted: taken once, both transactions commit', async () => {
  const before = await balance(t, acct.master);
  const out = await twice((trx) =>
    chargeCredits(trx, { accountId, operation: 'companies.add', units: 2, prices: t.config.prices, reference: 'retry:charge' }),
  );
  assert.deepEqual(values(out), [
    { charged: 2, balanceAfter: before - 2 },
    { charged: 0, balanceAfter: null },
  ]);
  assert.equal(await balance(t, acct.master), before - 2);
});

test('a refund retried with its reference while the first is uncommitted: given once, both transactions commit', async () => {
  const before = await balance(t, acct.master);
  const out = await twice((trx) => refundCredits(trx, { accountId, operation: 'companies.add', credits: 2, reference: 'retry:refund' }));
  assert.deepEqual(values(out), [{ refunded: 2 }, { refunded: 0 }]);
  assert.equal(await balance(t, acct.master), before + 2);
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});
