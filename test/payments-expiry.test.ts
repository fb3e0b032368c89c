import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCrontab } from 'graphile-worker';
import pino from 'pino';
import { addJob } from '../src/jobs/queue.ts';
import { compose } from '../src/composition.ts';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { EXPIRE_PAYMENTS_TASK } from '../src/modules/wallet/jobs.ts';
import { bearer, createAccount, createManualClock, createTestApp, drainJobs, testConfig, type TestApp } from './helpers/app.ts';
import { startFakeStripe } from './helpers/fake-stripe.ts';

const MINUTE = 60_000;

async function topup(t: TestApp, token: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(token),
    payload: { package_slug: 'credits-1000' },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { checkout_url: string; payment_ref: string };
}

async function runExpiryJob(t: TestApp) {
  await addJob(t.db.db, EXPIRE_PAYMENTS_TASK, {});
  await drainJobs(t);
}

async function statusOf(t: TestApp, ref: string) {
  return t.db.db.selectFrom('payments').select(['status', 'completed_at']).where('payment_ref', '=', ref).executeTakeFirstOrThrow();
}

/** A test app on the fake Stripe, with a manual clock, one account and a lookup of a payment's session. */
async function stripeApp(env: Record<string, string> = {}) {
  const fake = await startFakeStripe();
  const clock = createManualClock(new Date());
  const t = await createTestApp({
    clock,
    env: {
      PAYMENT_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_x',
      STRIPE_WEBHOOK_SECRET: 'whsec_x',
      STRIPE_API_BASE: fake.url,
      ...env,
    },
  });
  const a = await createAccount(t);
  const sessionOf = async (ref: string) =>
    (await t.db.db.selectFrom('payments').select('provider_session_id').where('payment_ref', '=', ref).executeTakeFirstOrThrow())
      .provider_session_id!;
  return { fake, clock, t, a, sessionOf };
}

test('the expiry job is registered with a UTC crontab line that parses', async () => {
  const parts = compose({
    config: testConfig(),
    db: undefined as never,
    logger: pino({ level: 'silent' }),
    clock: createManualClock('2026-01-01T00:00:00Z'),
  });
  const wallet = parts.jobs.find((m) => EXPIRE_PAYMENTS_TASK in m.tasks);
  assert.ok(wallet, 'a job module defines the expiry task');
  const items = parseCrontab(wallet.crontab!.join('\n'));
  assert.equal(items.length, 1);
  assert.equal(items[0].task, EXPIRE_PAYMENTS_TASK);
  assert.equal(items[0].options.maxAttempts, 3);
  assert.equal(items[0].options.jobKey, EXPIRE_PAYMENTS_TASK);
  await parts.close();
});

test('dev: pending payments past their expiry become expired; confirmed ones are untouched; the page and the form follow', async () => {
  const clock = createManualClock(new Date());
  const t = await createTestApp({ clock });
  const a = await createAccount(t);
  const stale = await topup(t, a.master);
  const paid = await topup(t, a.master);
  assert.equal(
    (await t.app.inject({ method: 'POST', url: new URL(paid.checkout_url).pathname, payload: { action: 'pay' } })).statusCode,
    200,
  );

  clock.advance(30 * MINUTE);
  await runExpiryJob(t);
  assert.equal((await statusOf(t, stale.payment_ref)).status, 'pending');

  clock.advance(31 * MINUTE);
  await runExpiryJob(t);
  const s = await statusOf(t, stale.payment_ref);
  assert.equal(s.status, 'expired');
  assert.equal(s.completed_at?.getTime(), clock.now().getTime());
  assert.equal((await statusOf(t, paid.payment_ref)).status, 'confirmed');
  await runExpiryJob(t);
  assert.equal((await statusOf(t, stale.payment_ref)).completed_at?.getTime(), s.completed_at?.getTime(), 'a second run changes nothing');

  const pay = await t.app.inject({ method: 'POST', url: new URL(stale.checkout_url).pathname, payload: { action: 'pay' } });
  assert.equal(pay.statusCode, 409);
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 1100,
    total_purchased: 1000,
  });
});

test('stripe: a stale checkout is asked about first: open ones are expired at Stripe, paid ones confirmed, delayed ones left pending', async () => {
  const { fake, clock, t, a, sessionOf } = await stripeApp();

  const open = await topup(t, a.master);
  const missedWebhook = await topup(t, a.master);
  const delayed = await topup(t, a.master);
  fake.complete(await sessionOf(missedWebhook.payment_ref), 'paid');
  fake.complete(await sessionOf(delayed.payment_ref), 'unpaid');

  clock.advance(61 * MINUTE);
  fake.failing = true;
  await runExpiryJob(t);
  for (const p of [open, missedWebhook, delayed])
    assert.equal((await statusOf(t, p.payment_ref)).status, 'pending', 'Stripe down: nothing is decided');
  fake.failing = false;

  await runExpiryJob(t);
  assert.equal((await statusOf(t, open.payment_ref)).status, 'expired');
  assert.equal(
    fake.sessions.get(await sessionOf(open.payment_ref))!.status,
    'expired',
    'closed at Stripe too, so it cannot be paid any more',
  );
  assert.ok(fake.requests.some((r) => r.method === 'POST' && r.path.endsWith('/expire')));
  assert.equal((await statusOf(t, missedWebhook.payment_ref)).status, 'confirmed');
  assert.equal((await statusOf(t, delayed.payment_ref)).status, 'pending');

  await runExpiryJob(t);
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 1100,
    total_purchased: 1000,
  });
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('stripe: payments that stay pending do not starve the others: a paid top-up behind 200 of them is confirmed', async () => {
  const { fake, clock, t, a, sessionOf } = await stripeApp({ RATE_LIMIT_PER_MINUTE: '100000' });

  // A delayed payment method: each session is complete but unpaid, so the job leaves it pending.
  for (let i = 0; i < 200; i++) fake.complete(await sessionOf((await topup(t, a.master)).payment_ref), 'unpaid');
  clock.advance(MINUTE);
  const paid = await topup(t, a.master);
  fake.complete(await sessionOf(paid.payment_ref), 'paid'); // and its webhook never came

  clock.advance(61 * MINUTE);
  await runExpiryJob(t);
  assert.equal((await statusOf(t, paid.payment_ref)).status, 'confirmed');
  const pending = await t.db.db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  assert.equal(Number(pending.n), 200, 'the delayed ones are still pending');
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 1100,
    total_purchased: 1000,
  });
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('stripe: a delayed payment whose failure webhook was lost fails at the next expiry run; one still processing stays pending', async () => {
  const { fake, clock, t, a, sessionOf } = await stripeApp();
  const failed = await topup(t, a.master);
  const processing = await topup(t, a.master);
  fake.complete(await sessionOf(failed.payment_ref), 'unpaid');
  fake.complete(await sessionOf(processing.payment_ref), 'unpaid');
  fake.failDelayed(await sessionOf(failed.payment_ref)); // and checkout.session.async_payment_failed never came

  clock.advance(61 * MINUTE);
  await runExpiryJob(t);
  const s = await statusOf(t, failed.payment_ref);
  assert.equal(s.status, 'failed');
  assert.equal(s.completed_at?.getTime(), clock.now().getTime());
  assert.equal((await statusOf(t, processing.payment_ref)).status, 'pending', 'a debit still in flight is waited for');
  assert.ok(fake.requests.some((r) => r.method === 'GET' && r.path.startsWith('/v1/payment_intents/')));
  assert.deepEqual((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data, {
    balance: 100,
    total_purchased: 0,
  });
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});
