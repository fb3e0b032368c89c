import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { createWebhookJobs } from '../src/modules/webhooks/jobs.ts';
import type { Sender } from '../src/modules/webhooks/delivery.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * The fan-out held while its run is running (migration 20261201000100_webhook_fanout_holds): the
 * job is queued in the events' transaction as before, due only a minute later; the run's end makes
 * it due at once; events of no running run are not held; a fan-out that ran forgets its hold.
 */

const db = await createTestDatabase();
const {
  rows: [acct],
} = await sql<{ id: string }>`
  INSERT INTO accounts (user_ref, email, name, status) VALUES ('HOLD1', 'hold1@holds.test', 'holds', 'initialized') RETURNING id`.execute(
  db.db,
);
await sql`INSERT INTO webhook_endpoints (account_id, url) VALUES (${acct!.id}, 'http://127.0.0.1:9/hook')`.execute(db.db);

async function startRun(date: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO daily_runs (run_date, source, source_key, status) VALUES (${date}::date, 'file', ${`file:${date}`}, 'running') RETURNING id`.execute(
    db.db,
  );
  return rows[0]!.id;
}

/** A batch's events, as the run's writer inserts them: one statement. */
async function insertEvents(runId: string | null, n: number): Promise<{ lo: number; hi: number }> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    SELECT g, '2030-05-01', 'COMPANY_NAME_CHANGED', 'a', 'b', 'info', ${runId}::bigint FROM generate_series(1, ${n}) g
    RETURNING id`.execute(db.db);
  const ids = rows.map((r) => Number(r.id));
  return { lo: Math.min(...ids), hi: Math.max(...ids) };
}

/** The fan-out job of an id range: seconds until it is due (negative: due already), or null when there is none. */
async function fanOutDueIn(r: { lo: number; hi: number }): Promise<number | null> {
  const { rows } = await sql<{ s: number }>`
    SELECT extract(epoch FROM run_at - now())::float8 AS s FROM graphile_worker.jobs
    WHERE task_identifier = 'webhooks.fanout' AND key = ${`webhooks.fanout:${r.lo}-${r.hi}`}`.execute(db.db);
  return rows[0]?.s ?? null;
}

/** A company row of its own (no registry run): what the fan-out's statement reads of it. */
async function insertCompany(krs: string, name: string): Promise<{ id: string }> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO companies (primary_identifier_type, primary_identifier, name, status, snapshot, content_hash, name_folded, first_seen_date)
    VALUES ('KRS', ${krs}, ${name}, 'ACTIVE', '{}', '\\x00', ${name.toLowerCase()}, '2030-05-01') RETURNING id`.execute(db.db);
  return rows[0]!;
}

/** The webhook jobs as a worker runs them; nothing is sent in these tests. */
const noSend: Sender = { send: async () => Promise.reject(new Error('not sent in this test')), close: async () => {} };
const jobs = createWebhookJobs({
  db: db.db,
  clock: systemClock,
  logger: pino({ level: 'silent' }),
  sender: noSend,
  retrySchedule: [1],
  concurrency: 1,
  perEndpoint: 1,
  leaseMs: 20_000,
});

const holds = async (runId: string) =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_fanout_holds WHERE run_id = ${runId}`.execute(db.db)).rows[0]!.n;

