/**
 * An endpoint created while a run is running gets that run's events of companies its account
 * already watched (DECISIONS 8: sent "after the daily run that detected them commits", to the
 * account's endpoints then), whether or not any endpoint anywhere was enabled when the run wrote
 * them. A real receiver verifies every message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';
import { accountIdOf } from './watchlist-support.ts';
import { startReceiver, startWebhookWorker } from './webhooks-support.ts';

const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1' } });
const a = await createAccount(t);
const aId = await accountIdOf(t, a.userRef);
const rx = await startReceiver(() => 200);
await startWebhookWorker(t);

/** Held fan-outs and their waiting jobs, of one run. */
async function heldOf(runId: string) {
  const { rows } = await sql<{ holds: number; jobs: number }>`
    SELECT (SELECT count(*)::int FROM webhook_fanout_holds WHERE run_id = ${runId}) AS holds,
      (SELECT count(*)::int FROM graphile_worker.jobs j JOIN webhook_fanout_holds h ON h.job_key = j.key WHERE h.run_id = ${runId}) AS jobs,
      (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier = 'webhooks.fanout') AS all_jobs`.execute(t.db.db);
  return rows[0]!;
}

// Runs first: no endpoint exists yet.
test('a run that ends with no endpoint enabled anywhere: its held batches and their waiting jobs are dropped', async () => {
  const {
    rows: [run],
  } = await sql<{ id: string }>`
    INSERT INTO daily_runs (run_date, source, source_key, status) VALUES ('2030-06-01', 'file', 'file:none', 'running') RETURNING id`.execute(
    t.db.db,
  );
  await sql`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    SELECT g, '2030-06-01', 'COMPANY_NAME_CHANGED', 'a', 'b', 'info', ${run!.id}::bigint FROM generate_series(1, 3) g`.execute(t.db.db);
  assert.deepEqual(await heldOf(run!.id), { holds: 1, jobs: 1, all_jobs: 1 }, 'held while the run runs, an endpoint or not');
  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run!.id}`.execute(t.db.db);
  assert.deepEqual(await heldOf(run!.id), { holds: 0, jobs: 0, all_jobs: 0 }, 'nothing left to run after it');
});

test('an endpoint created during a run, none enabled anywhere as its events were written: the run end pushes them', async () => {
  const {
    rows: [company],
  } = await sql<{ id: string }>`
    INSERT INTO companies (primary_identifier_type, primary_identifier, name, status, snapshot, content_hash, name_folded, first_seen_date)
    VALUES ('KRS', '0000778001', 'DURING RUN SA', 'ACTIVE', '{}', '\\x00', 'during run sa', '2030-06-01') RETURNING id`.execute(t.db.db);
  const { watchCompanies } = await import('../src/modules/watchlist/repo.ts');
  await t.db.db.transaction().execute((trx) => watchCompanies(trx, aId, [company!.id], new Date('2030-06-01T00:00:00Z'), new Date()));
  const {
    rows: [run],
  } = await sql<{ id: string }>`
    INSERT INTO daily_runs (run_date, source, source_key, status) VALUES ('2030-06-02', 'file', 'file:during', 'running') RETURNING id`.execute(
    t.db.db,
  );
  assert.equal((await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints`.execute(t.db.db)).rows[0]!.n, 0);
  const {
    rows: [ev],
  } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    VALUES (${company!.id}, '2030-06-02', 'COMPANY_NAME_CHANGED', 'BEFORE SA', 'DURING RUN SA', 'info', ${run!.id}) RETURNING id`.execute(
    t.db.db,
  );
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(a.master),
    payload: { url: `${rx.url}/during` },
  });
  assert.equal(created.statusCode, 201, created.body);
  rx.addSecret('/during', created.json().data.secret);
  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run!.id}`.execute(t.db.db);

  await waitFor("the run's event at the new endpoint", () => rx.on('/during').length > 0, 15_000);
  const got = rx.on('/during');
  assert.deepEqual(
    got.map((m) => ({ status: m.status, verified: m.verifiedBy.length > 0, id: m.json.data.id })),
    [{ status: 200, verified: true, id: Number(ev!.id) }],
  );
});
