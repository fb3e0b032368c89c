import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { AttemptResult, Sender } from '../src/modules/webhooks/delivery.ts';
import { runDispatcher } from '../src/modules/webhooks/dispatcher.ts';
import { createTestDatabase } from './helpers/db.ts';
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
