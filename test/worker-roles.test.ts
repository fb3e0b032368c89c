import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { compose } from '../src/composition.ts';
import { JOB_MODULES } from '../src/config.ts';
import { SCHED_IDLE, threadPoliciesOf } from '../src/lib/idle-priority.ts';
import { enqueueDailyRuns } from '../src/registry/jobs.ts';
import { bearer, createAccount, createManualClock, createTestApp, testConfig } from './helpers/app.ts';
import { companySnapshot, writeNdjson, type CompanySpec } from './helpers/registry.ts';
import { serveProcess } from './helpers/serve.ts';
import { waitFor } from './helpers/wait.ts';
import { accountIdOf, runDay } from './watchlist-support.ts';
import { startReceiver, watchNumbers } from './webhooks-support.ts';

/** The task names and crontab lines a worker process composed with this environment would run. */
async function workerJobsOf(env: Record<string, string>) {
  const parts = compose({
    config: testConfig({ REGISTRY_SOURCES: 'synthetic', ...env }),
    db: undefined as never,
    logger: pino({ level: 'silent' }),
    clock: createManualClock('2026-01-01T00:00:00Z'),
  });
  try {
    return {
      tasks: parts.jobs.flatMap((m) => Object.keys(m.tasks)).sort(),
      crontab: parts.jobs.flatMap((m) => m.crontab ?? []).map((line) => line.split(' ')[5]!),
      modulesWithJobs: parts.list.filter((m) => m.jobs).map((m) => m.name),
    };
  } finally {
    await parts.close();
  }
}

test('WORKER_JOBS: the composition hands the worker only the selected modules tasks and crontab', async () => {
  const all = await workerJobsOf({});
  assert.deepEqual([...all.modulesWithJobs].sort(), [...JOB_MODULES].sort(), 'JOB_MODULES lists exactly the modules with jobs');
  assert.ok(all.tasks.includes('registry.daily') && all.tasks.includes('webhooks.deliver'), all.tasks.join());

  const webhooks = await workerJobsOf({ ROLE: 'worker', WORKER_JOBS: 'webhooks' });
  assert.deepEqual(webhooks.tasks, ['webhooks.deliver', 'webhooks.fanout', 'webhooks:sweep']);
  assert.deepEqual(webhooks.crontab, ['webhooks:sweep']);

  const others = await workerJobsOf({ ROLE: 'worker', WORKER_JOBS: '-webhooks' });
  assert.deepEqual(
    others.tasks,
    all.tasks.filter((t) => !webhooks.tasks.includes(t)),
  );
  assert.deepEqual(others.crontab.sort(), ['registry:daily-tick', 'wallet:expire-payments']);
});

/**
 * The deployment of docs/deployment.md's "A delivery worker at idle priority", as processes on one
 * database: `ROLE=worker WORKER_JOBS=-webhooks` runs the daily run, `ROLE=worker
 * WORKER_JOBS=webhooks WORKER_IDLE_PRIORITY=true` delivers the webhooks to a real receiver, and
 * it and its PostgreSQL backends run under SCHED_IDLE.
 */

const DAY1 = '2030-03-01';
const DAY2 = '2030-03-02';
const N = 20;

/** The local TCP ports of process `pid`'s connections to `remotePort` (its sockets, matched in /proc/net/tcp*). */
function tcpPortsOf(pid: number, remotePort: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const [local, remote] = [f[1]!, f[2]!].map((a) => parseInt(a.split(':')[1]!, 16));
      if (remote === remotePort) ports.push(local!);
    }
  }
  return ports;
}

