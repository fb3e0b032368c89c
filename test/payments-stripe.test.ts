import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { notificationFromStripeEvent } from '../src/modules/wallet/payments/stripe.ts';
import { bearer, createAccount, createTestApp, type TestApp } from './helpers/app.ts';
import { signWebhook, startFakeStripe, stripeEvent, type FakeStripe } from './helpers/fake-stripe.ts';

const SECRET_KEY = 'sk_test_51regwatchFAKEkey';
const WEBHOOK_SECRET = 'whsec_regwatch_test_secret';
const WEBHOOK = '/api/v1/wallet/webhooks/stripe';

async function stripeApp(fake: FakeStripe) {
  return createTestApp({
    env: { PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: fake.url },
  });
}

async function topup(t: TestApp, token: string, slug = 'credits-1000') {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/wallet/topup', headers: bearer(token), payload: { package_slug: slug } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { checkout_url: string; package: string; credits: number; payment_ref: string };
}

async function sessionOf(t: TestApp, fake: FakeStripe, paymentRef: string) {
  const p = await t.db.db
    .selectFrom('payments')
    .select('provider_session_id')
    .where('payment_ref', '=', paymentRef)
    .executeTakeFirstOrThrow();
  return fake.sessions.get(p.provider_session_id!)!;
}

function deliver(t: TestApp, payload: string, signature: string | undefined) {
  return t.app.inject({
    method: 'POST',
    url: WEBHOOK,
    payload,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(signature ? { 'stripe-signature': signature } : {}) },
  });
}

async function wallet(t: TestApp, token: string) {
  return (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(token) })).json().data as {
    balance: number;
    total_purchased: number;
  };
}

async function paymentStatus(t: TestApp, paymentRef: string) {
  return (await t.db.db.selectFrom('payments').select('status').where('payment_ref', '=', paymentRef).executeTakeFirstOrThrow()).status;
}

async function deposits(t: TestApp) {
  return t.db.db.selectFrom('wallet_transactions').select(['amount', 'reference']).where('type', '=', 'deposit').execute();
}

test('topup opens a Stripe Checkout Session with the package, the payer and the payment reference', async () => {
  const fake = await startFakeStripe({ secretKey: SECRET_KEY });
  const t = await stripeApp(fake);
  const a = await createAccount(t);
  const p = await topup(t, a.master, 'credits-5000');
  const session = await sessionOf(t, fake, p.payment_ref);
  assert.equal(p.checkout_url, session.url);
  assert.match(p.checkout_url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
  assert.equal(p.credits, 5000);

  const req = fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions')!;
  assert.equal(req.headers.authorization, `Bearer ${SECRET_KEY}`);
  assert.equal(req.headers['idempotency-key'], `checkout-${p.payment_ref}`);
  assert.equal(req.form.mode, 'payment');
  assert.equal(req.form.client_reference_id, p.payment_ref);
  assert.equal(req.form['metadata[payment_ref]'], p.payment_ref);
  assert.equal(req.form['line_items[0][price_data][currency]'], 'pln');
  assert.equal(req.form['line_items[0][price_data][unit_amount]'], '19900');
  assert.equal(req.form['line_items[0][quantity]'], '1');
  assert.equal(req.form.customer_email, a.email);
  assert.equal(req.form.success_url, `${t.config.publicBaseUrl}/api/v1/wallet/checkout/${p.payment_ref}?result=success`);
  assert.equal(req.form.cancel_url, `${t.config.publicBaseUrl}/api/v1/wallet/checkout/${p.payment_ref}?result=cancel`);
  const ttl = Number(req.form.expires_at) - Date.now() / 1000;
  assert.ok(ttl > 30 * 60 && ttl <= 24 * 3600, `expires in ${ttl} s`);

  const row = await t.db.db.selectFrom('payments').selectAll().where('payment_ref', '=', p.payment_ref).executeTakeFirstOrThrow();
  assert.equal(row.provider, 'stripe');
  assert.equal(row.status, 'pending');
  assert.equal(row.expires_at.getTime(), session.expires_at * 1000);

  // The dev form does not exist in Stripe mode: no free credits through it.
  const devPay = await t.app.inject({ method: 'POST', url: `/api/v1/wallet/checkout/${p.payment_ref}`, payload: { action: 'pay' } });
  assert.ok(devPay.statusCode === 404 || devPay.statusCode === 405, String(devPay.statusCode));
  const page = await t.app.inject({ method: 'GET', url: `/api/v1/wallet/checkout/${p.payment_ref}?result=success` });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /data-status="pending"/);
  assert.doesNotMatch(page.body, /<form/);
  assert.deepEqual(await wallet(t, a.master), { balance: 100, total_purchased: 0 });
});

