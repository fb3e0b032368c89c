/**
 * Secret rotations that overlap (found by an audit; rotateSecret in src/modules/webhooks/repo.ts
 * now takes the endpoint's row first):
 * - two at once (a double click) left two "current" secrets that never expired: the secret the
 *   first answer handed out kept signing every message past the 24 h of DECISIONS 8 ("for 24 hours
 *   messages carry signatures by the old and the new secret");
 * - one racing a DELETE of the endpoint answered 500 (the new secret's foreign key) or deadlocked
 *   with it, where a gone endpoint is 404 (DECISIONS 7, 8).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createManualClock, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver, startWebhookWorker } from './webhooks-support.ts';

const clock = createManualClock(new Date());
const t = await createTestApp({
  clock,
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const a = await createAccount(t);
const rx = await startReceiver(() => 200);
await startWebhookWorker(t);

test('two rotations at once: 25 h later a message carries one signature, not one per answer for ever', async () => {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(a.master),
    payload: { url: `${rx.url}/race` },
  });
  assert.equal(created.statusCode, 201, created.body);
  const ep = created.json().data as { id: string; secret: string };

  const rotate = () => t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/rotate-secret`, headers: bearer(a.master) });
  const [r1, r2] = await Promise.all([rotate(), rotate()]);
  assert.equal(r1.statusCode, 200, r1.body);
  assert.equal(r2.statusCode, 200, r2.body);
  const answers = [r1.json().data, r2.json().data] as { secret: string; previous_secret_expires_at: string }[];

  // Past every expiry either answer promised (24 h), plus an hour.
  const latestExpiry = Math.max(...answers.map((x) => Date.parse(x.previous_secret_expires_at)));
  clock.advance(latestExpiry - clock.now().getTime() + 3_600_000);

  const sent = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${ep.id}/test`,
    headers: bearer(a.master),
    payload: { event_type: 'COMPANY_NAME_CHANGED' },
  });
  assert.equal(sent.statusCode, 202, sent.body);
  await waitFor('the test message', () => rx.on('/race').length === 1, 15_000);
  const m = rx.on('/race')[0]!;

  const { rows } = await t.db.pool.query<{ current: number }>(
    'SELECT count(*)::int AS current FROM webhook_secrets WHERE endpoint_id = $1 AND expires_at IS NULL',
    [ep.id.slice(3)],
  );
  assert.equal(
    m.signature.split(' ').length,
    1,
    `25 h after the rotations the message still carries ${m.signature.split(' ').length} signatures; ` +
      `${rows[0]!.current} secrets of the endpoint have no expiry`,
  );
});

test('rotate-secret and DELETE of one endpoint at once: 200 or 404, never 500', async () => {
  const api = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url: `/api/v1${url}`, headers: bearer(a.master), ...(payload ? { payload } : {}) });
  const seen = new Map<string, number>();
  for (let i = 0; i < 30; i++) {
    const created = await api('POST', '/webhooks', { url: `${rx.url}/gone-${i}` });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as string;
    const [rot, del] = await Promise.all([api('POST', `/webhooks/${id}/rotate-secret`), api('DELETE', `/webhooks/${id}`)]);
    const key = `rotate ${rot.statusCode} / delete ${del.statusCode}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const outcomes = [...seen].map(([k, n]) => `${n}x ${k}`);
  assert.ok(
    outcomes.every((o) => /rotate (200|404) \/ delete 200/.test(o)),
    `outcomes over 30 races: ${outcomes.join('; ')}`,
  );
});
