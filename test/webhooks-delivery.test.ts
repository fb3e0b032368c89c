import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import type { CompanySpec } from './helpers/registry.ts';
import { accountIdOf, runDay } from './watchlist-support.ts';
import { deliveryCount, startReceiver, startWebhookWorker, watchNumbers, type AnswerValue } from './webhooks-support.ts';

/**
 * Delivery end to end on the real app, registry, graphile-worker and a real receiver that verifies
 * every message with the `standardwebhooks` package: what arrives is exactly each account's feed.
 */

const t = await createTestApp({
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const a = await createAccount(t);
const b = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
const bId = await accountIdOf(t, b.userRef);
/** When each message reached the slow paths (before it is answered, half a second later). */
const arrivals: Record<string, number[]> = {};
const rx = await startReceiver(({ path, attempt }): AnswerValue | Promise<AnswerValue> => {
  if (path.startsWith('/slow-')) {
    (arrivals[path] ??= []).push(Date.now());
    return new Promise((r) => setTimeout(() => r(200), 500));
  }
  if (path === '/flaky') return attempt <= 2 ? 500 : 200;
  if (path === '/gone') return 410;
  if (path === '/gone-then-back') return attempt === 1 ? 410 : 200;
  if (path === '/hang' || path === '/hang-then-more') return 'hang';
  if (path === '/busy') return { status: 503, headers: { 'retry-after': '120' } };
  if (path === '/nul-500') return { status: 500, headers: {}, body: 'bad\u0000body' };
  if (path === '/nul-200') return { status: 200, headers: {}, body: 'ok\u0000' };
  return 200;
});

async function createEndpoint(token: string, path: string, extra: Record<string, unknown> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(token),
    payload: { url: rx.url + path, ...extra },
  });
  assert.equal(res.statusCode, 201, res.body);
  const data = res.json().data as { id: string; secret: string };
  rx.addSecret(path, data.secret);
  return data;
}

type FeedRow = Record<string, unknown> & { id: number; event_type: string; company_name: string };
async function feedOf(token: string): Promise<FeedRow[]> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/watchlist/events?after_id=0&per_page=100', headers: bearer(token) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

const day1: CompanySpec[] = [1, 2, 3, 4, 5, 6].map((n) => ({ n }));
const day2: CompanySpec[] = day1.map((c) => ({
  ...c,
  name: `NOWA NAZWA ${c.n} SPÓŁKA AKCYJNA`,
  city: c.n % 2 === 0 ? 'Kraków' : 'Łódź',
  contacts: c.n <= 4 ? [{ type: 'phone', value: `+48 22 000 00 0${c.n}` }] : [],
}));
const TWO_TYPES = ['COMPANY_NAME_CHANGED', 'COMPANY_PHONE_CHANGED'];

const endpoints: Record<string, { id: string; secret: string }> = {};

