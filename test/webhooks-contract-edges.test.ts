/**
 * DECISIONS 8 at its edges, with a real receiver verifying every message: an event of a run still
 * running, watched after an endpoint appeared, is pushed; messages read ahead before a rotation
 * carry the new signature; a replay or a retry during an attempt in flight is sent again; and a test event of
 * each of the 29 types.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import { accountIdOf } from './watchlist-support.ts';
import { startReceiver, startWebhookWorker, type AnswerValue } from './webhooks-support.ts';

const t = await createTestApp({
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const a = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
let rotHangs = 0;
const rx = await startReceiver(({ path, attempt }): AnswerValue => {
  // The first four attempts to /rot hang (until the sender's 2 s timeout); everything else is 200.
  if (path === '/rot' && attempt === 1 && rotHangs < 4) {
    rotHangs++;
    return 'hang';
  }
  if (path === '/last-hangs') return attempt === 1 ? 500 : 'hang';
  if (path === '/first-hangs' || path === '/retry-hangs') return attempt === 1 ? 'hang' : 200;
  return 200;
});

const api = (method: string, url: string, payload?: unknown) =>
  t.app.inject({
    method: method as 'GET',
    url: `/api/v1${url}`,
    headers: bearer(a.master),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function createEndpoint(path: string, extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/webhooks', { url: rx.url + path, ...extra });
  assert.equal(res.statusCode, 201, res.body);
  const data = res.json().data as { id: string; secret: string };
  rx.addSecret(path, data.secret);
  return data;
}

await startWebhookWorker(t);

/** A company row of its own and a run left running, as test/webhooks-holds.test.ts makes them. */
async function insertCompany(krs: string, name: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO companies (primary_identifier_type, primary_identifier, name, status, snapshot, content_hash, name_folded, first_seen_date)
    VALUES ('KRS', ${krs}, ${name}, 'ACTIVE', '{}', '\\x00', ${name.toLowerCase()}, '2030-05-01') RETURNING id`.execute(t.db.db);
  return rows[0]!.id;
}

/** An endpoint at `path` and a watched company with one event of `date`; replays `after_id` just below the event. */
async function watchedEventAt(path: string, krs: string, name: string, date: string) {
  const company = await insertCompany(krs, name);
  const {
    rows: [ev],
  } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
    VALUES (${company}, ${date}, 'COMPANY_NAME_CHANGED', 'OLD NAME SA', ${name}, 'info') RETURNING id`.execute(t.db.db);
  const ep = await createEndpoint(path);
  const { watchCompanies } = await import('../src/modules/watchlist/repo.ts');
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company], new Date(`${date}T00:00:00Z`), new Date()));
  const replay = async () => {
    const res = await api('POST', `/webhooks/${ep.id}/replay`, { after_id: Number(ev!.id) - 1 });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().data.queued, 1);
  };
  return { ep, replay };
}

