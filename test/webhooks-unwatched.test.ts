/**
 * A company removed from the watchlist leaves the feed at once (docs/watchlist.md), and its
 * webhook messages not yet delivered stop with it (DECISIONS 8: exactly the events the feed
 * shows): no more retries, `failed` in the delivery log with the reason; delivered ones stay.
 * Watched again, the company's events are in the feed again, and so are those stopped messages.
 * A real receiver that keeps failing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import { accountIdOf } from './watchlist-support.ts';
import { startReceiver, startWebhookWorker } from './webhooks-support.ts';
import { unwatchCompanies, watchCompanies } from '../src/modules/watchlist/repo.ts';
import { UNWATCHED_ERROR } from '../src/modules/webhooks/watch-fanout.ts';
import { recordAttempts, type RecordedAttempt } from '../src/modules/webhooks/dispatch-repo.ts';

const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1' } });
const a = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
let backUp = false;
const rx = await startReceiver(({ path }) =>
  path === '/queue' ? 'hang' : path === '/ok' || (path.startsWith('/back') && backUp) ? 200 : 500,
);
await startWebhookWorker(t);

async function companyWithEvent(krs: string): Promise<{ company: string; event: string }> {
  const {
    rows: [c],
  } = await sql<{ id: string }>`
    INSERT INTO companies (primary_identifier_type, primary_identifier, name, status, snapshot, content_hash, name_folded, first_seen_date)
    VALUES ('KRS', ${krs}, 'UNWATCHED SA', 'ACTIVE', '{}', '\\x00', 'unwatched sa', '2030-07-01') RETURNING id`.execute(t.db.db);
  const {
    rows: [e],
  } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
    VALUES (${c!.id}, '2030-07-01', 'COMPANY_NAME_CHANGED', 'OLD SA', 'UNWATCHED SA', 'info') RETURNING id`.execute(t.db.db);
  return { company: c!.id, event: e!.id };
}

test('unwatching a company stops its pending messages: failed with the reason, no attempt after; a delivered one stays delivered', async () => {
  for (const path of ['/fails', '/ok']) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(a.master), payload: { url: rx.url + path } });
    assert.equal(r.statusCode, 201, r.body);
    rx.addSecret(path, r.json().data.secret);
  }
  const { company, event } = await companyWithEvent('0000779001');
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company], new Date('2030-07-01T00:00:00Z'), new Date()));
  await waitFor('two failed attempts and the delivery', () => rx.on('/fails').length >= 2 && rx.on('/ok').length === 1, 20_000);

  await t.db.db.transaction().execute((trx) => unwatchCompanies(trx, aId, [company], new Date()));
  const { rows } = await sql<{ path: string; status: string; last_error: string | null }>`
    SELECT substring(ep.url from '/[a-z]+$') AS path, d.status, d.last_error
    FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id WHERE d.event_id = ${event} ORDER BY 1`.execute(t.db.db);
  assert.deepEqual(rows, [
    { path: '/fails', status: 'failed', last_error: UNWATCHED_ERROR },
    { path: '/ok', status: 'delivered', last_error: null },
  ]);
  // An attempt under way as the unwatch committed may still arrive; none starts after it.
  await new Promise((r) => setTimeout(r, 1_000));
  const settled = rx.on('/fails').length;
  await new Promise((r) => setTimeout(r, 4_000));
  assert.equal(rx.on('/fails').length, settled, 'retried after the company was unwatched');
  const list = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks`, headers: bearer(a.master) });
  const failing = list.json().data.find((e: { url: string }) => e.url.endsWith('/fails'));
  const log = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${failing.id}/deliveries`, headers: bearer(a.master) });
  assert.equal(log.json().data[0].last_error, UNWATCHED_ERROR);
  assert.equal(log.json().data[0].status, 'failed');
  assert.equal(log.json().data[0].next_attempt_at, null);
});

/** Waits for a 2xx on `path` among the messages after its first `n`. */
const deliveredAfter = (path: string, n: number, what: string) =>
  waitFor(
    what,
    () =>
      rx
        .on(path)
        .slice(n)
        .some((m) => m.status === 200),
    10_000,
  );