test("a daily run with changes: each watched company's events arrive once, signed, in feed form; unwatched never", async () => {
  await runDay(t.db.db, '2030-01-01', day1);
  await watchNumbers(t.db.db, aId, [1, 2, 3], new Date('2030-01-01T08:00:00Z'));
  await watchNumbers(t.db.db, bId, [4], new Date('2030-01-01T08:00:00Z'));
  endpoints.aAll = await createEndpoint(a.master, '/a-all', { description: 'everything' });
  endpoints.aTwo = await createEndpoint(a.master, '/a-two', { event_types: TWO_TYPES });
  endpoints.bAll = await createEndpoint(b.master, '/b-all');

  const summary = await runDay(t.db.db, '2030-01-02', day2);
  assert.ok(summary.events >= 12, `events: ${summary.events}`);
  await startWebhookWorker(t);

  const aFeed = await feedOf(a.master);
  const bFeed = await feedOf(b.master);
  assert.ok(aFeed.length >= 6 && bFeed.length >= 2);
  const aTwoFeed = aFeed.filter((e) => TWO_TYPES.includes(e.event_type));
  assert.ok(aTwoFeed.length >= 4 && aTwoFeed.length < aFeed.length, 'the two types are a strict part of the feed');
  const expected = aFeed.length + aTwoFeed.length + bFeed.length;
  await waitFor('every message', async () => (await deliveryCount(t.db.db, 'delivered')) === expected);

  const check = (path: string, feed: FeedRow[]) => {
    const got = rx.on(path);
    assert.equal(got.length, feed.length, `${path}: one message per feed event`);
    assert.equal(new Set(got.map((m) => m.id)).size, got.length, `${path}: no message twice`);
    for (const m of got) {
      assert.equal(m.verifiedBy.length, 1, `${path}: ${m.id} verifies with standardwebhooks`);
      assert.match(m.id, /^msg_\d+$/);
      assert.equal(m.json.type, m.json.data.event_type);
      assert.match(m.json.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.deepEqual(
      got.map((m) => m.json.data).sort((x, y) => Number(x.id) - Number(y.id)),
      feed,
      `${path}: the data is the feed's event, field for field`,
    );
  };
  check('/a-all', aFeed);
  check('/a-two', aTwoFeed);
  check('/b-all', bFeed);
  const unwatched = rx.messages.filter(
    (m) => /NOWA NAZWA [56] /.test(String(m.json.data.company_name)) || /NOWA NAZWA [56] /.test(String(m.json.data.new_value)),
  );
  assert.deepEqual(unwatched, [], "unwatched companies' events never arrive");

  const log = await t.app.inject({
    method: 'GET',
    url: `/api/v1/webhooks/${endpoints.aAll.id}/deliveries?per_page=100`,
    headers: bearer(a.master),
  });
  assert.equal(log.statusCode, 200);
  const rows = log.json().data as {
    id: string;
    status: string;
    attempts: number;
    last_response_status: number;
    delivered_at: string;
    event_id: number;
  }[];
  assert.equal(log.json().meta.total, aFeed.length);
  assert.ok(rows.every((r) => r.status === 'delivered' && r.attempts === 1 && r.last_response_status === 200 && r.delivered_at));
  assert.deepEqual(
    rows.map((r) => Number(r.id.slice(4))),
    [...rows.map((r) => Number(r.id.slice(4)))].sort((x, y) => y - x),
    'newest first',
  );
});

test('the fan-out run again (a job delivered twice) queues nothing new', async () => {
  const { rows } = await sql<{ lo: string; hi: string }>`SELECT min(id)::text AS lo, max(id)::text AS hi FROM events`.execute(t.db.db);
  const before = await deliveryCount(t.db.db);
  const { fanOutEvents } = await import('../src/modules/webhooks/repo.ts');
  assert.equal(
    await fanOutEvents(t.db.db, {
      fromId: Number(rows[0]!.lo),
      toId: Number(rows[0]!.hi),
      fromDate: '2030-01-01',
      toDate: '2030-01-02',
      at: new Date(),
      again: true,
    }),
    0,
  );
  assert.equal(await deliveryCount(t.db.db), before);
});

test("replay after an outage re-sends exactly the feed's events after after_id", async () => {
  const aFeed = await feedOf(a.master);
  const afterId = aFeed[2]!.id;
  const before = rx.on('/a-all').length;
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${endpoints.aAll.id}/replay`,
    headers: bearer(a.master),
    payload: { after_id: afterId },
  });
  assert.equal(res.statusCode, 202, res.body);
  const expected = aFeed.filter((e) => e.id > afterId);
  assert.equal(res.json().data.queued, expected.length);
  // Delivery is at least once: an attempt that timed out after the receiver got the message goes
  // again with the same webhook-id (a loaded machine can stretch an attempt past the test's 2 s).
  // So the replay is judged on the distinct messages, and a repeat must be the same message.
  const received = () => rx.on('/a-all').slice(before);
  await waitFor('the replay', () => new Set(received().map((m) => m.id)).size >= expected.length).catch(async (err: Error) => {
    const { rows } = await sql`SELECT id, status, attempts, last_error FROM webhook_deliveries
      WHERE endpoint_id = ${endpoints.aAll.id.slice(3)} AND event_id > ${afterId} ORDER BY id`.execute(t.db.db);
    const got = received().map((m) => `${m.id} (${m.status})`);
    throw new Error(`${err.message}: received ${JSON.stringify(got)}; the messages: ${JSON.stringify(rows)}`);
  });
  const all = received();
  const byId = new Map(all.map((m) => [m.id, m]));
  const replayed = [...byId.values()];
  assert.deepEqual(
    replayed.map((m) => m.json.data.id).sort((x, y) => Number(x) - Number(y)),
    expected.map((e) => e.id),
  );
  for (const m of all) assert.equal(m.body, byId.get(m.id)!.body, 'a repeat is the same message');
  assert.ok(replayed.every((m) => m.verifiedBy.length === 1));
  // The filtered endpoint replays only its types.
  const two = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${endpoints.aTwo.id}/replay`,
    headers: bearer(a.master),
    payload: { after_id: 0 },
  });
  assert.equal(two.json().data.queued, aFeed.filter((e) => TWO_TYPES.includes(e.event_type)).length);
});

