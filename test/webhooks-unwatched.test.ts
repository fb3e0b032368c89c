/**
 * A company removed from the watchlist leaves the feed at once (docs/watchlist.md), and its
 * webhook messages not yet delivered stop with it (DECISIONS 8: exactly the events the feed
 * shows): no more retries, `failed` in the delivery log with the reason; delivered ones stay.
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

const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1' } });
const a = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
const rx = await startReceiver(({ path }) => (path === '/ok' ? 200 : 500));
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
  const { rows } = await sql<{ path: string; status: string; last_error: string | null; next_attempt_at: Date | null }>`
    SELECT substring(ep.url from '/[a-z]+$') AS path, d.status, d.last_error, d.next_attempt_at
    FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id WHERE d.event_id = ${event} ORDER BY 1`.execute(t.db.db);
  assert.deepEqual(rows, [
    { path: '/fails', status: 'failed', last_error: UNWATCHED_ERROR, next_attempt_at: null },
    { path: '/ok', status: 'delivered', last_error: null, next_attempt_at: null },
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
});
