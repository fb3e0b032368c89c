import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AttemptResult, Sender } from '../src/modules/webhooks/delivery.ts';
import { runDispatcher } from '../src/modules/webhooks/dispatcher.ts';
import { createTestDatabase } from './helpers/db.ts';
import { dispatcherOptions, insertEndpointWithMessages } from './webhooks-support.ts';

/**
 * The record of a batch of outcomes failing once (a deadlock with a replay or an unwatch, a
 * dropped connection): the dispatcher run records it again, so the messages answered 2xx are
 * delivered once, not sent again by the next run.
 */

const db = await createTestDatabase();

test('a batch of outcomes whose record fails once is recorded again: every message sent once', async () => {
  await insertEndpointWithMessages(db.db, { ref: 'R1', messages: 3 });
  // The first UPDATE of the messages fails (a sequence, which a rollback does not undo, counts them).
  await sql`CREATE SEQUENCE record_tries`.execute(db.db);
  await sql`
    CREATE FUNCTION fail_first_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('record_tries') = 1 THEN RAISE EXCEPTION 'injected failure' USING ERRCODE = '40P01'; END IF;
      RETURN NULL;
    END $$`.execute(db.db);
  await sql`CREATE TRIGGER fail_first_record BEFORE UPDATE ON webhook_deliveries FOR EACH STATEMENT EXECUTE FUNCTION fail_first_record()`.execute(
    db.db,
  );

  const sent = new Map<string, number>();
  const sender: Sender = {
    send(_url, headers): Promise<AttemptResult> {
      const id = headers['webhook-id']!;
      sent.set(id, (sent.get(id) ?? 0) + 1);
      return Promise.resolve({ ok: true, status: 204, body: '', error: null, retryAfter: null, seconds: 0.001 });
    },
    close: async () => {},
  };
  const options = dispatcherOptions(db.db, sender, { retrySchedule: [1], concurrency: 4, perEndpoint: 4, leaseMs: 2_000 });
  // As the worker would: a run that failed is followed by another (the job retried, the sweep).
  await runDispatcher(options).catch(() => {});
  await new Promise((r) => setTimeout(r, 2_100)); // a lease the failed run kept has lapsed
  await runDispatcher(options);

  assert.equal(sent.size, 3);
  assert.deepEqual(
    [...sent].filter(([, n]) => n > 1),
    [],
    'sent again after the record failed',
  );
  const { rows } = await sql<{ status: string; attempts: number }>`SELECT status, attempts FROM webhook_deliveries ORDER BY id`.execute(
    db.db,
  );
  assert.deepEqual(
    rows.map((r) => `${r.status}/${r.attempts}`),
    ['delivered/1', 'delivered/1', 'delivered/1'],
  );
});