test("a running run's fan-out is held for a minute and made due when the run ends, in the events' order", async () => {
  const run = await startRun('2030-05-01');
  const first = await insertEvents(run, 3);
  const second = await insertEvents(run, 2);
  for (const r of [first, second]) {
    const s = await fanOutDueIn(r);
    assert.ok(s !== null && s > 50 && s <= 60, `held about a minute (due in ${s} s)`);
  }
  assert.equal(await holds(run), 2);

  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run}`.execute(db.db);
  for (const r of [first, second]) {
    const s = await fanOutDueIn(r);
    assert.ok(s !== null && s <= 0, `due at once after the run (due in ${s} s)`);
  }
  assert.equal(await holds(run), 0);
  const { rows } = await sql<{ key: string }>`
    SELECT key FROM graphile_worker.jobs WHERE task_identifier = 'webhooks.fanout' AND key = ANY(${[first, second].map((r) => `webhooks.fanout:${r.lo}-${r.hi}`)})
    ORDER BY run_at`.execute(db.db);
  assert.deepEqual(
    rows.map((r) => r.key),
    [first, second].map((r) => `webhooks.fanout:${r.lo}-${r.hi}`),
    'one job each, due in the order of their events (the workers take due jobs by run_at)',
  );
});

test('a failed run releases its fan-out too; events of no running run are not held', async () => {
  const run = await startRun('2030-05-02');
  const held = await insertEvents(run, 2);
  assert.ok((await fanOutDueIn(held))! > 50);
  await sql`UPDATE daily_runs SET status = 'failed', finished_at = now(), error = 'boom' WHERE id = ${run}`.execute(db.db);
  assert.ok((await fanOutDueIn(held))! <= 0);

  // Events of a run that has ended already (or of none) go out at once, as before the hold.
  const after = await insertEvents(run, 1);
  assert.ok((await fanOutDueIn(after))! <= 0);
  const none = await insertEvents(null, 1);
  assert.ok((await fanOutDueIn(none))! <= 0);
  assert.equal(await holds(run), 0);
});

test('a fan-out that ran (its run still running: the process that ran it died) forgets its hold', async () => {
  const run = await startRun('2030-05-03');
  const r = await insertEvents(run, 2);
  assert.equal(await holds(run), 1);
  const payload = { from_id: r.lo, to_id: r.hi, from_date: '2030-05-03', to_date: '2030-05-03' };
  // As graphile-worker runs it: the job under the key the trigger gave it.
  const job = { key: `webhooks.fanout:${r.lo}-${r.hi}` };
  await (jobs.tasks['webhooks.fanout'] as (p: unknown, h: unknown) => Promise<void>)(payload, { job });
  assert.equal(await holds(run), 0);
  // The run's end then finds nothing to release: no second job for the range.
  await sql`SELECT graphile_worker.remove_job(${`webhooks.fanout:${r.lo}-${r.hi}`})`.execute(db.db);
  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run}`.execute(db.db);
  assert.equal(await fanOutDueIn(r), null);
});

