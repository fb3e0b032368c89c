import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import type { AttemptResult, Sender } from '../src/modules/webhooks/delivery.ts';
import { runDispatcher } from '../src/modules/webhooks/dispatcher.ts';
import { notifyEndpointChanged } from '../src/modules/webhooks/endpoint-changes.ts';
import { createTestDatabase } from './helpers/db.ts';
import { waitFor } from './helpers/wait.ts';
import { dispatcherOptions, insertEndpointWithMessages } from './webhooks-support.ts';

/**
 * An endpoint disabled by the dispatcher run that holds it (DECISIONS 8: "an endpoint whose every
 * attempt failed for 5 days is disabled"): the run sends it nothing more, and the messages it had
 * read ahead stay pending, untouched, for the day the endpoint is enabled again.
 */

const db = await createTestDatabase();

const endpointStatus = async (id: string) =>
  (await sql<{ status: string }>`SELECT status FROM webhook_endpoints WHERE id = ${id}`.execute(db.db)).rows[0]!.status;

test('disabled after 5 days of failures: no attempt starts after the disabling, the messages read ahead stay pending', async () => {
  const ep = await insertEndpointWithMessages(db.db, { ref: 'D1', messages: 8, failingSince: new Date(Date.now() - 6 * 86_400_000) });
  const startedWhileDisabled: string[] = [];
  let attempts = 0;
  const sender: Sender = {
    async send(_url, headers): Promise<AttemptResult> {
      const id = headers['webhook-id']!;
      if ((await endpointStatus(ep.id)) === 'disabled') startedWhileDisabled.push(id);
      // The first attempt fails at once; the second is still under way when its outcome disables
      // the endpoint (up to 200 ms later), and ends after that.
      if (++attempts === 2) {
        const until = Date.now() + 5_000;
        while ((await endpointStatus(ep.id)) !== 'disabled' && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      }
      return { ok: false, status: 500, body: '', error: 'HTTP 500', retryAfter: null, seconds: 0.001 };
    },
    close: async () => {},
  };
  await runDispatcher(dispatcherOptions(db.db, sender, { retrySchedule: [3600], concurrency: 1, perEndpoint: 1, leaseMs: 20_000 }));
  assert.equal(await endpointStatus(ep.id), 'disabled');
  assert.deepEqual(startedWhileDisabled, [], 'attempts started after the endpoint was disabled');
  assert.equal(attempts, 2, 'the failure that disabled it and the attempt under way then');
  const { rows } = await sql<{ status: string; attempts: number }>`
    SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = ${ep.id} ORDER BY id`.execute(db.db);
  assert.deepEqual(
    rows.map((r) => `${r.status}/${r.attempts}`),
    ['pending/1', 'pending/1', ...Array.from({ length: 6 }, () => 'pending/0')],
  );
  const {
    rows: [mail],
  } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_outbox WHERE kind = 'webhook_disabled'`.execute(db.db);
  assert.equal(mail!.n, 1, 'the account is mailed once');
});

test('a disabling notified while the run waits on the database: no attempt starts before the run has renewed its leases', async () => {
  const ep = await insertEndpointWithMessages(db.db, { ref: 'D2', messages: 6 });
  const startedWhileDisabled: string[] = [];
  let releaseFirst = () => {};
  const firstEnds = new Promise<void>((r) => (releaseFirst = r));
  let attempts = 0;
  const sender: Sender = {
    async send(_url, headers): Promise<AttemptResult> {
      const id = headers['webhook-id']!;
      if ((await endpointStatus(ep.id)) === 'disabled') startedWhileDisabled.push(id);
      if (++attempts === 1) await firstEnds;
      return { ok: true, status: 204, body: '', error: null, retryAfter: null, seconds: 0.001 };
    },
    close: async () => {},
  };
  const run = runDispatcher(dispatcherOptions(db.db, sender, { retrySchedule: [1], concurrency: 1, perEndpoint: 1, leaseMs: 20_000 }));
  await waitFor('the first attempt under way', () => attempts === 1);
  // The run's next look at the messages waits behind a lock; meanwhile its attempt ends, the
  // endpoint is disabled and the run notified (as PATCH does), and then the lock goes.
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE');
  const waiting = async () =>
    (
      await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'webhook_deliveries'::regclass`.execute(db.db)
    ).rows[0]!.n > 0;
  await waitFor('the run waiting on the lock', waiting, 5_000);
  releaseFirst();
  await db.db.transaction().execute(async (trx) => {
    await sql`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ${ep.id}`.execute(trx);
    await notifyEndpointChanged(trx, ep.id);
  });
  await new Promise((r) => setTimeout(r, 300)); // the notice reaches the run's listening connection
  await holder.query('COMMIT');
  await holder.end();
  await run;
  assert.deepEqual(startedWhileDisabled, [], 'attempts started after the disabling was notified');
  assert.equal(attempts, 1);
});
