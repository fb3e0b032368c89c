import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { bearer, createAccount, createApiToken, createTestApp, drainJobs, latestMail } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

test('recovery in headless Chromium: open the mailed link, press the button, the new Master Token works and every old token gets 401', async () => {
  const t = await createTestApp({ listen: true });
  const acct = await createAccount(t, 'browser@example.com');
  const api = await createApiToken(t, acct.master, 'old integration');
  const rec = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'browser@example.com' } });
  assert.equal(rec.statusCode, 200);
  await drainJobs(t);
  const mail = await latestMail(t, 'browser@example.com', 'recovery');
  const link = /^Confirm: (\S+)$/m.exec(mail!.text_body)![1];
  assert.ok(link.startsWith(t.baseUrl), `${link} starts with ${t.baseUrl}`);

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  defer(() => browser.close());
  const page = await browser.newPage();
  await page.goto(link);
  // The page's policy (src/http/security-headers.ts) keeps its own style working.
  assert.equal(await page.locator('body').evaluate((b) => getComputedStyle(b).maxWidth), '640px');
  assert.equal(await page.locator('form').count(), 1);
  assert.equal(await page.locator('button').count(), 1);
  await page.locator('button').click();
  await page.waitForSelector('#master-token');
  const newMaster = (await page.locator('#master-token').textContent())!.trim();
  assert.match(newMaster, /^sk_live_[0-9A-Za-z]{32,}$/);
  await page.screenshot({ path: '/tmp/regwatch-recovery.png' }).catch(() => {});

  const ok = await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(newMaster) });
  assert.equal(ok.statusCode, 200);
  for (const old of [acct.master, api.plaintext]) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(old) });
    assert.equal(r.statusCode, 401);
  }

  // The link works once: opening it again shows that on the page, and resubmitting changes nothing.
  await page.goto(link);
  assert.match(await page.locator('body').innerText(), /already been used/);
  const still = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(newMaster) });
  assert.equal(still.statusCode, 200);
});

test('no other site can frame the pages (click-jacking): Chromium refuses to show them in a frame', async () => {
  const t = await createTestApp({ listen: true });
  const url = `${t.baseUrl}/api/v1/auth/recover/confirm?token=nope`;
  const direct = await fetch(url);
  assert.equal(direct.status, 422);
  assert.equal(direct.headers.get('x-frame-options'), 'DENY');
  assert.match(direct.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.equal(direct.headers.get('x-content-type-options'), 'nosniff');

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  defer(() => browser.close());
  const page = await browser.newPage();
  await page.goto(url);
  assert.match(await page.locator('body').innerText(), /Recovery failed/, 'the page itself shows');

  const framer = await browser.newPage();
  const blocked = new Promise<void>((resolve) =>
    framer.on('console', (m) => {
      if (/frame-ancestors|Refused to (display|frame)/i.test(m.text())) resolve();
    }),
  );
  await framer.setContent(`<iframe src="${url}" width="600" height="400"></iframe>`, { waitUntil: 'load' });
  const refused = await Promise.race([blocked.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref())]);
  assert.ok(refused, 'Chromium reports the frame refused');
  const frame = framer.frames().find((f) => f !== framer.mainFrame());
  assert.ok(frame, 'the frame exists');
  assert.doesNotMatch(await frame.content(), /Recovery failed/, 'but shows nothing of the page');
});
