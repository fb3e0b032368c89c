import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { bearer, createAccount, createTestApp, type TestApp, type TestAccount } from './helpers/app.ts';

const CHROMIUM = '/usr/bin/chromium';
let browser: Browser;

before(async () => {
  // CI installs Debian's chromium: its absence is a failure, never a skip.
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
});
after(async () => {
  await browser?.close();
});

async function topup(t: TestApp, a: TestAccount) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(a.master),
    payload: { package_slug: 'credits-1000' },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { checkout_url: string; payment_ref: string };
}

async function wallet(t: TestApp, a: TestAccount) {
  return (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).json().data as {
    balance: number;
    total_purchased: number;
  };
}

test('Pay in the browser credits once; reloading, going back and submitting again credit nothing more', async () => {
  const t = await createTestApp({ listen: true });
  const a = await createAccount(t);
  const { checkout_url } = await topup(t, a);
  assert.ok(checkout_url.startsWith(`${t.baseUrl}/api/v1/`), checkout_url);

  const context = await browser.newContext();
  const page = await context.newPage();
  // A second tab keeps the form open: the resubmission of a stale page.
  const stale = await context.newPage();
  await page.goto(checkout_url);
  await stale.goto(checkout_url);
  assert.equal(await page.locator('form').count(), 1);
  assert.equal(await page.getByRole('button').count(), 2);
  assert.equal(await page.getByRole('button', { name: 'Pay' }).count(), 1);
  assert.equal(await page.getByRole('button', { name: 'Cancel' }).count(), 1);

  await Promise.all([page.waitForURL(checkout_url), page.getByRole('button', { name: 'Pay' }).click()]);
  await page.locator('#payment-status[data-status="confirmed"]').waitFor();
  assert.match(await page.locator('h1').innerText(), /Payment confirmed/);
  assert.equal(await page.locator('form').count(), 0);
  assert.deepEqual(await wallet(t, a), { balance: 1100, total_purchased: 1000 });

  await page.reload();
  await page.locator('#payment-status[data-status="confirmed"]').waitFor();
  await page.goBack();
  await page.goForward();
  assert.deepEqual(await wallet(t, a), { balance: 1100, total_purchased: 1000 });

  await Promise.all([stale.waitForNavigation(), stale.getByRole('button', { name: 'Pay' }).click()]);
  await stale.locator('#payment-status[data-status="confirmed"]').waitFor();
  await stale.reload();
  // The form's POST replayed as is, outside the page.
  const replay = await page.request.post(checkout_url, { form: { action: 'pay' }, maxRedirects: 0 });
  assert.equal(replay.status(), 303);
  assert.deepEqual(await wallet(t, a), { balance: 1100, total_purchased: 1000 });

  const deposits = await t.db.db.selectFrom('wallet_transactions').select('amount').where('type', '=', 'deposit').execute();
  assert.deepEqual(deposits, [{ amount: '1000' }]);
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
  await context.close();
});

test('Cancel in the browser fails the payment and credits nothing, even if Pay is pressed later on a stale page', async () => {
  const t = await createTestApp({ listen: true });
  const a = await createAccount(t);
  const { checkout_url, payment_ref } = await topup(t, a);
  const context = await browser.newContext();
  const page = await context.newPage();
  const stale = await context.newPage();
  await page.goto(checkout_url);
  await stale.goto(checkout_url);

  await Promise.all([page.waitForURL(checkout_url), page.getByRole('button', { name: 'Cancel' }).click()]);
  await page.locator('#payment-status[data-status="failed"]').waitFor();
  assert.match(await page.locator('h1').innerText(), /cancelled/i);

  await Promise.all([stale.waitForNavigation(), stale.getByRole('button', { name: 'Pay' }).click()]);
  await stale.locator('#payment-status[data-status="failed"]').waitFor();
  assert.deepEqual(await wallet(t, a), { balance: 100, total_purchased: 0 });
  const status = (await t.app.inject({ method: 'GET', url: `/api/v1/wallet/payments/${payment_ref}`, headers: bearer(a.master) })).json()
    .data.status;
  assert.equal(status, 'failed');
  await context.close();
});
