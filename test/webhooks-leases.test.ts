import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import type { AttemptResult, Sender } from '../src/modules/webhooks/delivery.ts';
import { acquireEndpoints, readDueDeliveries, recordAttempts, renewEndpoints } from '../src/modules/webhooks/dispatch-repo.ts';
import { runDispatcher } from '../src/modules/webhooks/dispatcher.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * The delivery worker's endpoint leases (src/modules/webhooks/dispatch-repo.ts): an endpoint is
 * held by one dispatcher run at a time, until its lease lapses; two runs at once send every
 * message once and never exceed the per-endpoint concurrency between them.
 */

const db = await createTestDatabase();
const T0 = new Date('2030-03-01T12:00:00Z');
let accounts = 0;
const at = (s: number) => new Date(T0.getTime() + s * 1000);

async function endpointWith(messages: number, opts: { due?: Date; status?: string } = {}): Promise<{ id: string; deliveries: string[] }> {
  const ref = `L${++accounts}`;
  const {
    rows: [acct],
  } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status) VALUES (${ref}, ${`${ref}@lease.test`}, 'lease', 'initialized') RETURNING id`.execute(
    db.db,
  );
  const {
    rows: [ep],
  } = await sql<{ id: string }>`
    INSERT INTO webhook_endpoints (account_id, url, status) VALUES (${acct!.id}, 'http://127.0.0.1:9/hook', ${opts.status ?? 'enabled'}) RETURNING id`.execute(
    db.db,
  );
  await sql`INSERT INTO webhook_secrets (endpoint_id, secret) VALUES (${ep!.id}, 'whsec_oFScPtb7SuAkMWW9nWk27k9mIDn9qsUrQzxkasNv5X4=')`.execute(
    db.db,
  );
  const { rows } = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at)
    SELECT ${ep!.id}, ${acct!.id}, 'COMPANY_NAME_CHANGED', json_build_object('n', g), ${opts.due ?? T0}::timestamptz FROM generate_series(1, ${messages}) g
    RETURNING id`.execute(db.db);
  return { id: ep!.id, deliveries: rows.map((r) => r.id) };
}

test('an endpoint is held by one run until its lease lapses; renewal drops a disabled one', async () => {
  const a = await endpointWith(3);
  const idle = await endpointWith(2, { due: at(3600) });
  const off = await endpointWith(2, { status: 'disabled' });

  const first = await acquireEndpoints(db.db, { owner: 'run-1', now: at(1), leaseUntil: at(31), limit: 10 });
  assert.deepEqual(
    first.map((e) => e.id),
    [a.id],
    'only an enabled endpoint with a due message',
  );
  assert.ok(!first.some((e) => e.id === idle.id || e.id === off.id));
  assert.deepEqual(
    await acquireEndpoints(db.db, { owner: 'run-2', now: at(2), leaseUntil: at(32), limit: 10 }),
    [],
    'not while run-1 holds it',
  );

  // Only the holder reads its messages, and not those it already has in memory.
  assert.deepEqual(await readDueDeliveries(db.db, { owner: 'run-2', now: at(2), want: [{ endpointId: a.id, count: 10 }], held: [] }), []);
  const read = await readDueDeliveries(db.db, {
    owner: 'run-1',
    now: at(2),
    want: [{ endpointId: a.id, count: 10 }],
    held: [a.deliveries[0]!],
  });
  assert.deepEqual(
    read.map((d) => d.id),
    a.deliveries.slice(1),
  );
  assert.equal(read[0]!.secrets.length, 1);

  // The lease lapses: another run takes the endpoint, and the first one's renewal finds it gone.
  const second = await acquireEndpoints(db.db, { owner: 'run-2', now: at(40), leaseUntil: at(70), limit: 10 });
  assert.deepEqual(
    second.map((e) => e.id),
    [a.id],
  );
  assert.deepEqual(await renewEndpoints(db.db, { owner: 'run-1', ids: [a.id], leaseUntil: at(71), now: at(41) }), []);
  assert.deepEqual(
    (await renewEndpoints(db.db, { owner: 'run-2', ids: [a.id], leaseUntil: at(71), now: at(41) })).map((e) => e.id),
    [a.id],
  );
  await sql`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ${a.id}`.execute(db.db);
  assert.deepEqual(
    await renewEndpoints(db.db, { owner: 'run-2', ids: [a.id], leaseUntil: at(72), now: at(42) }),
    [],
    'a disabled endpoint is dropped at renewal',
  );

  // Recording gives an endpoint back only for its holder.
  await sql`UPDATE webhook_endpoints SET status = 'enabled' WHERE id = ${a.id}`.execute(db.db);
  await recordAttempts(db.db, [], at(50), { owner: 'run-1', ids: [a.id] });
  assert.equal(
    (await sql<{ o: string | null }>`SELECT lease_owner AS o FROM webhook_endpoints WHERE id = ${a.id}`.execute(db.db)).rows[0]!.o,
    'run-2',
  );
  await recordAttempts(
    db.db,
    [
      {
        id: a.deliveries[0]!,
        endpointId: a.id,
        ok: true,
        gone: false,
        attemptsBefore: 0,
        dueBefore: T0,
        status: 204,
        error: null,
        body: '',
        nextAttemptAt: null,
        at: at(50),
        endedAt: at(50),
      },
    ],
    at(50),
    { owner: 'run-2', ids: [a.id] },
  );
  const {
    rows: [ep],
  } = await sql<{
    o: string | null;
    u: Date | null;
  }>`SELECT lease_owner AS o, lease_until AS u FROM webhook_endpoints WHERE id = ${a.id}`.execute(db.db);
  assert.deepEqual([ep!.o, ep!.u], [null, null]);
  const {
    rows: [d],
  } = await sql<{
    status: string;
    attempts: number;
  }>`SELECT status, attempts FROM webhook_deliveries WHERE id = ${a.deliveries[0]!}`.execute(db.db);
  assert.deepEqual([d!.status, d!.attempts], ['delivered', 1]);
  await sql`UPDATE webhook_endpoints SET status = 'disabled'`.execute(db.db);
});