async function sendTest(endpointId: string, eventType = 'COMPANY_NAME_CHANGED') {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${endpointId}/test`,
    headers: bearer(a.master),
    payload: { event_type: eventType },
  });
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.message_id as string;
}

async function delivery(endpointId: string, messageId: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${endpointId}/deliveries`, headers: bearer(a.master) });
  return (
    res.json().data as {
      id: string;
      status: string;
      attempts: number;
      last_error: string | null;
      last_response_status: number | null;
      next_attempt_at: string | null;
      last_attempt_at: string | null;
    }[]
  ).find((d) => d.id === messageId);
}

test('a test message: sample values, data.test true, through the ordinary path', async () => {
  const id = await sendTest(endpoints.aTwo.id, 'COMPANY_BANKRUPTCY_STARTED');
  await waitFor('the test message', () => rx.on('/a-two').some((m) => m.id === id));
  const m = rx.on('/a-two').find((x) => x.id === id)!;
  assert.equal(m.verifiedBy.length, 1);
  assert.equal(m.json.type, 'COMPANY_BANKRUPTCY_STARTED');
  assert.equal(m.json.data.test, true);
  assert.equal(m.json.data.severity, 'critical');
});

test('500 twice then 200: delivered on the third attempt with the same webhook-id', async () => {
  const ep = await createEndpoint(a.master, '/flaky');
  const id = await sendTest(ep.id);
  await waitFor('the third attempt', async () => (await delivery(ep.id, id))?.status === 'delivered', 20_000);
  const got = rx.on('/flaky');
  assert.deepEqual(
    got.map((m) => [m.id, m.status]),
    [
      [id, 500],
      [id, 500],
      [id, 200],
    ],
  );
  assert.ok(got.every((m) => m.verifiedBy.length === 1));
  assert.equal(new Set(got.map((m) => m.body)).size, 1, 'the body is the same on every attempt');
  assert.ok(Number(got[1]!.timestamp) >= Number(got[0]!.timestamp) + 1, 'retried after the schedule (1 s)');
  const d = await delivery(ep.id, id);
  assert.equal(d!.attempts, 3);
  assert.equal(d!.last_response_status, 200);
});

test('a receiver whose answer holds a NUL: its outcomes are recorded (failed after the schedule, or delivered), and others are not held up', async () => {
  const failing = await createEndpoint(a.master, '/nul-500');
  const ok = await createEndpoint(a.master, '/nul-200');
  const failed = await sendTest(failing.id);
  const delivered = await sendTest(ok.id);
  await waitFor(
    'the NUL answers recorded',
    async () => {
      const [f, d] = await Promise.all([delivery(failing.id, failed), delivery(ok.id, delivered)]);
      return f?.status === 'failed' && d?.status === 'delivered';
    },
    20_000,
  );
  const f = (await delivery(failing.id, failed))!;
  assert.equal(f.attempts, 4, 'the first attempt and the schedule of three retries, then failed');
  assert.equal(f.last_response_status, 500);
  assert.equal(rx.on('/nul-500').length, 4, 'sent exactly as often as recorded');
  assert.equal(rx.on('/nul-200').length, 1);
  const { rows } = await sql<{
    body: string;
  }>`SELECT last_response_body AS body FROM webhook_deliveries WHERE last_response_status = 500 AND last_response_body LIKE 'bad%'`.execute(
    t.db.db,
  );
  assert.deepEqual(
    rows.map((r) => r.body),
    ['bad\ufffdbody'],
    'kept, with the NUL replaced',
  );
  for (const ep of [failing, ok]) await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
});

