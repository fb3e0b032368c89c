import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { settleWatchRequest } from '../src/modules/watchlist/jobs.ts';
import { findRequestByRef } from '../src/modules/watchlist/repo.ts';
import { bearer, createAccount, createManualClock, createTestApp, drainJobs, latestMail } from './helpers/app.ts';
import { nipFor } from './helpers/registry.ts';
import { accountIdOf, balance, ledger } from './watchlist-support.ts';

/**
 * A watchlist add charges `companies.add` per value newly queued; a value that ends not watched
 * gives back what it was charged, whatever `companies.add` costs when the request completes (its
 * job may run hours later, on a process started with other PRICES), and the request reports that
 * refund in credits, as it reports its charge.
 */

const clock = createManualClock('2026-11-21T10:00:00Z');
// No REGISTRY_SOURCES: an unknown identifier is not found, and refunded.
const t = await createTestApp({ clock, env: { PRICES: JSON.stringify({ 'companies.add': 3 }) } });
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);
const auth = bearer(acct.master);

const add = (values: string[]) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: auth,
    payload: { identifier_type: 'NIP', identifier_value: values },
  });
const requestView = async (ref: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/requests/${ref}`, headers: auth })).json().data;
const refundsOf = async (ref: string) =>
  (await ledger(t, accountId)).filter((r) => r.reference === `companies.add.refund:${ref}`).map((r) => r.amount);

test('a value not found is refunded the 3 credits it cost, and the request says credits_refunded 3 (not the 1 value)', async () => {
  const before = await balance(t, acct.master);
  const res = await add([nipFor(701)]);
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.json().credits_charged, 3);
  const ref = res.json().request_id;
  await drainJobs(t);
  const view = await requestView(ref);
  assert.deepEqual([view.status, view.items[0].status], ['completed', 'not_found']);
  assert.deepEqual({ charged: view.credits_charged, refunded: view.credits_refunded }, { charged: 3, refunded: 3 });
  assert.deepEqual(await refundsOf(ref), [3]);
  assert.equal(await balance(t, acct.master), before);
  assert.match((await latestMail(t, acct.email, 'watchlist'))!.text_body, /3 credits have been refunded/);
});

test('completed under another price (0, then 5 per value), a request still refunds what it was charged, no more, no less', async () => {
  for (const later of [0, 5]) {
    const before = await balance(t, acct.master);
    const res = await add([nipFor(710 + later)]);
    assert.equal(res.json().credits_charged, 3, res.body);
    const ref = res.json().request_id;
    const request = (await findRequestByRef(t.db.db, accountId, ref))!;
    const config = { ...t.config, prices: { ...t.config.prices, 'companies.add': later } };
    const outcome = await settleWatchRequest(
      { config, db: t.db.db, logger: pino({ level: 'silent' }), clock, importCompany: async () => ({ found: false }) },
      request.id,
    );
    assert.equal(outcome, 'completed');
    assert.deepEqual(await refundsOf(ref), [3], `refund under price ${later}`);
    assert.equal((await requestView(ref)).credits_refunded, 3);
    assert.equal(await balance(t, acct.master), before, `balance after a refund under price ${later}`);
  }
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});
