import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import pg from 'pg';
import { EVENTS_WRITER_LOCK } from '../src/registry/store.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { nipFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, runDay, setBalance, feedCountMismatches } from './watchlist-support.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

/**
 * `after_id` polling (the feed's extension): a client that keeps the last id it saw never misses
 * or repeats an event, even while daily runs write. docs/watchlist.md gives the argument; these
 * tests try to break it.
 */

const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);
await setBalance(t, accountId, 1_000_000);
const auth = bearer(acct.master);

interface Page {
  data: { id: number; primary_identifier: string }[];
  meta: { next_after_id: number; has_more: boolean; after_id: number; per_page: number };
}

async function poll(afterId: number, perPage: number, extra = ''): Promise<Page> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/watchlist/events?after_id=${afterId}&per_page=${perPage}${extra}`,
    headers: auth,
  });
  assert.equal(res.statusCode, 200, res.body + t.logLines.filter((l) => l.includes('unhandled')).join('\n'));
  return res.json();
}

/** The feed's events as the events table defines them: watched companies, from the watch's day on. */
async function expectedIds(): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    SELECT e.id::float8 AS id FROM events e JOIN watchlist w ON w.company_id = e.company_id
    WHERE w.account_id = ${accountId} AND w.removed_at IS NULL AND e.event_date >= w.watched_date ORDER BY e.id`.execute(t.db.db);
  return rows.map((r) => r.id);
}

const specsA: CompanySpec[] = Array.from({ length: 600 }, (_, i) => ({ n: 5000 + i }));
const specsB: CompanySpec[] = Array.from({ length: 600 }, (_, i) => ({ n: 7000 + i }));
const unwatched: CompanySpec[] = Array.from({ length: 200 }, (_, i) => ({ n: 9000 + i }));

test('the migration takes the same lock as the registry writers, and the event id sequence hands out ids one at a time', async () => {
  const migration = readFileSync(new URL('../src/db/migrations/20261121000500_watchlist.ts', import.meta.url), 'utf8');
  assert.match(migration, new RegExp(`pg_advisory_xact_lock\\(${EVENTS_WRITER_LOCK}\\)`));
  // A cache above 1 would let two sessions hold interleaved blocks of ids: a later session's
  // lower ids could then commit after a higher id was read.
  const { rows } = await sql<{
    cache: string;
  }>`SELECT seqcache::text AS cache FROM pg_sequence WHERE seqrelid = 'events_id_seq'::regclass`.execute(t.db.db);
  assert.equal(rows[0]!.cache, '1');
});

test('polling with after_id while two daily runs write: every event once, in id order', async () => {
  await runDay(t.db.db, '2026-11-20', [...specsA, ...specsB, ...unwatched]);
  const { rows } = await sql<{
    id: string;
  }>`SELECT company_id AS id FROM company_identifiers WHERE key = ANY(${[...specsA, ...specsB].map((s) => storedIdentifierKey('NIP', nipFor(s.n)))}::bigint[])`.execute(
    t.db.db,
  );
  assert.equal(rows.length, 1200);
  await t.db.db.transaction().execute((trx) =>
    watchCompanies(
      trx,
      accountId,
      rows.map((r) => r.id),
      new Date('2026-11-20T12:00:00Z'),
    ),
  );

  // Two sources writing at once, in many small transactions; each company gets 2 or 3 events.
  const change = (s: CompanySpec, day: number): CompanySpec => ({
    ...s,
    name: `ZMIENIONA ${day} ${s.n}`,
    city: s.n % 2 === 0 ? `Miasto ${day}` : undefined,
    contacts: [{ type: 'phone', value: `+48 22 ${day}${s.n}` }],
  });
  const { runDaily } = await import('../src/registry/daily.ts');
  const { arraySource } = await import('./helpers/registry.ts');
  const { companySnapshot } = await import('./helpers/registry.ts');
  let running = 2;
  const runs = [
    runDaily(t.db.db, {
      date: '2026-11-21',
      source: arraySource([...specsA, ...unwatched.slice(0, 100)].map((s) => companySnapshot(change(s, 21)))),
      sourceKey: 'poll-a',
      batchSize: 20,
    }),
    runDaily(t.db.db, {
      date: '2026-11-21',
      source: arraySource([...specsB, ...unwatched.slice(100)].map((s) => companySnapshot(change(s, 21)))),
      sourceKey: 'poll-b',
      batchSize: 15,
    }),
  ].map((p) =>
    p.finally(() => {
      running--;
    }),
  );

  const seen: number[] = [];
  let cursor = 0;
  let polls = 0;
  for (;;) {
    const stillRunning = running > 0;
    const page = await poll(cursor, 37);
    polls++;
    for (const e of page.data) {
      assert.ok(e.id > cursor, `id ${e.id} after cursor ${cursor}`);
      seen.push(e.id);
    }
    assert.equal(page.meta.next_after_id, page.data.length > 0 ? page.data.at(-1)!.id : cursor);
    cursor = page.meta.next_after_id;
    if (!stillRunning && !page.meta.has_more) break;
    if (page.data.length === 0) await new Promise((r) => setTimeout(r, 5));
  }
  const summaries = await Promise.all(runs);
  assert.ok(polls > 10, `the poller ran alongside the writers (${polls} polls)`);
  const expected = await expectedIds();
  assert.equal(expected.length, summaries.reduce((n, s) => n + s.events, 0) - (await unwatchedEventCount()));
  assert.ok(expected.length >= 2400, `${expected.length} events`);
  assert.equal(new Set(seen).size, seen.length, 'no event twice');
  assert.deepEqual(seen, expected, 'every event of the feed, in id order');
});

