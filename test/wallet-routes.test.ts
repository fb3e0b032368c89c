import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { bearer, createAccount, createApiToken, createManualClock, createTestApp, type TestApp } from './helpers/app.ts';

const TIMESTAMP_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

async function accountId(t: TestApp, userRef: string): Promise<string> {
  const a = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', userRef).executeTakeFirstOrThrow();
  return a.id;
}

async function topup(t: TestApp, token: string, slug = 'credits-1000') {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/wallet/topup', headers: bearer(token), payload: { package_slug: slug } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { checkout_url: string; package: string; credits: number; payment_ref: string };
}

const checkoutPath = (checkoutUrl: string) => new URL(checkoutUrl).pathname;

test('every wallet route answers 401 without a valid token', async () => {
  const t = await createTestApp();
  const routes = [
    { method: 'GET' as const, url: '/api/v1/wallet' },
    { method: 'GET' as const, url: '/api/v1/wallet/transactions' },
    { method: 'GET' as const, url: '/api/v1/wallet/packages' },
    { method: 'POST' as const, url: '/api/v1/wallet/topup', payload: { package_slug: 'credits-1000' } },
    { method: 'GET' as const, url: '/api/v1/wallet/payments/pay_x' },
  ];
  for (const r of routes) {
    const none = await t.app.inject({ method: r.method, url: r.url, payload: r.payload });
    assert.equal(none.statusCode, 401, `${r.method} ${r.url}`);
    assert.deepEqual(none.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });
    const malformed = await t.app.inject({ method: r.method, url: r.url, payload: r.payload, headers: bearer('nope') });
    assert.equal(malformed.statusCode, 401);
    assert.equal(malformed.json().error, 'Malformed token format');
    const unknown = await t.app.inject({ method: r.method, url: r.url, payload: r.payload, headers: bearer(`sk_api_${'x'.repeat(40)}`) });
    assert.equal(unknown.statusCode, 401);
    assert.equal(unknown.json().error, 'Invalid API token');
  }
  assert.equal(await t.db.db.selectFrom('payments').select('id').executeTakeFirst(), undefined, 'no payment was opened');
});

test('GET /wallet: the welcome balance, in the status envelope, for the Master Token and an API token', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const api = await createApiToken(t, a.master);
  for (const token of [a.master, api.plaintext]) {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'success', data: { balance: 100, total_purchased: 0 } });
  }
});

test('GET /wallet/transactions: the start row, its formats and the pagination meta', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: bearer(a.master) });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['data', 'meta', 'status']);
  assert.equal(body.status, 'success');
  assert.equal(body.data.length, 1);
  const [start] = body.data;
  assert.deepEqual(Object.keys(start).sort(), ['amount', 'balance_after', 'created_at', 'description', 'type']);
  assert.equal(start.type, 'start');
  assert.equal(start.amount, '100.00');
  assert.equal(start.balance_after, '100.00');
  assert.equal(typeof start.description, 'string');
  assert.match(start.created_at, TIMESTAMP_US);
  assert.ok(Math.abs(Date.parse(start.created_at) - Date.now()) < 60_000);
  assert.deepEqual(body.meta, { total: 1, per_page: 20, current_page: 1, last_page: 1, next_page: null, prev_page: null });
});