test('a daily-run worker and an idle-priority delivery worker on one database', { timeout: 60_000 }, async () => {
  const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  const db = t.db.db;
  // Both processes start at once (an idle-priority start is slow on a busy machine); at debug
  // level each logs every task it completes, which tells which process ran what.
  const env = {
    ...process.env,
    DATABASE_URL: t.db.url,
    REGISTRY_SOURCES: '',
    DEMO_COMPANIES: '0',
    LOG_LEVEL: 'debug',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    REDIS_URL: undefined,
    PUBLIC_BASE_URL: undefined,
  };
  const delivery = serveProcess({ ...env, ROLE: 'worker', WORKER_JOBS: 'webhooks', WORKER_IDLE_PRIORITY: 'true' });
  const daily = serveProcess({ ...env, ROLE: 'worker', WORKER_JOBS: '-webhooks' });

  const acct = await createAccount(t);
  const companies: CompanySpec[] = Array.from({ length: N }, (_, i) => ({ n: 700 + i }));
  await runDay(db, DAY1, companies);
  await watchNumbers(
    db,
    await accountIdOf(t, acct.userRef),
    companies.map((c) => c.n),
    new Date(`${DAY1}T00:00:00Z`),
  );
  const rx = await startReceiver();
  const hook = await t.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: bearer(acct.master),
    payload: { url: `${rx.url}/roles` },
  });
  assert.equal(hook.statusCode, 201, hook.body);
  rx.addSecret('/roles', hook.json().data.secret);
  const workers = async () =>
    (await sql<{ n: number }>`SELECT count(DISTINCT process_key)::int AS n FROM job_worker_liveness WHERE dead_since IS NULL`.execute(db))
      .rows[0]!.n;
  await waitFor('both worker processes', async () => (await workers()) === 2, 30_000);
  // Logged just after the worker registers: waited for, as the output may not hold it yet.
  await waitFor('the SCHED_IDLE line', () => /worker process under SCHED_IDLE/.test(delivery.output()), 10_000);
  // Without PUBLIC_BASE_URL a worker that mails recovery links says where they would point.
  await waitFor('the PUBLIC_BASE_URL warning', () => /PUBLIC_BASE_URL is not set/.test(daily.output()), 10_000);
  assert.doesNotMatch(delivery.output(), /PUBLIC_BASE_URL is not set/);

  const day2 = writeNdjson(
    join(mkdtempSync(join(tmpdir(), 'regwatch-roles-')), 'day2.ndjson'),
    companies.map((c) => companySnapshot({ ...c, name: `ROLE ${c.n} SPÓŁKA AKCYJNA` })),
  );
  await enqueueDailyRuns(db, [`file:${day2}`], DAY2);
  await waitFor(
    'the daily run',
    async () =>
      (await db.selectFrom('daily_runs').select('status').where('run_date', '=', DAY2).executeTakeFirst())?.status === 'completed',
    30_000,
  );
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE event_date = ${DAY2}::date`.execute(db);
  const events = rows[0]!.n;
  assert.ok(events >= N, `${events} events`);
  await waitFor('every message delivered', () => rx.on('/roles').length >= events, 30_000);
  const got = rx.on('/roles');
  assert.equal(new Set(got.map((m) => m.id)).size, events, 'each event once');
  assert.ok(got.every((m) => m.verifiedBy.length === 1 && m.json.data.event_date === DAY2));
  // graphile-worker's "Completed task 12 (registry.daily, 80.00ms) with success".
  const tasksRun = (p: { output: () => string }) => new Set([...p.output().matchAll(/Completed task \d+ \(([^,]+),/g)].map((m) => m[1]!));
  assert.ok(tasksRun(daily).has('registry.daily'), 'the daily run ran in the first worker');
  assert.deepEqual(
    [...tasksRun(delivery)].filter((x) => !x.startsWith('webhooks')),
    [],
    'the delivery worker ran only webhook jobs',
  );
  assert.ok(tasksRun(delivery).has('webhooks.fanout'), [...tasksRun(delivery)].join()); // a deliver job may still be running
  assert.deepEqual(
    [...tasksRun(daily)].filter((x) => x.startsWith('webhooks')),
    [],
    'the first worker ran no webhook job',
  );

  // The delivery worker's threads and its backends are SCHED_IDLE; the daily-run worker's are not.
  const pgPort = Number(new URL(t.db.url).port || 5432);
  const backendsOf = async (pid: number) => {
    const ports = tcpPortsOf(pid, pgPort);
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity WHERE client_port = ANY(${ports}::int[]) AND datname = current_database()`.execute(db);
    return rows.map((r) => r.pid);
  };
  const policies = (pid: number) => new Set(threadPoliciesOf(pid)!.values());
  assert.deepEqual(policies(delivery.child.pid!), new Set([SCHED_IDLE]), 'every thread of the delivery worker');
  assert.deepEqual(policies(daily.child.pid!), new Set([0]));
  const deliveryBackends = await backendsOf(delivery.child.pid!);
  assert.ok(deliveryBackends.length >= 2, `the delivery worker's backends: ${deliveryBackends.join()}`);
  for (const pid of deliveryBackends) assert.deepEqual(policies(pid), new Set([SCHED_IDLE]), `backend ${pid}`);
  const dailyBackends = await backendsOf(daily.child.pid!);
  assert.ok(dailyBackends.length >= 1);
  for (const pid of dailyBackends) assert.deepEqual(policies(pid), new Set([0]), `backend ${pid}`);
  assert.doesNotMatch(delivery.output(), /could not put/);
});