test('a signed checkout.session.completed credits once; tampered, wrongly signed, stale and unsigned deliveries are refused', async () => {
  const fake = await startFakeStripe();
  const t = await stripeApp(fake);
  const a = await createAccount(t);
  const p = await topup(t, a.master);
  const session = fake.complete((await sessionOf(t, fake, p.payment_ref)).id);
  const payload = stripeEvent('checkout.session.completed', session);

  const tampered = payload.replace('"amount_total":4900', '"amount_total":1');
  assert.notEqual(tampered, payload);
  const refusals = [
    await deliver(t, tampered, signWebhook(payload, WEBHOOK_SECRET)),
    await deliver(t, payload, signWebhook(payload, 'whsec_someone_else')),
    await deliver(t, payload, signWebhook(payload, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 600)),
    await deliver(t, payload, undefined),
    await deliver(t, payload, 't=123,v1=deadbeef'),
  ];
  for (const r of refusals) {
    assert.equal(r.statusCode, 400, r.body);
    assert.deepEqual(r.json(), { message: 'Invalid webhook signature.' });
  }
  assert.equal(await paymentStatus(t, p.payment_ref), 'pending');
  assert.deepEqual(await wallet(t, a.master), { balance: 100, total_purchased: 0 });

  // Signed, but with no session in it: acknowledged and ignored, not a 500 Stripe would retry.
  for (const empty of ['{"type":"checkout.session.completed"}', '{"type":"checkout.session.completed","data":{}}']) {
    const r = await deliver(t, empty, signWebhook(empty, WEBHOOK_SECRET));
    assert.equal(r.statusCode, 200, r.body);
  }
  assert.equal(await paymentStatus(t, p.payment_ref), 'pending');

  const ok = await deliver(t, payload, signWebhook(payload, WEBHOOK_SECRET));
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(ok.json(), { received: true });
  assert.equal(await paymentStatus(t, p.payment_ref), 'confirmed');
  assert.deepEqual(await wallet(t, a.master), { balance: 1100, total_purchased: 1000 });

  // Stripe repeats deliveries (a lost answer, a retry): each is acknowledged, none credits again.
  for (let i = 0; i < 3; i++) {
    const again = await deliver(t, payload, signWebhook(payload, WEBHOOK_SECRET));
    assert.equal(again.statusCode, 200);
  }
  const resent = stripeEvent('checkout.session.completed', session);
  assert.equal((await deliver(t, resent, signWebhook(resent, WEBHOOK_SECRET))).statusCode, 200);
  assert.deepEqual(await wallet(t, a.master), { balance: 1100, total_purchased: 1000 });
  assert.deepEqual(await deposits(t), [{ amount: '1000', reference: `payment:${p.payment_ref}` }]);
  const view = (await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${p.payment_ref}`, headers: bearer(a.master) })).json()
    .data;
  assert.equal(view.status, 'confirmed');
  assert.equal(view.provider, 'stripe');
});

test('the same notification delivered 25 times at once credits once', async () => {
  const fake = await startFakeStripe();
  const t = await stripeApp(fake);
  const a = await createAccount(t);
  const p = await topup(t, a.master, 'credits-25000');
  const session = fake.complete((await sessionOf(t, fake, p.payment_ref)).id);
  const completed = stripeEvent('checkout.session.completed', session);
  const succeeded = stripeEvent('checkout.session.async_payment_succeeded', session);
  const results = await Promise.all(
    Array.from({ length: 25 }, (_, i) => {
      const body = i % 2 ? completed : succeeded;
      return deliver(t, body, signWebhook(body, WEBHOOK_SECRET));
    }),
  );
  assert.deepEqual(
    results.map((r) => r.statusCode),
    Array(25).fill(200),
  );
  assert.deepEqual(await wallet(t, a.master), { balance: 25_100, total_purchased: 25_000 });
  assert.equal((await deposits(t)).length, 1);
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('delayed payment methods: completed-unpaid stays pending until async_payment_succeeded; async_payment_failed and expired close it', async () => {
  const fake = await startFakeStripe();
  const t = await stripeApp(fake);
  const a = await createAccount(t);

  const delayed = await topup(t, a.master);
  const s1 = fake.complete((await sessionOf(t, fake, delayed.payment_ref)).id, 'unpaid');
  const unpaid = stripeEvent('checkout.session.completed', s1);
  assert.equal((await deliver(t, unpaid, signWebhook(unpaid, WEBHOOK_SECRET))).statusCode, 200);
  assert.equal(await paymentStatus(t, delayed.payment_ref), 'pending');
  assert.equal((await wallet(t, a.master)).balance, 100);
  s1.payment_status = 'paid';
  const paid = stripeEvent('checkout.session.async_payment_succeeded', s1);
  assert.equal((await deliver(t, paid, signWebhook(paid, WEBHOOK_SECRET))).statusCode, 200);
  assert.equal(await paymentStatus(t, delayed.payment_ref), 'confirmed');
  assert.equal((await wallet(t, a.master)).balance, 1100);

  const failing = await topup(t, a.master);
  const s2 = fake.complete((await sessionOf(t, fake, failing.payment_ref)).id, 'unpaid');
  const failed = stripeEvent('checkout.session.async_payment_failed', s2);
  assert.equal((await deliver(t, failed, signWebhook(failed, WEBHOOK_SECRET))).statusCode, 200);
  assert.equal(await paymentStatus(t, failing.payment_ref), 'failed');
  // A later (forged or confused) success cannot revive a failed payment.
  s2.payment_status = 'paid';
  const late = stripeEvent('checkout.session.async_payment_succeeded', s2);
  assert.equal((await deliver(t, late, signWebhook(late, WEBHOOK_SECRET))).statusCode, 200);
  assert.equal(await paymentStatus(t, failing.payment_ref), 'failed');

  const abandoned = await topup(t, a.master);
  const s3 = await sessionOf(t, fake, abandoned.payment_ref);
  s3.status = 'expired';
  const expired = stripeEvent('checkout.session.expired', s3);
  assert.equal((await deliver(t, expired, signWebhook(expired, WEBHOOK_SECRET))).statusCode, 200);
  assert.equal(await paymentStatus(t, abandoned.payment_ref), 'expired');
  assert.match(
    (await t.app.inject({ method: 'GET', url: `/api/v1/wallet/checkout/${abandoned.payment_ref}` })).body,
    /data-status="expired"/,
  );

  assert.deepEqual(await wallet(t, a.master), { balance: 1100, total_purchased: 1000 });
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('events that concern no payment of ours are acknowledged and change nothing', async () => {
  const fake = await startFakeStripe();
  const t = await stripeApp(fake);
  const a = await createAccount(t);
  const p = await topup(t, a.master);
  const ours = await sessionOf(t, fake, p.payment_ref);

  const other = stripeEvent('payment_intent.succeeded', { id: 'pi_123', object: 'payment_intent', amount: 4900 });
  const stranger = stripeEvent('checkout.session.completed', {
    ...ours,
    id: 'cs_test_someone_else',
    client_reference_id: null,
    metadata: {},
    payment_status: 'paid',
    status: 'complete',
  });
  // Our payment reference on a session that is not the one we opened for it.
  const hijack = stripeEvent('checkout.session.completed', { ...ours, id: 'cs_test_forged', payment_status: 'paid', status: 'complete' });
  for (const body of [other, stranger, hijack]) {
    const r = await deliver(t, body, signWebhook(body, WEBHOOK_SECRET));
    assert.equal(r.statusCode, 200, r.body);
  }
  assert.equal(await paymentStatus(t, p.payment_ref), 'pending');
  assert.equal((await wallet(t, a.master)).balance, 100);
});

test('Stripe unreachable: topup answers 502 and the payment is recorded as failed', async () => {
  const fake = await startFakeStripe();
  const t = await stripeApp(fake);
  const a = await createAccount(t);
  fake.failing = true;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(a.master),
    payload: { package_slug: 'credits-1000' },
  });
  assert.equal(res.statusCode, 502);
  assert.deepEqual(Object.keys(res.json()), ['message']);
  assert.doesNotMatch(res.body, /127\.0\.0\.1|stripe/i);
  const rows = await t.db.db.selectFrom('payments').select(['status', 'completed_at']).execute();
  assert.equal(rows.length, 1);
  assert.equal(rows[0].status, 'failed');
  assert.ok(rows[0].completed_at);
});

test('the webhook route does not exist without Stripe settings', async () => {
  const t = await createTestApp();
  const body = stripeEvent('checkout.session.completed', {});
  const r = await deliver(t, body, signWebhook(body, WEBHOOK_SECRET));
  assert.equal(r.statusCode, 404);
});

test('notificationFromStripeEvent maps each checkout event', () => {
  const session = {
    id: 'cs_1',
    object: 'checkout.session',
    client_reference_id: 'pay_a',
    metadata: { payment_ref: 'pay_b' },
    payment_status: 'paid',
    status: 'complete',
  };
  const ev = (type: string, s: object = session) => JSON.parse(stripeEvent(type, s));
  assert.deepEqual(notificationFromStripeEvent(ev('checkout.session.completed')), {
    paymentRef: 'pay_b',
    sessionId: 'cs_1',
    outcome: 'paid',
  });
  assert.equal(notificationFromStripeEvent(ev('checkout.session.completed', { ...session, payment_status: 'unpaid' })), null);
  assert.deepEqual(notificationFromStripeEvent(ev('checkout.session.async_payment_succeeded', { ...session, metadata: {} })), {
    paymentRef: 'pay_a',
    sessionId: 'cs_1',
    outcome: 'paid',
  });
  assert.deepEqual(notificationFromStripeEvent(ev('checkout.session.async_payment_failed')), {
    paymentRef: 'pay_b',
    sessionId: 'cs_1',
    outcome: 'failed',
  });
  assert.deepEqual(
    notificationFromStripeEvent(ev('checkout.session.expired', { ...session, status: 'expired', payment_status: 'unpaid' })),
    { paymentRef: 'pay_b', sessionId: 'cs_1', outcome: 'expired' },
  );
  assert.equal(notificationFromStripeEvent(ev('charge.refunded')), null);
});