async function unwatchedEventCount(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM events e JOIN company_identifiers ci ON ci.company_id = e.company_id
    WHERE e.event_date = '2026-11-21' AND ci.key = ANY(${unwatched.map((s) => storedIdentifierKey('NIP', nipFor(s.n)))}::bigint[])`.execute(
    t.db.db,
  );
  return rows[0]!.n;
}

test('a writer that forgot the lock is serialised anyway, and a poll waits for the writer in flight', async () => {
  const client1 = new pg.Client({ connectionString: t.db.url });
  const client2 = new pg.Client({ connectionString: t.db.url });
  await client1.connect();
  await client2.connect();
  try {
    const {
      rows: [company],
    } = await client1.query<{ id: string }>(`SELECT company_id AS id FROM company_identifiers WHERE key = identifier_key('NIP', $1)`, [
      nipFor(5000),
    ]);
    const insert = (c: pg.Client, value: string) =>
      c.query(
        `INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity) VALUES ($1, '2026-11-22', 'COMPANY_NAME_CHANGED', 'x', $2, 'info') RETURNING id`,
        [company!.id, value],
      );
    const last = (await expectedIds()).at(-1)!;

    // Writer 1: no explicit lock, holds its transaction open after inserting.
    await client1.query('BEGIN');
    const first = Number((await insert(client1, 'first')).rows[0]!.id);
    // Writer 2 must wait for writer 1 (the BEFORE STATEMENT trigger takes the lock).
    await client2.query('BEGIN');
    let secondDone = false;
    const second = insert(client2, 'second').then((r) => {
      secondDone = true;
      return Number(r.rows[0]!.id);
    });
    // The poll below must queue for the lock after the second writer (the order asserted later),
    // so it starts once that writer is seen waiting.
    const lockWaiters = async () =>
      (
        await client1.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1`,
          [Number(BigInt(EVENTS_WRITER_LOCK) & 0xffffffffn)],
        )
      ).rows[0]!.n;
    for (const until = Date.now() + 10_000; (await lockWaiters()) < 1 && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
    // A poll must wait too: it reads under the lock in shared mode.
    let pollDone = false;
    const polled = poll(last, 100).then((p) => {
      pollDone = true;
      return p;
    });
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(secondDone, false, 'the second writer waits for the first');
    assert.equal(pollDone, false, 'the poll waits for the writer in flight');
    const waiting = await lockWaiters();
    assert.ok(waiting >= 2, `writer and reader wait on the events writer lock (${waiting})`);
    await client1.query('COMMIT');
    // The second writer queued for the lock before the poll did, so it goes first.
    const secondId = await second;
    assert.ok(secondId > first, 'ids follow commit order');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(pollDone, false, 'the poll waits for the second writer too');
    await client2.query('COMMIT');
    const page = await polled;
    assert.deepEqual(
      page.data.map((e) => e.id),
      [first, secondId],
      'the poll sees both, in id order',
    );
    const next = await poll(page.meta.next_after_id, 100);
    assert.deepEqual(next.data, []);
  } finally {
    await client1.end();
    await client2.end();
  }
});