test('a fan-out whose range has messages already (a replay first, or the job run again) adds only the missing ones', async () => {
  // A watched company with two events of no running run (not held), in the account's feed.
  const company = await insertCompany('0000999001', 'FANOUT SA');
  const { rows } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
    SELECT ${company!.id}::bigint, '2030-05-04', 'COMPANY_NAME_CHANGED', 'a' || g, 'b' || g, 'info' FROM generate_series(1, 2) g
    RETURNING id`.execute(db.db);
  const ids = rows.map((r) => Number(r.id));
  const r = { lo: Math.min(...ids), hi: Math.max(...ids) };
  await sql`
    INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
    SELECT ${acct!.id}, id, event_date, company_id, event_type FROM events WHERE id BETWEEN ${r.lo} AND ${r.hi}`.execute(db.db);
  const fanOut = () =>
    (jobs.tasks['webhooks.fanout'] as (p: unknown, h: unknown) => Promise<void>)(
      { from_id: r.lo, to_id: r.hi, from_date: '2030-05-04', to_date: '2030-05-04' },
      { job: { key: `webhooks.fanout:${r.lo}-${r.hi}` } },
    );
  const messages = async () =>
    (
      await sql<{ id: string; event_id: string }>`
        SELECT id, event_id FROM webhook_deliveries WHERE event_id BETWEEN ${r.lo} AND ${r.hi} ORDER BY event_id`.execute(db.db)
    ).rows;

  await fanOut();
  const first = await messages();
  assert.deepEqual(
    first.map((m) => Number(m.event_id)),
    ids,
    'one message an event',
  );
  // The job run again (its completion lost): nothing new, nothing changed.
  await fanOut();
  assert.deepEqual(await messages(), first);
  // One message there already, the other not (as after a replay that queued the first event
  // before its fan-out ran): the missing one is added, the other kept as it was.
  await sql`DELETE FROM webhook_deliveries WHERE id = ${first[1]!.id}`.execute(db.db);
  await fanOut();
  const after = await messages();
  assert.equal(after.length, 2);
  assert.deepEqual(after[0], first[0]);
  assert.equal(Number(after[1]!.event_id), ids[1]);
  assert.notEqual(after[1]!.id, first[1]!.id, 'a new message for the missing one');
  await sql`SELECT graphile_worker.remove_job(${`webhooks.fanout:${r.lo}-${r.hi}`})`.execute(db.db);
});

test("a company watched during its events' run: the watch leaves them to the run's held fan-out, which sends them when the run ends; a finished run's, the watch sends", async () => {
  const { fanOutWatchStarted } = await import('../src/modules/webhooks/watch-fanout.ts');
  const { fanOutEvents } = await import('../src/modules/webhooks/repo.ts');
  const company = await insertCompany('0000999002', 'WATCHED LATE SA');
  const run = await startRun('2030-05-06');
  const { rows } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    VALUES (${company!.id}, '2030-05-06', 'COMPANY_NAME_CHANGED', 'a', 'b', 'info', ${run}) RETURNING id`.execute(db.db);
  const eventId = Number(rows[0]!.id);
  const messages = async () =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ${eventId}`.execute(db.db)).rows[0]!.n;
  // The watch, as watchCompanies makes it: the feed row, then the messages.
  const watch = () =>
    db.db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
        VALUES (${acct!.id}, ${eventId}, '2030-05-06', ${company!.id}, 'COMPANY_NAME_CHANGED') ON CONFLICT DO NOTHING`.execute(trx);
      return fanOutWatchStarted(trx, acct!.id, [company!.id], '2030-05-06', new Date());
    });
  assert.equal(await watch(), 0, 'the run is running: nothing sent before it ends');
  assert.equal(await messages(), 0);
  await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE id = ${run}`.execute(db.db);
  // The released job's statement over the run's range finds the watched company in the feed.
  const fanned = await fanOutEvents(db.db, {
    fromId: eventId,
    toId: eventId,
    fromDate: '2030-05-06',
    toDate: '2030-05-06',
    at: new Date(),
    again: true,
  });
  assert.equal(fanned, 1);
  assert.equal(await messages(), 1);
  // Watched again once the run has ended: the message is there already, none added.
  assert.equal(await watch(), 0);
  await sql`DELETE FROM webhook_deliveries WHERE event_id = ${eventId}`.execute(db.db);
  assert.equal(await watch(), 1, 'a finished run: the watch sends it');
  assert.equal(await messages(), 1);
});

test("the queue depth counts due messages of enabled endpoints: a disabled endpoint's held messages are not waiting", async () => {
  const { countDueDeliveries } = await import('../src/modules/webhooks/dispatch-repo.ts');
  const {
    rows: [ep],
  } = await sql<{ id: string }>`
    INSERT INTO webhook_endpoints (account_id, url) VALUES (${acct!.id}, 'http://127.0.0.1:9/depth') RETURNING id`.execute(db.db);
  const before = await countDueDeliveries(db.db, new Date());
  await sql`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at)
    SELECT ${ep!.id}, ${acct!.id}, 'COMPANY_NAME_CHANGED', '{}', now() - interval '1 second' FROM generate_series(1, 3)`.execute(db.db);
  assert.equal(await countDueDeliveries(db.db, new Date()), before + 3);
  await sql`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ${ep!.id}`.execute(db.db);
  assert.equal(await countDueDeliveries(db.db, new Date()), before);
});

test('a replayed message starts again as a new one: attempts 0, its last outcome cleared, pending now', async () => {
  const { requeueFeedAfter } = await import('../src/modules/webhooks/repo.ts');
  const company = await insertCompany('0000999003', 'REPLAYED SA');
  const {
    rows: [event],
  } = await sql<{ id: string }>`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
    VALUES (${company!.id}, '2030-05-07', 'COMPANY_NAME_CHANGED', 'a', 'b', 'info') RETURNING id`.execute(db.db);
  const {
    rows: [ep],
  } = await sql<{ id: string; account_id: string }>`
    INSERT INTO webhook_endpoints (account_id, url) VALUES (${acct!.id}, 'http://127.0.0.1:9/replayed') RETURNING id, account_id`.execute(
    db.db,
  );
  await sql`
    INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
    VALUES (${acct!.id}, ${event!.id}, '2030-05-07', ${company!.id}, 'COMPANY_NAME_CHANGED')`.execute(db.db);
  await sql`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, payload, status, attempts, last_attempt_at, last_response_status, last_response_body, last_error)
    VALUES (${ep!.id}, ${acct!.id}, ${event!.id}, 'COMPANY_NAME_CHANGED', '{}', 'failed', 8, now(), 500, 'oops', 'The endpoint answered 500.')`.execute(
    db.db,
  );
  const at = new Date();
  assert.equal(await requeueFeedAfter(db.db, ep!, Number(event!.id) - 1, at), 1);
  const { rows } = await sql`
    SELECT status, attempts, last_attempt_at, last_response_status, last_response_body, last_error, next_attempt_at
    FROM webhook_deliveries WHERE endpoint_id = ${ep!.id}`.execute(db.db);
  assert.deepEqual(rows, [
    {
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      last_response_status: null,
      last_response_body: null,
      last_error: null,
      next_attempt_at: at,
    },
  ]);
});

test("a held fan-out job running while its run still runs and a watch of the same moment never miss each other's events", async () => {
  const { fanOutWatchStarted } = await import('../src/modules/webhooks/watch-fanout.ts');
  const { lockEventsWriter } = await import('../src/registry/store.ts');
  /** Resolves once a backend waits for an advisory lock (the events writer's). */
  const waitersOfLock = async (n: number) => {
    for (let i = 0; i < 500; i++) {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`.execute(db.db);
      if (rows[0]!.n >= n) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no ${n} waiter(s) on the events writer's lock`);
  };
  const endpoints = (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = ${acct!.id} AND status = 'enabled'`.execute(db.db)
  ).rows[0]!.n;
  /** A running run's event of a company no one watches yet, its fan-out held. */
  const heldEvent = async (krs: string, date: string) => {
    const company = await insertCompany(krs, `RACE ${krs}`);
    const run = await startRun(date);
    const { rows } = await sql<{ id: string }>`
      INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
      VALUES (${company.id}, ${date}::date, 'COMPANY_NAME_CHANGED', 'a', 'b', 'info', ${run}) RETURNING id`.execute(db.db);
    const eventId = Number(rows[0]!.id);
    assert.equal(await holds(run), 1);
    const runJob = () =>
      (jobs.tasks['webhooks.fanout'] as (p: unknown, h: unknown) => Promise<void>)(
        { from_id: eventId, to_id: eventId, from_date: date, to_date: date },
        { job: { key: `webhooks.fanout:${eventId}-${eventId}` } },
      );
    const messages = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ${eventId}`.execute(db.db)).rows[0]!.n;
    return { company, run, eventId, runJob, messages };
  };

  // The watch first: it leaves the event to the hold, and the job, started before the watch
  // commits, reads the feed only after it (it waits for the events writer's lock the watch holds).
  {
    const e = await heldEvent('0000999011', '2030-05-08');
    let job: Promise<void> | undefined;
    await db.db.transaction().execute(async (trx) => {
      await lockEventsWriter(trx);
      await sql`
        INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
        VALUES (${acct!.id}, ${e.eventId}, '2030-05-08', ${e.company.id}, 'COMPANY_NAME_CHANGED')`.execute(trx);
      assert.equal(await fanOutWatchStarted(trx, acct!.id, [e.company.id], '2030-05-08', new Date()), 0, 'left to the held job');
      job = e.runJob();
      await waitersOfLock(1);
    });
    await job;
    assert.equal(await e.messages(), endpoints, 'the job found the watched company in the feed: one message an endpoint');
    assert.equal(await holds(e.run), 0);
  }

  // The job first (a batch of the run holding the lock as both come): the watch, queued behind
  // it, finds the hold gone and sends the event itself.
  {
    const e = await heldEvent('0000999012', '2030-05-09');
    let job: Promise<void> | undefined;
    let watch: Promise<number> | undefined;
    await db.db.transaction().execute(async (batch) => {
      await lockEventsWriter(batch);
      job = e.runJob();
      await waitersOfLock(1);
      watch = db.db.transaction().execute(async (trx) => {
        await lockEventsWriter(trx);
        await sql`
          INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
          VALUES (${acct!.id}, ${e.eventId}, '2030-05-09', ${e.company.id}, 'COMPANY_NAME_CHANGED')`.execute(trx);
        return fanOutWatchStarted(trx, acct!.id, [e.company.id], '2030-05-09', new Date());
      });
      await waitersOfLock(2);
    });
    await job;
    assert.equal(await watch, endpoints, 'the watch sent it: the hold was gone');
    assert.equal(await e.messages(), endpoints);
  }
  for (const d of ['2030-05-08', '2030-05-09']) {
    await sql`UPDATE daily_runs SET status = 'completed', finished_at = now() WHERE run_date = ${d}::date`.execute(db.db);
  }
});