test('DELETE and a disabling PATCH: no attempt starts once they answer, though the worker had read messages ahead', async () => {
  for (const [path, stop] of [
    ['/slow-delete', { method: 'DELETE' }],
    ['/slow-disable', { method: 'PATCH', payload: { status: 'disabled' } }],
  ] as const) {
    const ep = await createEndpoint(a.master, path);
    const patch = (payload: object) =>
      t.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master), payload });
    // Twelve messages queued while disabled go out together once enabled: four in flight, the rest read ahead.
    assert.equal((await patch({ status: 'disabled' })).statusCode, 200);
    for (let i = 0; i < 12; i++) await sendTest(ep.id);
    assert.equal((await patch({ status: 'enabled' })).statusCode, 200);
    await waitFor('the first attempts under way', () => (arrivals[path]?.length ?? 0) >= 4, 10_000);
    const res = await t.app.inject({ ...stop, url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
    assert.equal(res.statusCode, 200, res.body);
    const sent = arrivals[path]!.length;
    // The attempts under way are answered after 0.5 s; without the notice their slots went to the read-ahead.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(arrivals[path]!.length, sent, `${stop.method}: nothing sent after it answered`);
    if (stop.method === 'PATCH') await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
  }
});

test('410 disables the endpoint at once; nothing more is sent to it', async () => {
  const ep = await createEndpoint(a.master, '/gone');
  const id = await sendTest(ep.id);
  await waitFor('the endpoint disabled', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
    return res.json().data.status === 'disabled';
  });
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
  assert.match(res.json().data.disabled_reason, /410/);
  assert.equal((await delivery(ep.id, id))!.last_response_status, 410);
  // A retry or a test on the disabled endpoint is accepted and says it waits for the endpoint.
  const retry = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/deliveries/${id}/retry`, headers: bearer(a.master) });
  assert.equal(retry.statusCode, 202);
  assert.match(retry.json().data.message, /disabled.*once the endpoint is enabled again/);
  const test = await t.app.inject({
    method: 'POST',
    url: `/api/v1/webhooks/${ep.id}/test`,
    headers: bearer(a.master),
    payload: { event_type: 'COMPANY_NAME_CHANGED' },
  });
  assert.equal(test.statusCode, 202);
  assert.match(test.json().data.message, /disabled/);
  await sendTest(ep.id);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(rx.on('/gone').length, 1);
});

test('enabled again after a 410, the endpoint gets the message that met the 410, with the same webhook-id', async () => {
  const path = '/gone-then-back';
  const ep = await createEndpoint(a.master, path);
  const id = await sendTest(ep.id);
  await waitFor('the endpoint disabled', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
    return res.json().data.status === 'disabled';
  });
  const held = (await delivery(ep.id, id))!;
  assert.equal(held.last_response_status, 410);
  assert.equal(held.status, 'pending', 'the message keeps its schedule while the endpoint is disabled');
  assert.equal(held.attempts, 1);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(rx.on(path).length, 1, 'nothing is sent to the disabled endpoint, its due time passed');
  const enable = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/webhooks/${ep.id}`,
    headers: bearer(a.master),
    payload: { status: 'enabled' },
  });
  assert.equal(enable.statusCode, 200, enable.body);
  await waitFor('the message delivered', async () => (await delivery(ep.id, id))?.status === 'delivered');
  const got = rx.on(path);
  assert.equal(got.length, 2);
  assert.equal(got[1]!.id, got[0]!.id, 'the same webhook-id');
  assert.equal(got[1]!.verifiedBy.length, 1);
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
});

