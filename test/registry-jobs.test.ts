import { after, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { parseCrontab } from 'graphile-worker';
import pino from 'pino';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot, writeNdjson } from './helpers/registry.ts';
import { loadConfig } from '../src/config.ts';
import { createManualClock } from '../src/lib/clock.ts';
import { createRegistryJobs, DAILY_CRONTAB, DAILY_TASK, DAILY_TICK_TASK, dayBefore } from '../src/registry/jobs.ts';
import { ensureDemoData } from '../src/registry/demo.ts';
import { getDayStats, getRangeStats } from '../src/modules/stats/service.ts';
import type { Runtime } from '../src/runtime.ts';
import type { JobHelpers } from 'graphile-worker';

const t = await createTestDatabase();
const logger = pino({ level: 'silent' });
const clock = createManualClock('2026-11-21T10:00:00Z');
const helpers = {} as JobHelpers;

function config(env: Record<string, string>) {
  return loadConfig({ DATABASE_URL: t.url, DEMO_COMPANIES: '400', ...env });
}

test('the crontab exists only when sources are configured, and parses', () => {
  assert.deepEqual(createRegistryJobs({ config: config({ REGISTRY_SOURCES: 'synthetic' }), db: t.db, logger, clock }).crontab, [
    DAILY_CRONTAB,
  ]);
  assert.deepEqual(createRegistryJobs({ config: config({ REGISTRY_SOURCES: '' }), db: t.db, logger, clock }).crontab, []);
  assert.equal(parseCrontab(DAILY_CRONTAB).length, 1);
  assert.equal(dayBefore(new Date('2026-11-21T03:00:00Z')), '2026-11-20');
});

test('the tick fans out one job per source, keyed by date and source, however often it runs', async () => {
  const jobs = createRegistryJobs({ config: config({ REGISTRY_SOURCES: 'synthetic' }), db: t.db, logger, clock });
  const payload = { _cron: { ts: '2026-11-21T03:00:00.000Z' } };
  await jobs.tasks[DAILY_TICK_TASK]!(payload, helpers);
  await jobs.tasks[DAILY_TICK_TASK]!(payload, helpers);
  const { rows } = await sql<{ key: string; queue_name: string; payload: unknown }>`
    SELECT j.key, q.queue_name, j.payload
    FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
    LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
    WHERE k.identifier = ${DAILY_TASK}`.execute(t.db);
  assert.deepEqual(rows, [
    {
      key: 'registry.daily:2026-11-20:synthetic',
      queue_name: 'registry-daily-synthetic',
      payload: { date: '2026-11-20', source: 'synthetic' },
    },
  ]);
});

test('the daily task runs the source for its date, and a second run adds nothing', async () => {
  const jobs = createRegistryJobs({ config: config({ REGISTRY_SOURCES: 'synthetic' }), db: t.db, logger, clock });
  await jobs.tasks[DAILY_TASK]!({ date: '2026-11-20', source: 'synthetic:9' }, helpers);
  const { rows } = await sql<{ status: string; new_count: number; source: string }>`
    SELECT status, new_count, source FROM daily_runs WHERE run_date = '2026-11-20' AND source_key = 'synthetic:9'`.execute(t.db);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.status, 'completed');
  assert.equal(rows[0]!.source, 'synthetic');
  await jobs.tasks[DAILY_TASK]!({ date: '2026-11-20', source: 'synthetic:9' }, helpers);
  const again = await sql<{ n: number }>`SELECT count(*)::int AS n FROM daily_runs WHERE run_date = '2026-11-20'`.execute(t.db);
  assert.equal(again.rows[0]!.n, 1);
});