test('a company watched again: the feed shows its events again, so a message its removal stopped is sent after all, with its webhook-id', async () => {
  const ids: Record<string, string> = {};
  for (const path of ['/back', '/back-off']) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(a.master), payload: { url: rx.url + path } });
    assert.equal(r.statusCode, 201, r.body);
    rx.addSecret(path, r.json().data.secret);
    ids[path] = r.json().data.id;
  }
  const setStatus = async (status: string) => {
    const r = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/webhooks/${ids['/back-off']}`,
      headers: bearer(a.master),
      payload: { status },
    });
    assert.equal(r.statusCode, 200, r.body);
  };
  const { company, event } = await companyWithEvent('0000779002');
  const since = new Date('2030-07-01T00:00:00Z');
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company], since, new Date()));
  await waitFor('a failed attempt on each', () => rx.on('/back').length >= 1 && rx.on('/back-off').length >= 1, 20_000);
  await t.db.db.transaction().execute((trx) => unwatchCompanies(trx, aId, [company], new Date()));
  await setStatus('disabled'); // a disabled endpoint keeps its pending messages: these too, once watched again
  await new Promise((r) => setTimeout(r, 1_000)); // an attempt under way as the unwatch committed ends
  const stopped = rx.on('/back').length;
  const stoppedOff = rx.on('/back-off').length;

  backUp = true;
  // docs/watchlist.md: watched again from the day it was first watched, its events in the feed again.
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company], new Date(), new Date()));
  const feed = await t.app.inject({ method: 'GET', url: '/api/v1/watchlist/events', headers: bearer(a.master) });
  assert.ok(
    feed.json().data.some((e: { id: number }) => String(e.id) === event),
    'the feed shows the event again',
  );
  await deliveredAfter('/back', stopped, 'the message sent again');
  assert.equal(new Set(rx.on('/back').map((m) => m.id)).size, 1, 'the same webhook-id');
  await waitFor('the delivery recorded', async () => {
    const { rows } = await sql<{ status: string }>`
      SELECT d.status FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
      WHERE d.event_id = ${event} AND ep.url LIKE '%/back'`.execute(t.db.db);
    return rows.length === 1 && rows[0]!.status === 'delivered';
  });
  assert.equal(rx.on('/back-off').length, stoppedOff, 'nothing sent to the disabled endpoint');
  await setStatus('enabled');
  await deliveredAfter('/back-off', stoppedOff, 'the disabled endpoint enabled gets it');
});

test('an attempt under way as its company is unwatched: a 2xx is recorded delivered (not sent again on a new watch), a failure is not', async () => {
  const {
    rows: [ep],
  } = await sql<{ id: string }>`SELECT id FROM webhook_endpoints WHERE url LIKE '%/ok'`.execute(t.db.db);
  const due = new Date('2030-07-02T00:00:00Z');
  const { rows } = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at, attempts)
    SELECT ${ep!.id}, ${aId}, 'COMPANY_NAME_CHANGED', '{}', ${due}, 1 FROM generate_series(1, 2) RETURNING id`.execute(t.db.db);
  // Both read (attempts 1, due `due`), then stopped by an unwatch while their attempts are under way.
  await sql`UPDATE webhook_deliveries d SET status = 'failed', last_error = ${UNWATCHED_ERROR}
    WHERE id = ANY(${rows.map((r) => r.id)}::bigint[])`.execute(t.db.db);
  const outcome = (id: string, ok: boolean): RecordedAttempt => ({
    id,
    endpointId: ep!.id,
    ok,
    gone: false,
    status: ok ? 200 : 500,
    error: ok ? null : 'HTTP 500',
    body: '',
    nextAttemptAt: ok ? null : new Date(due.getTime() + 1000),
    attemptsBefore: 1,
    dueBefore: due,
    at: due,
    endedAt: due,
  });
  await recordAttempts(t.db.db, [outcome(rows[0]!.id, true), outcome(rows[1]!.id, false)], due, { owner: 'none', ids: [] });
  const { rows: after } = await sql<{ status: string; attempts: number; last_error: string | null }>`
    SELECT status, attempts, last_error FROM webhook_deliveries WHERE id = ANY(${rows.map((r) => r.id)}::bigint[]) ORDER BY id`.execute(
    t.db.db,
  );
  assert.deepEqual(after, [
    { status: 'delivered', attempts: 2, last_error: null },
    { status: 'failed', attempts: 1, last_error: UNWATCHED_ERROR },
  ]);
});

test("unwatching a company whose message the worker has read ahead, behind an endpoint's attempts under way: that message is not sent", async () => {
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(a.master), payload: { url: `${rx.url}/queue` } });
  assert.equal(r.statusCode, 201, r.body);
  // Four events of one company fill the endpoint's four attempts (they hang until the 2 s
  // timeout); the other company's event waits, read ahead, behind them.
  const first = await companyWithEvent('0000779003');
  await sql`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
    SELECT ${first.company}, '2030-07-01', 'COMPANY_NAME_CHANGED', 'OLD SA', 'NEW SA ' || g, 'info' FROM generate_series(1, 3) g`.execute(
    t.db.db,
  );
  const second = await companyWithEvent('0000779004');
  await t.db.db
    .transaction()
    .execute((trx) => watchCompanies(trx, aId, [first.company, second.company], new Date('2030-07-01T00:00:00Z'), new Date()));
  await waitFor('four attempts under way', () => rx.on('/queue').length === 4, 10_000);
  await t.db.db.transaction().execute((trx) => unwatchCompanies(trx, aId, [second.company], new Date()));
  const {
    rows: [m],
  } = await sql<{ id: string }>`
    SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
    WHERE d.event_id = ${second.event} AND ep.url LIKE '%/queue'`.execute(t.db.db);
  await new Promise((r) => setTimeout(r, 4_000)); // the four time out and go again; a slot is free meanwhile
  assert.ok(rx.on('/queue').length > 4, 'the endpoint was sent to after the unwatch');
  assert.deepEqual(
    rx.on('/queue').filter((x) => x.id === `msg_${m!.id}`),
    [],
    "the unwatched company's message was sent after the unwatch",
  );
});