test('a receiver that hangs: the timeout is a failed attempt, retried', async () => {
  const ep = await createEndpoint(a.master, '/hang');
  const id = await sendTest(ep.id);
  await waitFor(
    'the timed-out attempt recorded',
    async () => ((await delivery(ep.id, id))?.last_error ?? '').startsWith('No answer'),
    20_000,
  );
  const d = (await delivery(ep.id, id))!;
  assert.equal(d.last_response_status, null);
  assert.equal(d.last_error, 'No answer within 2 s');
  // The schedule (1 s here) counts from the attempt's end, not from its start 2 s before.
  const gap = Date.parse(d.next_attempt_at!) - Date.parse(d.last_attempt_at!);
  assert.ok(gap >= 2_900, `next attempt ${gap} ms after the last one started`);
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
});

test('a message queued while an attempt to its endpoint hangs goes out beside it, not after it', async () => {
  const ep = await createEndpoint(a.master, '/hang-then-more');
  await sendTest(ep.id);
  await waitFor('the first attempt under way', () => rx.on('/hang-then-more').length === 1, 5_000);
  const started = Date.now();
  await sendTest(ep.id);
  await waitFor('the second message sent', () => rx.on('/hang-then-more').length >= 2, 5_000);
  // The first attempt times out after 2 s here; the second message did not wait for it.
  assert.ok(Date.now() - started < 1_800, `the second message went ${Date.now() - started} ms after it was queued`);
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${ep.id}`, headers: bearer(a.master) });
});

test('Retry-After on a 503 is honoured', async () => {
  const ep = await createEndpoint(a.master, '/busy');
  const id = await sendTest(ep.id);
  await waitFor('the 503 recorded', async () => (await delivery(ep.id, id))?.last_response_status === 503);
  const d = (await delivery(ep.id, id))!;
  const waitS = Date.parse(d.next_attempt_at!) / 1000 - Number(rx.on('/busy')[0]!.timestamp);
  assert.ok(waitS >= 119 && waitS <= 122, `next attempt ${waitS} s later`);
  const retry = await t.app.inject({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/deliveries/${id}/retry`, headers: bearer(a.master) });
  assert.equal(retry.statusCode, 202);
  await waitFor('the retried attempt', () => rx.on('/busy').length === 2);
  assert.equal(rx.on('/busy')[1]!.id, id);
});

test('a company watched after the run that detected its events: the events its watch brings into the feed are pushed too, once', async () => {
  const c = await createAccount(t);
  const cId = await accountIdOf(t, c.userRef);
  await createEndpoint(c.master, '/c-late');
  await createEndpoint(c.master, '/c-two', { event_types: TWO_TYPES });
  // Company 5 changed on 2030-01-02 (the first test's run) and nobody watched it.
  await watchNumbers(t.db.db, cId, [5], new Date());
  const feed = await feedOf(c.master);
  assert.ok(feed.length >= 2, `company 5's events in the feed: ${feed.length}`);
  const two = feed.filter((e) => TWO_TYPES.includes(e.event_type));
  assert.ok(two.length >= 1 && two.length < feed.length);
  await waitFor('the feed pushed', () => rx.on('/c-late').length === feed.length && rx.on('/c-two').length === two.length);
  for (const [path, want] of [
    ['/c-late', feed],
    ['/c-two', two],
  ] as const) {
    const got = rx.on(path);
    assert.ok(
      got.every((m) => m.verifiedBy.length === 1),
      `${path}: verified`,
    );
    assert.deepEqual(
      got.map((m) => m.json.data).sort((x, y) => Number(x.id) - Number(y.id)),
      want,
    );
  }
  // Unwatched and watched again: the feed has the events again, and no message is sent twice.
  const { unwatchCompanies } = await import('../src/modules/watchlist/repo.ts');
  const { rows } = await sql<{ id: string }>`SELECT company_id AS id FROM watchlist WHERE account_id = ${cId}`.execute(t.db.db);
  await t.db.db.transaction().execute((trx) => unwatchCompanies(trx, cId, [rows[0]!.id], new Date()));
  await watchNumbers(t.db.db, cId, [5], new Date());
  assert.equal((await feedOf(c.master)).length, feed.length);
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(rx.on('/c-late').length, feed.length);
  assert.equal(rx.on('/c-two').length, two.length);
});