test('GET /wallet/transactions: newest first over pages, per_page 1..100, bad queries 422', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const id = await accountId(t, a.userRef);
  for (let i = 1; i <= 44; i++) {
    const r = await applyLedgerEntry(t.db.db, { accountId: id, type: 'usage', amount: -1, description: `companies.search` });
    assert.equal(r.applied, true);
  }
  const page = async (q: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/transactions${q}`, headers: bearer(a.master) });
    return res;
  };
  const p1 = (await page('')).json();
  assert.equal(p1.data.length, 20);
  assert.deepEqual(p1.meta, { total: 45, per_page: 20, current_page: 1, last_page: 3, next_page: 2, prev_page: null });
  assert.deepEqual(p1.data[0], { ...p1.data[0], type: 'usage', amount: '-1.00', balance_after: '56.00', description: 'companies.search' });
  const p3 = (await page('?page=3')).json();
  assert.equal(p3.data.length, 5);
  assert.deepEqual(p3.meta, { total: 45, per_page: 20, current_page: 3, last_page: 3, next_page: null, prev_page: 2 });
  assert.equal(p3.data.at(-1).type, 'start');
  const past = (await page('?page=9')).json();
  assert.deepEqual(past.data, []);
  assert.equal(past.meta.prev_page, 3);
  assert.equal(past.meta.next_page, null);

  const all = (await page('?per_page=100')).json();
  assert.equal(all.data.length, 45);
  assert.equal(all.meta.last_page, 1);
  // Newest first, and each balance_after is the next older one plus its amount.
  for (let i = 0; i < all.data.length - 1; i++) {
    assert.equal(Number(all.data[i + 1].balance_after) + Number(all.data[i].amount), Number(all.data[i].balance_after));
    assert.ok(all.data[i].created_at >= all.data[i + 1].created_at);
  }
  const concatenated = [...p1.data, ...(await page('?page=2')).json().data, ...p3.data];
  assert.deepEqual(concatenated, all.data);
  const one = (await page('?per_page=1&page=2')).json();
  assert.deepEqual(one.meta, { total: 45, per_page: 1, current_page: 2, last_page: 45, next_page: 3, prev_page: 1 });

  for (const [q, field] of [
    ['?per_page=0', 'per_page'],
    ['?per_page=101', 'per_page'],
    ['?page=0', 'page'],
    ['?page=abc', 'page'],
    ['?per_page=2.5', 'per_page'],
    ['?page=99999999999', 'page'],
  ] as const) {
    const res = await page(q);
    assert.equal(res.statusCode, 422, q);
    const b = res.json();
    assert.ok(Array.isArray(b.errors[field]), `${q}: ${res.body}`);
    assert.equal(b.message, b.errors[field][0]);
  }
});

test('GET /wallet/packages: the configured packages with prices; configurable', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/wallet/packages', headers: bearer(a.master) });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    status: 'success',
    data: [
      { slug: 'credits-1000', credits: 1000, price: '49.00', currency: 'PLN' },
      { slug: 'credits-5000', credits: 5000, price: '199.00', currency: 'PLN' },
      { slug: 'credits-25000', credits: 25000, price: '799.00', currency: 'PLN' },
    ],
  });

  const custom = await createTestApp({
    env: { CREDIT_PACKAGES: JSON.stringify([{ slug: 'starter', credits: 10, amount: 150, currency: 'eur' }]) },
  });
  const b = await createAccount(custom);
  const res2 = await custom.app.inject({ method: 'GET', url: '/api/v1/wallet/packages', headers: bearer(b.master) });
  assert.deepEqual(res2.json().data, [{ slug: 'starter', credits: 10, price: '1.50', currency: 'EUR' }]);
  const bad = await custom.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(b.master),
    payload: { package_slug: 'credits-1000' },
  });
  assert.equal(bad.statusCode, 422);
  const ok = await custom.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(b.master),
    payload: { package_slug: 'starter' },
  });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.json().data.credits, 10);
});

test('POST /wallet/topup: a pending payment and its dev checkout URL; body errors 422', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const api = await createApiToken(t, a.master);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(api.plaintext),
    payload: { package_slug: 'credits-5000' },
  });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.equal(body.status, 'success');
  assert.equal(body.data.package, 'credits-5000');
  assert.equal(body.data.credits, 5000);
  assert.equal(body.data.status, 'pending');
  assert.equal(body.data.price, '199.00');
  assert.match(body.data.payment_ref, /^pay_[0-9A-Za-z]{24}$/);
  assert.equal(body.data.checkout_url, `${t.config.publicBaseUrl}/api/v1/wallet/checkout/${body.data.payment_ref}`);
  const row = await t.db.db.selectFrom('payments').selectAll().where('payment_ref', '=', body.data.payment_ref).executeTakeFirstOrThrow();
  assert.equal(row.status, 'pending');
  assert.equal(row.provider, 'dev');
  assert.equal(row.credits, 5000);
  assert.equal(row.amount, 19900);
  assert.equal(row.completed_at, null);

  const cases: [unknown, string][] = [
    [{ package_slug: 'credits-999' }, 'package_slug'],
    [{}, 'package_slug'],
    [{ package_slug: 1000 }, 'package_slug'],
    [{ package_slug: '' }, 'package_slug'],
    [{ package_slug: 'x'.repeat(65) }, 'package_slug'],
  ];
  for (const [payload, field] of cases) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/wallet/topup', headers: bearer(a.master), payload: payload as object });
    assert.equal(r.statusCode, 422, JSON.stringify(payload));
    const b = r.json();
    assert.ok(b.errors[field]?.length, r.body);
    assert.equal(b.message, b.errors[field][0]);
  }
  const unknown = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(a.master),
    payload: { package_slug: 'credits-999' },
  });
  assert.match(unknown.json().errors.package_slug[0], /invalid.*credits-1000, credits-5000, credits-25000/);
  const notJson = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: { ...bearer(a.master), 'content-type': 'application/json' },
    payload: '{nope',
  });
  assert.equal(notJson.statusCode, 400);
  assert.equal(
    (
      await t.db.db
        .selectFrom('payments')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
    '1',
  );
});

test('dev checkout: Pay credits once however often it is sent; the ledger, wallet and payment agree', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const p = await topup(t, a.master);
  const path = checkoutPath(p.checkout_url);

  const page = await t.app.inject({ method: 'GET', url: path });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.equal((page.body.match(/<form/g) ?? []).length, 1);
  assert.match(page.body, /<button type="submit" name="action" value="pay">Pay<\/button>/);
  assert.match(page.body, /<button type="submit" name="action" value="cancel">Cancel<\/button>/);

  // The form submission: a redirect to the page (Post/Redirect/Get).
  const submitted = await t.app.inject({
    method: 'POST',
    url: path,
    payload: 'action=pay',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(submitted.statusCode, 303);
  assert.equal(submitted.headers.location, p.payment_ref);
  const after = await t.app.inject({ method: 'GET', url: path });
  assert.match(after.body, /data-status="confirmed"/);
  assert.doesNotMatch(after.body, /<form/);

  for (let i = 0; i < 3; i++) {
    const again = await t.app.inject({ method: 'POST', url: path, payload: { action: 'pay' }, headers: { accept: 'application/json' } });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.status, 'confirmed');
  }
  await Promise.all(
    Array.from({ length: 10 }, () =>
      t.app.inject({ method: 'POST', url: path, payload: 'action=pay', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    ),
  );

  const wallet = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data;
  assert.deepEqual(wallet, { balance: 1100, total_purchased: 1000 });
  const tx = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: bearer(a.master) })).json();
  assert.equal(tx.meta.total, 2);
  assert.equal(tx.data[0].type, 'deposit');
  assert.equal(tx.data[0].amount, '1000.00');
  assert.equal(tx.data[0].balance_after, '1100.00');
  assert.match(tx.data[0].description, new RegExp(p.payment_ref));

  const status = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${p.payment_ref}`, headers: bearer(a.master) });
  assert.equal(status.statusCode, 200);
  const d = status.json().data;
  assert.equal(d.status, 'confirmed');
  assert.equal(d.checkout_url, null);
  assert.ok(d.completed_at);
  // Cancel after paying cannot undo it.
  const cancel = await t.app.inject({ method: 'POST', url: path, payload: { action: 'cancel' } });
  assert.equal(cancel.statusCode, 409);
  assert.match(cancel.json().message, /confirmed/);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data.balance, 1100);
});