test("the daily task stops at a batch when the worker's shutdown aborts it, and its next attempt finishes the run", async () => {
  const d = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-jobs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = writeNdjson(
    join(dir, 'load.ndjson'),
    Array.from({ length: 12_000 }, (_, i) => companySnapshot({ n: 100_000 + i })),
  );
  const source = `file:${file}`;
  const jobs = createRegistryJobs({ config: config({ REGISTRY_SOURCES: '' }), db: d.db, logger, clock });
  const count = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(d.db)).rows[0]!.n;
  const stop = new AbortController();
  const running = Promise.resolve(jobs.tasks[DAILY_TASK]!({ date: '2026-11-20', source }, { ...helpers, abortSignal: stop.signal }));
  for (;;) {
    if ((await count()) > 0) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  stop.abort(new Error('worker shutting down'));
  await assert.rejects(running);
  const partial = await count();
  const stopped = await sql<{ status: string }>`SELECT status FROM daily_runs WHERE run_date = '2026-11-20'`.execute(d.db);
  assert.deepEqual(
    stopped.rows.map((r) => r.status),
    ['failed'],
  );

  await jobs.tasks[DAILY_TASK]!({ date: '2026-11-20', source }, { ...helpers, abortSignal: new AbortController().signal });
  const whole = await count();
  assert.ok(partial > 0 && partial < whole, `stopped midway: ${partial} of ${whole}`);
  assert.equal(whole, 12_000);
  const done = await sql<{ status: string }>`SELECT status FROM daily_runs WHERE run_date = '2026-11-20'`.execute(d.db);
  assert.deepEqual(
    done.rows.map((r) => r.status),
    ['completed'],
  );
});

test("a source's later day waits while an earlier day's job will still run, and runs once that day has spent its attempts", async () => {
  const d = await createTestDatabase();
  const source = 'synthetic:5';
  const jobs = createRegistryJobs({ config: config({ REGISTRY_SOURCES: '' }), db: d.db, logger, clock });
  const queue = `registry-daily-${source}`;
  const add = (date: string, runAt: Date) =>
    sql`SELECT graphile_worker.add_job(${DAILY_TASK}::text, ${JSON.stringify({ date, source })}::json, queue_name => ${queue}::text,
      run_at => ${runAt}::timestamptz, max_attempts => 8, job_key => ${`registry.daily:${date}:${source}`}::text)`.execute(d.db);
  const job = async (date: string) =>
    (
      await sql<{
        run_at: Date;
        attempts: number;
      }>`SELECT run_at, attempts FROM graphile_worker.jobs WHERE key = ${`registry.daily:${date}:${source}`}`.execute(d.db)
    ).rows[0];
  const runs = async () =>
    (await sql<{ run_date: string; status: string }>`SELECT run_date::text, status FROM daily_runs ORDER BY run_date`.execute(d.db)).rows;
  // 2026-11-18 failed once and waits out its backoff; 2026-11-19 is due now.
  const backoff = new Date(Date.now() + 3_600_000);
  await add('2026-11-18', backoff);
  await sql`UPDATE graphile_worker._private_jobs SET attempts = 1 WHERE key = ${`registry.daily:2026-11-18:${source}`}`.execute(d.db);
  await add('2026-11-19', new Date());

  await jobs.tasks[DAILY_TASK]!({ date: '2026-11-19', source }, helpers);
  assert.deepEqual(await runs(), [], 'the later day did not run');
  const requeued = await job('2026-11-19');
  assert.ok(requeued, 'the later day is queued again');
  assert.equal(requeued.run_at.getTime(), backoff.getTime() + 1000, 'behind the earlier day');
  assert.equal(requeued.attempts, 0, 'waiting spent no attempt');

  // The earlier day failed every attempt: it holds nothing back (the next tick's catch-up queues it again).
  await sql`UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE key = ${`registry.daily:2026-11-18:${source}`}`.execute(
    d.db,
  );
  await jobs.tasks[DAILY_TASK]!({ date: '2026-11-19', source }, helpers);
  assert.deepEqual(await runs(), [{ run_date: '2026-11-19', status: 'completed' }]);
});

test('the daily task refuses a bad payload', async () => {
  const jobs = createRegistryJobs({ config: config({ REGISTRY_SOURCES: 'synthetic' }), db: t.db, logger, clock });
  await assert.rejects(async () => jobs.tasks[DAILY_TASK]!({ date: '2026-13-01', source: 'synthetic' }, helpers), /payload.date/);
  await assert.rejects(async () => jobs.tasks[DAILY_TASK]!({ date: '2026-11-01' }, helpers), /payload.source/);
});