test('without the lock the hazard is real: the control case loses an event (shows the test can fail)', async () => {
  // Two writers on a table with a shared sequence and no lock: the slow one's lower id commits
  // after the fast one's higher id was read, and a cursor passes it.
  const c1 = new pg.Client({ connectionString: t.db.url });
  const c2 = new pg.Client({ connectionString: t.db.url });
  await c1.connect();
  await c2.connect();
  try {
    // A plain table with a shared sequence, no lock: the textbook way to lose rows to a cursor.
    await c1.query(
      `CREATE TABLE IF NOT EXISTS poll_control (id bigint PRIMARY KEY, v text); CREATE SEQUENCE IF NOT EXISTS poll_control_seq`,
    );
    await c1.query('BEGIN');
    await c1.query(`INSERT INTO poll_control VALUES (nextval('poll_control_seq'), 'slow')`);
    await c2.query(`INSERT INTO poll_control VALUES (nextval('poll_control_seq'), 'fast')`);
    const { rows: firstRead } = await c2.query<{ id: string }>('SELECT id FROM poll_control ORDER BY id');
    const cursor = Number(firstRead.at(-1)!.id);
    await c1.query('COMMIT');
    const { rows: afterCursor } = await c2.query<{ id: string }>('SELECT id FROM poll_control WHERE id > $1', [cursor]);
    const { rows: all } = await c2.query<{ id: string }>('SELECT id FROM poll_control');
    assert.equal(afterCursor.length, 0, "the slow writer's row has a lower id than the cursor");
    assert.equal(all.length, 2, 'yet it exists: a poller by id missed it');
    await c2.query('DROP TABLE poll_control; DROP SEQUENCE poll_control_seq');
  } finally {
    await c1.end();
    await c2.end();
  }
});

test('after_id with filters, per_page bounds, and the meta of polling mode', async () => {
  const all = await expectedIds();
  const page = await poll(0, 5, '&event_type=COMPANY_PHONE_CHANGED');
  assert.equal(page.data.length, 5);
  assert.ok(page.meta.has_more);
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/events?after_id=${all.at(-1)}&per_page=20`, headers: auth });
  const body = res.json();
  assert.deepEqual(body.data, []);
  assert.equal(body.meta.has_more, false);
  assert.equal(body.meta.next_after_id, all.at(-1));
  const tooMany = await t.app.inject({ method: 'GET', url: '/api/v1/watchlist/events?after_id=0&per_page=101', headers: auth });
  assert.equal(tooMany.statusCode, 422);
  assert.ok(tooMany.json().errors.per_page);
  const negative = await t.app.inject({ method: 'GET', url: '/api/v1/watchlist/events?after_id=-1', headers: auth });
  assert.equal(negative.statusCode, 422);
  assert.ok(negative.json().errors.after_id);
  // Decimal digits only (ajv alone took 0x10 as 16 and %201440 as 1440).
  for (const q of ['after_id=0x10', 'after_id=1.4e3', 'after_id=%2010', 'per_page=0b11&after_id=0']) {
    const odd = await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/events?${q}`, headers: auth });
    assert.equal(odd.statusCode, 422, q);
    assert.deepEqual(Object.keys(odd.json().errors), [q.startsWith('per_page') ? 'per_page' : 'after_id'], q);
  }
});

test('page mode: the pages, first to last (the older half read from the other end), are the feed newest first', async () => {
  const { rows } = await sql<{ id: number }>`
    SELECT event_id::float8 AS id FROM watchlist_feed WHERE account_id = ${accountId} ORDER BY event_date DESC, event_id DESC`.execute(
    t.db.db,
  );
  const expected = rows.map((r) => r.id);
  const seen: number[] = [];
  let lastPage = 1;
  for (let page = 1; page <= lastPage; page++) {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/events?per_page=73&page=${page}`, headers: auth });
    const body = res.json();
    assert.equal(body.meta.total, expected.length);
    lastPage = body.meta.last_page;
    seen.push(...body.data.map((e: { id: number }) => e.id));
  }
  assert.equal(lastPage, Math.ceil(expected.length / 73));
  assert.deepEqual(seen, expected);
  const filtered = await t.app.inject({
    method: 'GET',
    url: '/api/v1/watchlist/events?per_page=100&event_type=COMPANY_PHONE_CHANGED&page=12',
    headers: auth,
  });
  const { rows: phones } = await sql<{ id: number }>`
    SELECT event_id::float8 AS id FROM watchlist_feed WHERE account_id = ${accountId} AND event_type = 'COMPANY_PHONE_CHANGED' ORDER BY event_date DESC, event_id DESC`.execute(
    t.db.db,
  );
  assert.ok(phones.length > 1100, `${phones.length}`);
  assert.deepEqual(
    filtered.json().data.map((e: { id: number }) => e.id),
    phones.slice(1100, 1200).map((r) => r.id),
  );
});

test("the feed's per-day counters match its rows", async () => {
  assert.deepEqual(await feedCountMismatches(t.db.db), []);
});