test('dev checkout: Cancel fails the payment and credits nothing; Pay afterwards is refused', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const p = await topup(t, a.master);
  const path = checkoutPath(p.checkout_url);
  const cancel = await t.app.inject({
    method: 'POST',
    url: path,
    payload: 'action=cancel',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(cancel.statusCode, 303);
  assert.match((await t.app.inject({ method: 'GET', url: path })).body, /data-status="failed"/);
  const pay = await t.app.inject({ method: 'POST', url: path, payload: { action: 'pay' } });
  assert.equal(pay.statusCode, 409);
  assert.equal(pay.json().message, 'The payment has failed: it can no longer be paid.');
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 100,
    total_purchased: 0,
  });
  const json = await t.app.inject({ method: 'GET', url: path, headers: { accept: 'application/json' } });
  assert.equal(json.json().data.status, 'failed');
  assert.equal(json.json().data.credits, 1000);
});

test('dev checkout: no action means Pay; a bad action 422; unknown references 404; an expired checkout cannot be paid', async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  const a = await createAccount(t);
  const p = await topup(t, a.master);
  const bad = await t.app.inject({ method: 'POST', url: checkoutPath(p.checkout_url), payload: { action: 'refund' } });
  assert.equal(bad.statusCode, 422);
  assert.ok(bad.json().errors.action);
  const implicit = await t.app.inject({
    method: 'POST',
    url: checkoutPath(p.checkout_url),
    payload: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(implicit.statusCode, 303);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data.balance, 1100);

  for (const accept of ['text/html', 'application/json']) {
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/wallet/checkout/pay_doesnotexist', headers: { accept } });
    assert.equal(missing.statusCode, 404);
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/wallet/checkout/pay_doesnotexist',
      payload: { action: 'pay' },
      headers: { accept },
    });
    assert.equal(post.statusCode, 404);
  }

  // Past its expiry a dev checkout reads as expired at once, before any job or Pay has closed it.
  const lapsed = await topup(t, a.master);
  clock.advance(61 * 60 * 1000);
  const read = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${lapsed.payment_ref}`, headers: bearer(a.master) });
  assert.equal(read.json().data.status, 'expired', read.body);
  const page = await t.app.inject({ method: 'GET', url: checkoutPath(lapsed.checkout_url), headers: { accept: 'application/json' } });
  assert.equal(page.json().data.status, 'expired');

  const late = await topup(t, a.master);
  clock.advance(61 * 60 * 1000);
  const lateRead = await t.app.inject({ method: 'GET', url: checkoutPath(late.checkout_url), headers: { accept: 'application/json' } });
  assert.equal(lateRead.json().data.status, 'expired');
  const pay = await t.app.inject({ method: 'POST', url: checkoutPath(late.checkout_url), payload: { action: 'pay' } });
  assert.equal(pay.statusCode, 409);
  assert.match(pay.json().message, /expired/);
  assert.match((await t.app.inject({ method: 'GET', url: checkoutPath(late.checkout_url) })).body, /data-status="expired"/);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data.balance, 1100);
});

test("another account's wallet, ledger and payments are never visible", async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const b = await createAccount(t);
  const p = await topup(t, a.master);
  await t.app.inject({ method: 'POST', url: checkoutPath(p.checkout_url), payload: { action: 'pay' } });
  await applyLedgerEntry(t.db.db, {
    accountId: await accountId(t, a.userRef),
    type: 'usage',
    amount: -7,
    description: 'companies.snapshot',
  });

  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 1093,
    total_purchased: 1000,
  });
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(b.master) })).json().data, {
    balance: 100,
    total_purchased: 0,
  });
  const txB = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: bearer(b.master) })).json();
  assert.equal(txB.meta.total, 1);
  assert.deepEqual(
    txB.data.map((r: { type: string }) => r.type),
    ['start'],
  );
  const txA = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: bearer(a.master) })).json();
  assert.deepEqual(
    txA.data.map((r: { type: string }) => r.type),
    ['usage', 'deposit', 'start'],
  );

  const foreign = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${p.payment_ref}`, headers: bearer(b.master) });
  assert.equal(foreign.statusCode, 404);
  assert.deepEqual(foreign.json(), { message: 'Payment not found' });
  const missing = await t.app.inject({ method: 'GET', url: '/api/v1/wallet/payments/pay_nothere', headers: bearer(b.master) });
  assert.deepEqual(missing.json(), { message: 'Payment not found' });
  const tooLong = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${'x'.repeat(65)}`, headers: bearer(b.master) });
  assert.equal(tooLong.statusCode, 404, 'an id that names nothing, whatever its length');
  assert.deepEqual(tooLong.json(), { message: 'Payment not found' });
});

test('the wallet routes are free: reading them takes no credits', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  for (const url of ['/api/v1/wallet', '/api/v1/wallet/transactions', '/api/v1/wallet/packages']) {
    await t.app.inject({ method: 'GET', url, headers: bearer(a.master) });
  }
  await topup(t, a.master);
  const w = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data;
  assert.equal(w.balance, 100);
  assert.equal((await t.db.db.selectFrom('wallet_transactions').select('id').where('type', '=', 'usage').execute()).length, 0);
});
