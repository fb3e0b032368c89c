import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { makeWorkerUtils } from 'graphile-worker';
import { sql } from 'kysely';
import pino from 'pino';
import { settleWatchRequest } from '../src/modules/watchlist/jobs.ts';
import { defer } from './helpers/cleanup.ts';
import { waitFor } from './helpers/wait.ts';
import { bearer, createAccount, createTestApp, drainJobs } from './helpers/app.ts';
import { jsonFixtureReply, problemReply, startFixtureServer, type Handler } from './helpers/fixture-server.ts';
import { krsFor } from './helpers/registry.ts';
import { accountIdOf, ledger, runDay, feedCountMismatches } from './watchlist-support.ts';

/**
 * A worker process killed with SIGKILL in the middle of an add (waiting on a registry): after a
 * restart the request completes, and nothing is charged, refunded or mailed twice.
 */

let gateOpen = false;
let releaseGate!: () => void;
const gate = new Promise<void>((resolve) => {
  releaseGate = resolve;
});
const krsApi: Handler = async (req) => {
  const m = /^\/api\/krs\/OdpisAktualny\/(\d{10})$/.exec(req.path);
  const register = req.query.get('rejestr');
  if (m?.[1] === '0000028860' && register === 'P') return jsonFixtureReply('krs/odpis-aktualny-P-0000028860-sa-orlen.json');
  if (m?.[1] === '0000030897') {
    // The registry hangs until the test opens the gate: the worker is killed while it waits.
    if (!gateOpen) await gate;
    if (register === 'S') return jsonFixtureReply('krs/odpis-aktualny-S-0000030897-fundacja-wosp.json');
  }
  return problemReply('krs/odpis-aktualny-not-found-404.json');
};
const krs = await startFixtureServer(krsApi);
defer(() => krs.close());
defer(() => releaseGate());
const t = await createTestApp({ env: { REGISTRY_SOURCES: 'krs', KRS_API_URL: krs.url } });
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);

async function itemStatuses(requestId: string): Promise<string[]> {
  const { rows } = await sql<{
    status: string;
  }>`SELECT status FROM watch_request_items WHERE request_id = ${requestId} ORDER BY position`.execute(t.db.db);
  return rows.map((r) => r.status);
}

test('SIGKILL mid-add, then a restart: the request completes; one charge, one refund, one mail', async () => {
  await runDay(t.db.db, '2026-11-20', [{ n: 77 }]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: bearer(acct.master),
    payload: { identifier_type: 'KRS', identifier_value: [krsFor(77), '28860', '30897', '999999'] },
  });
  assert.equal(res.statusCode, 202, res.body);
  const ref = res.json().request_id as string;
  const {
    rows: [request],
  } = await sql<{ id: string }>`SELECT id FROM watch_requests WHERE request_ref = ${ref}`.execute(t.db.db);

  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./watchlist-kill-worker.ts', import.meta.url))], {
    env: { ...process.env, WORKER_DATABASE_URL: t.db.url, WORKER_KRS_API_URL: krs.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  defer(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  try {
    await waitFor(
      'the worker to import ORLEN and ask about WOŚP',
      async () =>
        krs.requests.some((r) => r.path.endsWith('/0000030897')) &&
        (await itemStatuses(request!.id)).slice(0, 2).join() === 'watched,watched',
    );
  } finally {
    child.kill('SIGKILL');
  }
  const [, signal] = await exited;
  assert.equal(signal, 'SIGKILL');

  assert.deepEqual(
    await itemStatuses(request!.id),
    ['watched', 'watched', 'queued', 'queued'],
    'what was settled before the kill stays settled',
  );
  assert.deepEqual(
    (await ledger(t, accountId)).map((r) => [r.type, r.amount]),
    [['usage', -4]],
  );
  const mailsBefore = await sql<{ n: number }>`SELECT count(*)::int AS n FROM mail_outbox WHERE kind = 'watchlist'`.execute(t.db.db);
  assert.equal(mailsBefore.rows[0]!.n, 0);

  // The restart: the dead worker's lock is released (the surviving or restarted worker processes
  // do it about a minute after the death, src/jobs/recovery.ts; here at once).
  const { rows: locked } = await sql<{
    locked_by: string | null;
  }>`SELECT locked_by FROM graphile_worker.jobs WHERE task_identifier = 'watchlist.add'`.execute(t.db.db);
  assert.ok(locked[0]?.locked_by, 'the killed worker left the job locked');
  const utils = await makeWorkerUtils({ pgPool: t.db.pool });
  await utils.forceUnlockWorkers([locked[0]!.locked_by!]);
  await utils.release();
  gateOpen = true;
  releaseGate();
  await drainJobs(t);

  assert.deepEqual(await itemStatuses(request!.id), ['watched', 'watched', 'watched', 'not_found']);
  const {
    rows: [done],
  } = await sql<{ status: string; charged_credits: number; refunded_credits: number }>`
    SELECT status, charged_credits, refunded_credits FROM watch_requests WHERE id = ${request!.id}`.execute(t.db.db);
  assert.deepEqual(done, { status: 'completed', charged_credits: 4, refunded_credits: 1 });
  assert.deepEqual(
    (await ledger(t, accountId)).map((r) => [r.type, r.amount, r.reference]),
    [
      ['usage', -4, `companies.add:${ref}`],
      ['refund', 1, `companies.add.refund:${ref}`],
    ],
  );
  const { rows: mails } = await sql<{ text_body: string }>`SELECT text_body FROM mail_outbox WHERE kind = 'watchlist'`.execute(t.db.db);
  assert.equal(mails.length, 1);
  assert.match(mails[0]!.text_body, /Now watched \(3\):[\s\S]*FUNDACJA WIELKA ORKIESTRA/i);
  assert.match(mails[0]!.text_body, /Could not be found \(1\):\n {2}KRS 0000999999/);

  // The job delivered once more changes nothing.
  assert.equal(
    await settleWatchRequest(
      { config: t.config, db: t.db.db, logger: pino({ level: 'silent' }), clock: t.clock, importCompany: async () => ({ found: false }) },
      request!.id,
    ),
    'already_completed',
  );
  assert.equal((await ledger(t, accountId)).length, 2);
  const watched = (await t.app.inject({ method: 'GET', url: '/api/v1/companies/watched', headers: bearer(acct.master) })).json();
  assert.equal(watched.meta.total, 3);
});

test("the feed's per-day counters match its rows", async () => {
  assert.deepEqual(await feedCountMismatches(t.db.db), []);
});