test('two dispatcher runs at once: every message sent once, at most perEndpoint in flight per endpoint between them', async () => {
  const endpoints = await Promise.all(Array.from({ length: 6 }, () => endpointWith(40, { due: new Date(Date.now() - 1000) })));
  const sent = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let maxPerEndpoint = 0;
  const sender: Sender = {
    async send(url, headers): Promise<AttemptResult> {
      const id = headers['webhook-id']!;
      sent.set(id, (sent.get(id) ?? 0) + 1);
      const {
        rows: [row],
      } = await sql<{ e: string }>`SELECT endpoint_id AS e FROM webhook_deliveries WHERE id = ${id.slice(4)}`.execute(db.db);
      inFlight.set(row!.e, (inFlight.get(row!.e) ?? 0) + 1);
      maxPerEndpoint = Math.max(maxPerEndpoint, inFlight.get(row!.e)!);
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 5));
      inFlight.set(row!.e, inFlight.get(row!.e)! - 1);
      return { ok: true, status: 204, body: '', error: null, retryAfter: null, seconds: 0.005 };
    },
    close: async () => {},
  };
  const options = {
    db: db.db,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    sender,
    retrySchedule: [1],
    concurrency: 16,
    perEndpoint: 3,
    leaseMs: 20_000,
  };
  // Each run holds at most four endpoints at a time, so they share the six.
  const runs = await Promise.all([runDispatcher({ ...options, maxEndpoints: 4 }), runDispatcher({ ...options, maxEndpoints: 4 })]);
  const all = endpoints.flatMap((e) => e.deliveries.map((id) => `msg_${id}`));
  assert.equal(runs[0].attempted + runs[1].attempted, all.length);
  assert.ok(runs[0].attempted > 0 && runs[1].attempted > 0, `both runs sent: ${runs[0].attempted} and ${runs[1].attempted}`);
  assert.deepEqual([...sent.keys()].sort(), all.sort());
  assert.ok(
    [...sent.values()].every((n) => n === 1),
    'no message sent twice',
  );
  assert.ok(maxPerEndpoint <= 3, `at most 3 in flight on an endpoint (saw ${maxPerEndpoint})`);
  const {
    rows: [left],
  } = await sql<{ n: number; held: number }>`
    SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = ANY(${endpoints.map((e) => e.id)}::bigint[]) AND status <> 'delivered') AS n,
      (SELECT count(*)::int FROM webhook_endpoints WHERE lease_owner IS NOT NULL) AS held`.execute(db.db);
  assert.deepEqual([left!.n, left!.held], [0, 0], 'every message recorded delivered; every endpoint given back');
});

test('a run sends the oldest message first across its endpoints, reading an endpoint again when its read-ahead is spent', async () => {
  await sql`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE status = 'pending'`.execute(db.db);
  // A's first five messages, then B's ten, then A's next five: ids in that order, so the oldest-first
  // order is A 1-5, B 1-10, A 6-10, where a round of the endpoints in turn would alternate them.
  const past = new Date('2020-01-01T00:00:00Z');
  const a = await endpointWith(5, { due: past });
  const b = await endpointWith(10, { due: past });
  const { rows: later } = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at)
    SELECT ep.id, ep.account_id, 'COMPANY_NAME_CHANGED', json_build_object('n', g), ${past}::timestamptz
    FROM webhook_endpoints ep, generate_series(6, 10) g WHERE ep.id = ${a.id} ORDER BY g
    RETURNING id`.execute(db.db);
  const order: string[] = [];
  const sender: Sender = {
    async send(_url, headers): Promise<AttemptResult> {
      order.push(headers['webhook-id']!.slice(4));
      // Longer than the run's refill interval (25 ms): A's next messages are read before the next attempt.
      await new Promise((r) => setTimeout(r, 40));
      return { ok: true, status: 204, body: '', error: null, retryAfter: null, seconds: 0.001 };
    },
    close: async () => {},
  };
  // One attempt at a time, four messages read ahead an endpoint, fewer than either has: A's first
  // read ends before its fifth message, which must still go before B's first.
  const run = await runDispatcher({
    db: db.db,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    sender,
    retrySchedule: [1],
    concurrency: 1,
    perEndpoint: 1,
    leaseMs: 20_000,
  });
  const expected = [...a.deliveries, ...b.deliveries, ...later.map((r) => r.id)];
  assert.equal(run.attempted, 20);
  assert.deepEqual(order, expected);
});