test('demo data: a synthetic registry with a few days of history, once, and only on the embedded database', async () => {
  const demoDb = await createTestDatabase();
  const runtime = (embedded: boolean) =>
    ({
      config: config({ DEMO_COMPANIES: '400', REGISTRY_SOURCES: 'synthetic' }),
      logger,
      database: demoDb,
      embedded: embedded ? { url: demoDb.url, adminUrl: demoDb.url, owned: false, stop: async () => {} } : null,
      close: async () => {},
    }) as unknown as Runtime;

  assert.equal(await ensureDemoData(runtime(false), { today: '2026-11-21' }), null);
  const result = await ensureDemoData(runtime(true), { today: '2026-11-21' });
  assert.ok(result);
  assert.ok(result.companies >= 400, `companies: ${result.companies}`);
  assert.deepEqual(result.days, ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']);
  assert.ok(result.events > 0, 'the history has events');
  const day = await getDayStats(demoDb.db, '2026-11-20');
  assert.ok(day && day.data.total >= 400);
  assert.equal((await getRangeStats(demoDb.db, '2026-11-21'))?.meta.from_date, '2026-11-16');
  assert.equal(await ensureDemoData(runtime(true), { today: '2026-11-21' }), null, 'not twice');
});

test('demo data: a load stopped midway (the server stopping, or the process killed) is resumed by the next start, whole', async () => {
  const [stoppedDb, referenceDb] = [await createTestDatabase(), await createTestDatabase()];
  const runtime = (d: typeof stoppedDb) =>
    ({
      config: config({ DEMO_COMPANIES: '6000', REGISTRY_SOURCES: 'synthetic' }),
      logger,
      database: d,
      embedded: { url: d.url, adminUrl: d.url, owned: false, stop: async () => {} },
      close: async () => {},
    }) as unknown as Runtime;
  const count = async (d: typeof stoppedDb) =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(d.db)).rows[0]!.n;

  const stop = new AbortController();
  const loading = ensureDemoData(runtime(stoppedDb), { today: '2026-11-21', signal: stop.signal });
  // Stopped once its first batch is in.
  for (;;) {
    if ((await count(stoppedDb)) > 0) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  stop.abort();
  await assert.rejects(loading);
  const partial = await count(stoppedDb);

  const reference = await ensureDemoData(runtime(referenceDb), { today: '2026-11-21' });
  const whole = await count(referenceDb);
  assert.ok(partial > 0 && partial < whole, `stopped midway: ${partial} of ${whole}`);

  // The next start, a day later: it carries on from the day the load began, not from its own today.
  const resumed = await ensureDemoData(runtime(stoppedDb), { today: '2026-11-22' });
  assert.ok(resumed, 'resumed');
  assert.deepEqual(resumed.days, reference!.days);
  assert.equal(await count(stoppedDb), whole);
  const runs = await sql<{ status: string }>`SELECT status FROM daily_runs ORDER BY run_date`.execute(stoppedDb.db);
  assert.deepEqual(
    runs.rows.map((r) => r.status),
    Array(5).fill('completed'),
  );
  assert.equal(await ensureDemoData(runtime(stoppedDb), { today: '2026-11-22' }), null, 'not again once whole');
});

test('demo data: none when REGISTRY_SOURCES leaves out synthetic (set but empty, or other sources only)', async () => {
  // REGISTRY_SOURCES set but empty means no source at all (DECISIONS 1): an embedded server started
  // so was given 50,000 synthetic companies and five days of synthetic runs all the same, which a
  // registry built from `regwatch daily --source file:…` then shared its search, stats and totals with.
  const demoDb = await createTestDatabase();
  const runtime = (env: Record<string, string>) =>
    ({
      config: config({ DEMO_COMPANIES: '400', ...env }),
      logger,
      database: demoDb,
      embedded: { url: demoDb.url, adminUrl: demoDb.url, owned: false, stop: async () => {} },
      close: async () => {},
    }) as unknown as Runtime;
  assert.equal(await ensureDemoData(runtime({ REGISTRY_SOURCES: '' }), { today: '2026-11-21' }), null);
  assert.equal(
    await ensureDemoData(runtime({ REGISTRY_SOURCES: 'vat', VAT_API_URL: 'http://127.0.0.1:9' }), { today: '2026-11-21' }),
    null,
  );
  const companies = await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(demoDb.db);
  assert.equal(companies.rows[0]!.n, 0);
  const runs = await sql<{ n: number }>`SELECT count(*)::int AS n FROM daily_runs`.execute(demoDb.db);
  assert.equal(runs.rows[0]!.n, 0);
});
