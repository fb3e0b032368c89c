import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { Regwatch, type FeedEvent, verifyWebhook, WebhookVerificationError } from '../packages/sdk/src/index.ts';
import { createAccount, createTestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { nipFor, type CompanySpec } from './helpers/registry.ts';
import { waitFor } from './helpers/wait.ts';
import { accountIdOf, runDay } from './watchlist-support.ts';
import { startReceiver, startWebhookWorker, watchNumbers } from './webhooks-support.ts';

/**
 * @regwatch/sdk's events and webhooks against the real service: the feed paged and streamed by
 * `after_id` across polls while daily runs write (every event once, none missed), every webhook
 * method, and verifyWebhook on a message the service really signed and sent.
 */

const day1: CompanySpec[] = Array.from({ length: 8 }, (_, i) => ({ n: i + 1 }));
const day2: CompanySpec[] = day1.map((c) => ({ ...c, name: `DRUGA NAZWA ${c.n} SPÓŁKA AKCYJNA`, city: 'Kraków' }));
const day3: CompanySpec[] = day1.map((c) => ({ ...c, name: `TRZECIA NAZWA ${c.n} SPÓŁKA AKCYJNA`, city: 'Gdańsk' }));

const db = await createTestDatabase();
await runDay(db.db, '2030-05-01', day1);
const t = await createTestApp({
  db,
  listen: true,
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const a = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
await applyLedgerEntry(t.db.db, { accountId: aId, type: 'deposit', amount: 1000, description: 'test top-up' });
await watchNumbers(t.db.db, aId, [1, 2, 3, 4, 5, 6], new Date('2030-05-01T08:00:00Z'));
await runDay(t.db.db, '2030-05-02', day2);

let requests = 0;
const rw = new Regwatch({
  token: a.master,
  baseUrl: t.baseUrl,
  fetch: (r) => {
    requests++;
    return fetch(r);
  },
});

/** The whole feed by after_id, read with the raw client: what the stream must yield. */
async function wholeFeed(): Promise<number[]> {
  const { data } = await rw.api.GET('/api/v1/watchlist/events', { params: { query: { page: 1, per_page: 100, after_id: 0 } } });
  return data!.data.map((e) => e.id);
}

test('feed and feedAll across pages; companyEvents and companyEventsAll', async () => {
  const ids = await wholeFeed();
  assert.ok(ids.length >= 12, `events: ${ids.length}`);
  const page = await rw.events.feed({ per_page: 5 });
  assert.ok('last_page' in page.meta && page.meta.total === ids.length && page.meta.last_page >= 3);
  const walked: number[] = [];
  for await (const e of rw.events.feedAll({ per_page: 5 })) walked.push(e.id);
  assert.deepEqual(
    [...walked].sort((x, y) => x - y),
    ids,
    'every event once across the pages',
  );

  const one = await rw.events.companyEvents({ identifier_type: 'NIP', identifier_value: nipFor(7), per_page: 1 });
  assert.ok(one.meta.total >= 2 && one.meta.last_page === one.meta.total, "an unwatched company's history, one a page");
  const history: number[] = [];
  for await (const e of rw.events.companyEventsAll({ identifier_type: 'NIP', identifier_value: nipFor(7), per_page: 1 }))
    history.push(e.id);
  assert.equal(history.length, one.meta.total);
  assert.equal(new Set(history).size, history.length);
});

test('stream: every event once, in id order, across polls and while a daily run writes', async () => {
  const before = await wholeFeed();
  const controller = new AbortController();
  const seen: FeedEvent[] = [];
  const startRequests = requests;
  let writing: Promise<unknown> | undefined;
  const consumer = (async () => {
    for await (const e of rw.events.stream({ afterId: 0, perPage: 4, intervalMs: 100, signal: controller.signal })) {
      seen.push(e);
      // Caught up: the next events are written while the stream polls.
      if (seen.length === before.length) writing ??= runDay(t.db.db, '2030-05-03', day3);
    }
  })();
  let after: number[] = [];
  await waitFor("the third day's events", async () => {
    if (!writing) return false;
    await writing;
    after = await wholeFeed();
    return after.length > before.length && seen.length >= after.length;
  });
  await new Promise((r) => setTimeout(r, 300)); // more polls: nothing may come twice
  controller.abort();
  await consumer;
  assert.deepEqual(
    seen.map((e) => e.id),
    after,
    'every event of the feed once, in id order',
  );
  assert.ok(requests - startRequests >= Math.ceil(before.length / 4) + 2, `several polls (${requests - startRequests} requests)`);

  // Resuming from a kept id yields only what follows it.
  const resumeFrom = after[after.length - 3]!;
  const rest: number[] = [];
  for await (const e of rw.events.stream({ afterId: resumeFrom, intervalMs: 10 })) {
    rest.push(e.id);
    if (rest.length === 2) break;
  }
  assert.deepEqual(rest, after.slice(-2));
});

test('webhooks: every method, and verifyWebhook on a message the service signed and sent', async () => {
  const rx = await startReceiver();
  await startWebhookWorker(t);
  const created = await rw.webhooks.create({ url: `${rx.url}/sdk`, description: 'sdk', event_types: ['COMPANY_NAME_CHANGED'] });
  const { id, secret } = created.data;
  rx.addSecret('/sdk', secret);
  assert.ok((await rw.webhooks.list()).data.some((w) => w.id === id));
  assert.equal((await rw.webhooks.get(id)).data.description, 'sdk');
  assert.deepEqual((await rw.webhooks.update(id, { description: 'sdk 2', event_types: [] })).data.event_types, []);

  const sent = await rw.webhooks.test(id, 'COMPANY_NAME_CHANGED');
  await waitFor('the test message', () => rx.on('/sdk').some((m) => m.id === sent.data.message_id));
  const message = rx.on('/sdk').find((m) => m.id === sent.data.message_id)!;
  const headers = { 'webhook-id': message.id, 'webhook-timestamp': message.timestamp, 'webhook-signature': message.signature };
  const payload = await verifyWebhook<{ type: string; data: { test: boolean } }>(message.body, headers, secret);
  assert.equal(payload.type, 'COMPANY_NAME_CHANGED');
  assert.equal(payload.data.test, true);
  assert.deepEqual(
    await verifyWebhook(new TextEncoder().encode(message.body), new Headers(headers), secret),
    payload,
    'bytes and a Headers object',
  );
  await assert.rejects(
    verifyWebhook(message.body.replace('COMPANY_NAME_CHANGED', 'COMPANY_NAME_CHANGEX'), headers, secret),
    WebhookVerificationError,
    'a tampered body',
  );
  await assert.rejects(
    verifyWebhook(message.body, { ...headers, 'webhook-timestamp': String(Number(message.timestamp) + 1) }, secret),
    WebhookVerificationError,
    'a changed timestamp',
  );
  await assert.rejects(
    verifyWebhook(message.body, headers, `whsec_${Buffer.alloc(32, 7).toString('base64')}`),
    WebhookVerificationError,
    'another secret',
  );
  await assert.rejects(verifyWebhook(message.body, headers, secret, { now: (Number(message.timestamp) + 301) * 1000 }), /too old/);

  const deliveries = await rw.webhooks.deliveries(id, { per_page: 1 });
  assert.equal(deliveries.data[0]!.id, sent.data.message_id);
  assert.equal((await rw.webhooks.retry(id, sent.data.message_id)).status, 'success');
  await waitFor('the retried message', () => rx.on('/sdk').filter((m) => m.id === sent.data.message_id).length === 2);
  const replay = await rw.webhooks.replay(id, 0);
  assert.ok(replay.data.queued > 0);
  await waitFor('the replayed messages', async () => (await rw.webhooks.deliveries(id)).meta.total === 1 + replay.data.queued);
  const all: string[] = [];
  for await (const d of rw.webhooks.deliveriesAll(id, { per_page: 3 })) all.push(d.id);
  assert.equal(all.length, 1 + replay.data.queued, 'every delivery across the pages');
  assert.equal(new Set(all).size, all.length);

  // After a rotation the message carries two signatures; each secret verifies it.
  const rotated = await rw.webhooks.rotateSecret(id);
  rx.addSecret('/sdk', rotated.data.secret);
  const second = await rw.webhooks.test(id, 'COMPANY_REGISTERED_ADDRESS_CHANGED');
  await waitFor('the message after the rotation', () => rx.on('/sdk').some((m) => m.id === second.data.message_id));
  const m2 = rx.on('/sdk').find((m) => m.id === second.data.message_id)!;
  assert.equal(m2.signature.split(' ').length, 2);
  const h2 = { 'webhook-id': m2.id, 'webhook-timestamp': m2.timestamp, 'webhook-signature': m2.signature };
  for (const s of [secret, rotated.data.secret])
    assert.equal((await verifyWebhook<{ type: string }>(m2.body, h2, s)).type, 'COMPANY_REGISTERED_ADDRESS_CHANGED');

  assert.equal((await rw.webhooks.delete(id)).data.deleted, true);
});

test('verifyWebhook agrees with the standardwebhooks package', async () => {
  const secret = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
  const wh = new Webhook(secret);
  const body = JSON.stringify({
    type: 'COMPANY_NAME_CHANGED',
    timestamp: new Date().toISOString(),
    data: { id: 1, name: 'Zażółć gęślą jaźń' },
  });
  const at = new Date();
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': wh.sign('msg_1', at, body),
  };
  assert.deepEqual(await verifyWebhook(body, headers, secret), wh.verify(body, headers));
  for (const bad of [
    { ...headers, 'webhook-id': 'msg_2' },
    { ...headers, 'webhook-signature': 'v2,' + headers['webhook-signature'].slice(3) },
    { ...headers, 'webhook-signature': '' },
  ]) {
    assert.throws(() => wh.verify(body, bad));
    await assert.rejects(verifyWebhook(body, bad, secret), WebhookVerificationError);
  }
});
