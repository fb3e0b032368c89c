import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { makeWorkerUtils } from 'graphile-worker';
import { sql } from 'kysely';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';
import { waitFor } from './helpers/wait.ts';
import type { CompanySpec } from './helpers/registry.ts';
import { accountIdOf, runDay } from './watchlist-support.ts';
import { deliveryCount, startReceiver, startWebhookWorker, watchNumbers } from './webhooks-support.ts';

/**
 * Worker processes: two at once never send a message twice in the normal path; one killed with
 * SIGKILL mid-delivery loses nothing (its messages go again, with the same webhook-id).
 */

const t = await createTestApp({
  env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', RATE_LIMIT_PER_MINUTE: '100000' },
});
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);

let gateOpen = true;
let releaseGate: () => void = () => {};
let gate = Promise.resolve();
const rx = await startReceiver(() => 200);
// The receiver answers after a short pause, or (gate closed) not until the gate opens.
const slowAnswer = async () => {
  if (!gateOpen) await gate;
  await new Promise((r) => setTimeout(r, 5));
};

function startChild(): { child: ChildProcess; exited: Promise<unknown[]> } {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./webhooks-worker.ts', import.meta.url))], {
    env: { ...process.env, WORKER_DATABASE_URL: t.db.url, WORKER_ATTEMPT_TIMEOUT_MS: '2000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, exited: once(child, 'exit') };
}

const N = 60;
const day1: CompanySpec[] = Array.from({ length: N }, (_, i) => ({ n: 500 + i }));
const changed = (d: string) => day1.map((c) => ({ ...c, name: `ZMIANA ${d} ${c.n} SPÓŁKA AKCYJNA` }));

async function createEndpoint(path: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(acct.master),
    payload: { url: rx.url + path },
  });
  assert.equal(res.statusCode, 201, res.body);
  rx.addSecret(path, res.json().data.secret);
  return res.json().data.id as string;
}
async function deliveryIds(endpointPublicId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpointPublicId.slice(3)}`.execute(
    t.db.db,
  );
  return rows.map((r) => `msg_${r.id}`).sort();
}

test('two worker processes: every message sent once', async () => {
  await runDay(t.db.db, '2030-02-01', day1);
  await watchNumbers(
    t.db.db,
    accountId,
    day1.map((c) => c.n),
    new Date('2030-02-01T00:00:00Z'),
  );
  const ep = await createEndpoint('/two');
  const w1 = startChild();
  const w2 = startChild();
  const s = await runDay(t.db.db, '2030-02-02', changed('B'));
  assert.equal(s.events, N);
  await waitFor('every message delivered', async () => (await deliveryCount(t.db.db, 'delivered')) === N, 60_000);
  const got = rx.on('/two');
  assert.equal(got.length, N, 'no message sent twice');
  assert.deepEqual(got.map((m) => m.id).sort(), await deliveryIds(ep));
  assert.ok(got.every((m) => m.verifiedBy.length === 1));
  w1.child.kill('SIGTERM');
  w2.child.kill('SIGTERM');
  await Promise.all([w1.exited, w2.exited]);
  await t.app.inject({ method: 'PATCH', url: `/api/v1/webhooks/${ep}`, headers: bearer(acct.master), payload: { status: 'disabled' } });
});

test('a worker process SIGKILLed mid-delivery: every message is still delivered, repeats keep their webhook-id', async () => {
  const ep = await createEndpoint('/kill');
  gateOpen = false;
  gate = new Promise<void>((r) => {
    releaseGate = r;
  });
  defer(() => releaseGate());
  // Hold every request while the gate is closed: the worker is killed with attempts in flight.
  let held = 0;
  rx.setAnswer(async () => {
    held++;
    await slowAnswer();
    return 200;
  });
  const w = startChild();
  await runDay(t.db.db, '2030-02-03', changed('C'));
  // Requests held by the receiver: attempts in flight, none of them recorded.
  await waitFor('attempts in flight', () => held > 0);
  w.child.kill('SIGKILL');
  const [, signal] = await w.exited;
  assert.equal(signal, 'SIGKILL');
  const before = await deliveryCount(t.db.db, 'delivered');

  // Recovery (src/jobs/recovery.ts does it about a minute after a death; here at once), and a new worker.
  const { rows: locked } = await sql<{
    locked_by: string;
  }>`SELECT DISTINCT locked_by FROM graphile_worker.jobs WHERE locked_by IS NOT NULL`.execute(t.db.db);
  const utils = await makeWorkerUtils({ pgPool: t.db.pool });
  await utils.forceUnlockWorkers(locked.map((r) => r.locked_by));
  await utils.release();
  gateOpen = true;
  releaseGate();
  await startWebhookWorker(t);
  await waitFor('every message delivered', async () => (await deliveryCount(t.db.db, 'delivered')) === 2 * N, 60_000);
  assert.ok(before < 2 * N);
  const got = rx.on('/kill');
  const ids = await deliveryIds(ep);
  assert.deepEqual([...new Set(got.map((m) => m.id))].sort(), ids, 'every message arrived; repeats carry the same webhook-id');
  assert.ok(got.every((m) => m.verifiedBy.length === 1));
  const bodies = new Map<string, string>();
  for (const m of got) {
    if (bodies.has(m.id)) assert.equal(bodies.get(m.id), m.body, 'a repeat is the same message');
    bodies.set(m.id, m.body);
  }
});
