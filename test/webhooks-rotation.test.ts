import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { bearer, createAccount, createManualClock, createTestApp, latestMail } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, startWebhookWorker } from './webhooks-support.ts';

/** Secret rotation (24 h of two signatures) and 5-day disabling with its mail, on a manual clock. */

const clock = createManualClock(new Date());
const t = await createTestApp({
  clock,
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const a = await createAccount(t);
let failing = false;
const rx = await startReceiver(({ path }) => (path === '/down' && failing ? 500 : 200));
await startWebhookWorker(t);

async function create(path: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(a.master), payload: { url: rx.url + path } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data as { id: string; secret: string };
}
async function sendTest(id: string, path: string) {
  const n = rx.on(path).length;
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${id}/test`,
    headers: bearer(a.master),
    payload: { event_type: 'COMPANY_EMAIL_CHANGED' },
  });
  assert.equal(res.statusCode, 202, res.body);
  await waitFor(`a message on ${path}`, () => rx.on(path).length > n);
  return rx.on(path).at(-1)!;
}
/** The signatures one secret gives for a received message (standardwebhooks' own signer). */
const expectedSignature = (secret: string, m: { id: string; timestamp: string; body: string }) =>
  new Webhook(secret).sign(m.id, new Date(Number(m.timestamp) * 1000), m.body);

test('rotation: both signatures verify during the 24 h overlap; after it only the new one', async () => {
  const ep = await create('/rot');
  const old = ep.secret;
  const first = await sendTest(ep.id, '/rot');
  assert.equal(first.signature, expectedSignature(old, first));

  const res = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/rotate-secret`, headers: bearer(a.master) });
  const fresh = res.json().data.secret as string;
  assert.notEqual(fresh, old);
  rx.addSecret('/rot', old);
  rx.addSecret('/rot', fresh);

  const during = await sendTest(ep.id, '/rot');
  assert.deepEqual(during.verifiedBy, [old, fresh], 'standardwebhooks verifies the message with either secret');
  assert.deepEqual(during.signature.split(' ').sort(), [expectedSignature(fresh, during), expectedSignature(old, during)].sort());

  clock.advance(23 * 3_600_000);
  const late = await sendTest(ep.id, '/rot');
  assert.equal(late.signature.split(' ').length, 2, 'still two at 23 h');

  clock.advance(2 * 3_600_000);
  const after = await sendTest(ep.id, '/rot');
  // The receiver verifies against the real time; the manual clock is a day ahead, so compare signatures.
  assert.equal(after.signature, expectedSignature(fresh, after), 'only the new secret signs after 24 h');
  assert.throws(() =>
    new Webhook(old).verify(after.body, {
      'webhook-id': after.id,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': after.signature,
    }),
  );
});

test("a second rotation within the overlap keeps the first one's promise: three signatures until the first expiry", async () => {
  const ep = await create('/rot2');
  const rotate = async () =>
    (await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/rotate-secret`, headers: bearer(a.master) })).json().data as {
      secret: string;
      previous_secret_expires_at: string;
    };
  const first = await rotate();
  clock.advance(3_600_000);
  const second = await rotate();
  const during = await sendTest(ep.id, '/rot2');
  assert.deepEqual(
    during.signature.split(' ').sort(),
    [ep.secret, first.secret, second.secret].map((s) => expectedSignature(s, during)).sort(),
    'the original secret still signs, as the first rotation promised',
  );
  clock.advance(Date.parse(first.previous_secret_expires_at) - clock.now().getTime() + 1_000);
  const later = await sendTest(ep.id, '/rot2');
  assert.deepEqual(
    later.signature.split(' ').sort(),
    [first.secret, second.secret].map((s) => expectedSignature(s, later)).sort(),
    "past its expiry the original secret is gone; the second rotation's overlap goes on",
  );
});

test('an endpoint whose every attempt failed for 5 days is disabled and the account mailed', async () => {
  const ep = await create('/down');
  failing = true;
  await sendTest(ep.id, '/down');
  await waitFor('the failure recorded', async () =>
    Boolean(
      (await t.db.db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', ep.id.slice(3)).executeTakeFirst())
        ?.failing_since,
    ),
  );
  clock.advance(4 * 86_400_000);
  await sendTest(ep.id, '/down');
  await new Promise((r) => setTimeout(r, 300));
  const mid = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
  assert.equal(mid.json().data.status, 'enabled', 'four days of failures are not five');
  clock.advance(86_400_000 + 1000);
  await sendTest(ep.id, '/down');
  await waitFor(
    'the endpoint disabled',
    async () =>
      (await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) })).json().data.status ===
      'disabled',
  );
  const mail = await latestMail(t, a.email, 'webhook_disabled');
  assert.ok(mail, 'the account is mailed');
  assert.match(
    mail!.text_body,
    new RegExp(
      `${ep.id} \\(${rx.url.replace(/[.]/g, '\\.')}/down\\) was disabled because every attempt to deliver to it failed for 5 days`,
    ),
  );

  // A success in between starts the count afresh: enabling again resets it.
  failing = false;
  const enabled = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/webhooks/${ep.id}`,
    headers: bearer(a.master),
    payload: { status: 'enabled' },
  });
  assert.equal(enabled.json().data.status, 'enabled');
  const ok = await sendTest(ep.id, '/down');
  assert.equal(ok.status, 200);
});