// Must run first: no endpoint of any account is enabled yet when the run writes its events.
test("an event of a running run, watched after the account's first endpoint was created: the feed shows it, so it is pushed", async () => {
  const company = await insertCompany('0000777001', 'GAP SA');
  const {
    rows: [run],
  } = await sql<{ id: string }>`
    INSERT INTO daily_runs (run_date, source, source_key, status) VALUES ('2030-05-01', 'file', 'file:gap', 'running') RETURNING id`.execute(
    t.db.db,
  );
  // The run writes an event (no webhook endpoint is enabled anywhere at this moment).
  const {
    rows: [ev],
  } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    VALUES (${company}, '2030-05-01', 'COMPANY_NAME_CHANGED', 'GAP OLD SA', 'GAP SA', 'info', ${run!.id}) RETURNING id`.execute(t.db.db);
  // While the run is still running: the account creates an endpoint, then watches the company.
  await createEndpoint('/gap');
  const { watchCompanies } = await import('../src/modules/watchlist/repo.ts');
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company], new Date('2030-05-01T00:00:00Z'), new Date()));
  // The run ends.
  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run!.id}`.execute(t.db.db);

  const feed = await api('GET', '/watchlist/events?after_id=0&per_page=100');
  assert.equal(feed.statusCode, 200, feed.body);
  assert.deepEqual(
    feed.json().data.map((e: { id: number }) => e.id),
    [Number(ev!.id)],
    'the feed shows the event',
  );
  await new Promise((r) => setTimeout(r, 5_000));
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ${ev!.id}`.execute(t.db.db);
  assert.deepEqual(
    { messages: rows[0]!.n, received: rx.on('/gap').length },
    { messages: 1, received: 1 },
    'the event the feed shows is never pushed',
  );
});

test('rotation: every message sent after rotate-secret answers carries the new signature (read-ahead messages too)', async () => {
  const ep = await createEndpoint('/rot');
  assert.equal((await api('PATCH', `/webhooks/${ep.id}`, { status: 'disabled' })).statusCode, 200);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await api('POST', `/webhooks/${ep.id}/test`, { event_type: 'COMPANY_NAME_CHANGED' });
    assert.equal(r.statusCode, 202, r.body);
    ids.push(r.json().data.message_id);
  }
  assert.equal((await api('PATCH', `/webhooks/${ep.id}`, { status: 'enabled' })).statusCode, 200);
  // Four attempts hang at the receiver; the worker has read the other four ahead.
  await waitFor('four hanging attempts', () => rx.on('/rot').length === 4, 10_000);
  const rot = await api('POST', `/webhooks/${ep.id}/rotate-secret`);
  assert.equal(rot.statusCode, 200, rot.body);
  const newSecret = rot.json().data.secret as string;
  rx.addSecret('/rot', newSecret);
  const before = rx.on('/rot').length;
  await waitFor(
    'the other messages',
    () =>
      new Set(
        rx
          .on('/rot')
          .filter((m) => m.status === 200)
          .map((m) => m.id),
      ).size === 8,
    20_000,
  );
  const after = rx.on('/rot').slice(before);
  const oldOnly = after
    .filter((m) => !m.verifiedBy.includes(newSecret))
    .map((m) => `${m.id}: ${m.signature.split(' ').length} signature(s)`);
  assert.deepEqual(oldOnly, [], 'sent after the rotation answered, yet signed by the old secret only');
});

test('replay while the last scheduled attempt is in flight: the replayed message still gets its whole schedule', async () => {
  const { ep, replay } = await watchedEventAt('/last-hangs', '0000777002', 'REPLAY RACE SA', '2030-05-02');
  // Attempt 1: 500. Attempt 2 (the last of schedule "1"): hangs until the 2 s timeout.
  await waitFor('the last attempt under way', () => rx.on('/last-hangs').length === 2, 15_000);
  await replay();
  // docs/webhooks.md: "A replayed message starts again as a new one: attempts 0, ..., the whole retry schedule ahead."
  await new Promise((r) => setTimeout(r, 6_000));
  const list = await api('GET', `/webhooks/${ep.id}/deliveries`);
  const d = list.json().data[0];
  const arrivalsAfterReplay = rx.on('/last-hangs').length - 2;
  assert.ok(
    arrivalsAfterReplay >= 1,
    `the replay was swallowed by the attempt in flight: ${arrivalsAfterReplay} attempts after it; the delivery: ${JSON.stringify({ status: d.status, attempts: d.attempts, next_attempt_at: d.next_attempt_at })}`,
  );
});

/** The hung first attempt at `path` is followed by a 2xx, and the log counts only that attempt. */
async function assertDeliveredOnceAfterHang(path: string, endpointId: string) {
  await waitFor('an attempt after the hung one', () => rx.on(path).some((m) => m.status === 200), 15_000);
  const latest = async () => (await api('GET', `/webhooks/${endpointId}/deliveries`)).json().data[0];
  await waitFor('the delivery recorded', async () => (await latest()).status === 'delivered', 10_000);
  const d = await latest();
  assert.equal(d.attempts, 1, JSON.stringify(d));
}

test('replay during the first attempt: the replayed message is sent again after it', async () => {
  const { ep, replay } = await watchedEventAt('/first-hangs', '0000777003', 'FIRST RACE SA', '2030-05-03');
  // Attempt 1 hangs until the 2 s timeout; the replay commits meanwhile (attempts 0 before and after it).
  await waitFor('the first attempt under way', () => rx.on('/first-hangs').length === 1, 15_000);
  await replay();
  // The replayed message's own first attempt is the one recorded: the hung one started before it.
  await assertDeliveredOnceAfterHang('/first-hangs', ep.id);
  assert.equal(new Set(rx.on('/first-hangs').map((m) => m.id)).size, 1, 'the same webhook-id');
});

test("retry of one delivery during its attempt: sent again after it (the older attempt's outcome not recorded over it)", async () => {
  const ep = await createEndpoint('/retry-hangs');
  const sent = await api('POST', `/webhooks/${ep.id}/test`, { event_type: 'COMPANY_NAME_CHANGED' });
  assert.equal(sent.statusCode, 202, sent.body);
  await waitFor('the first attempt under way', () => rx.on('/retry-hangs').length === 1, 15_000);
  const [d0] = (await api('GET', `/webhooks/${ep.id}/deliveries`)).json().data;
  const res = await api('POST', `/webhooks/${ep.id}/deliveries/${d0.id}/retry`);
  assert.equal(res.statusCode, 202, res.body);
  await assertDeliveredOnceAfterHang('/retry-hangs', ep.id);
});

test('POST /test for each of the 29 types: delivered, verified, type and data.test', async () => {
  const { EVENT_TYPES } = await import('../src/registry/model.ts');
  assert.equal(EVENT_TYPES.length, 29);
  const ep = await createEndpoint('/types');
  for (const type of EVENT_TYPES) {
    const r = await api('POST', `/webhooks/${ep.id}/test`, { event_type: type });
    assert.equal(r.statusCode, 202, `${type}: ${r.body}`);
  }
  await waitFor('29 messages', () => rx.on('/types').length >= 29, 20_000);
  for (const m of rx.on('/types')) {
    assert.equal(m.verifiedBy.length, 1);
    assert.equal(m.json.type, m.json.data.event_type);
    assert.equal(m.json.data.test, true);
    assert.deepEqual(Object.keys(m.json), ['type', 'timestamp', 'data']);
  }
  assert.deepEqual(new Set(rx.on('/types').map((m) => m.json.type)), new Set(EVENT_TYPES));
});
