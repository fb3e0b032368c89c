import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { addJob } from '../src/jobs/queue.ts';
import { LIVENESS_LOCK_CLASS } from '../src/jobs/recovery.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { runDaily } from '../src/registry/daily.ts';
import { createRegistryJobs, enqueueDailyRuns } from '../src/registry/jobs.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { defer } from './helpers/cleanup.ts';
import { waitFor } from './helpers/wait.ts';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot, writeNdjson } from './helpers/registry.ts';

/**
 * A worker process that dies without a graceful shutdown leaves its job locked; graphile-worker
 * alone would hand it back after four hours. The surviving workers do it once the dead process's
 * liveness lock has been gone for the grace period (src/jobs/recovery.ts), and never while the
 * process lives, even when its lock connection drops and is taken again.
 */

const t = await createTestDatabase();
const db = t.db;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lockedBy(jobId: string): Promise<string | null | undefined> {
  const { rows } = await sql<{ locked_by: string | null }>`SELECT locked_by FROM graphile_worker.jobs WHERE id = ${jobId}::bigint`.execute(
    db,
  );
  return rows.length === 0 ? undefined : rows[0]!.locked_by;
}

async function queueHold(maxAttempts?: number): Promise<string> {
  await addJob(db, 'test.hold', {}, maxAttempts === undefined ? {} : { maxAttempts });
  const { rows } = await sql<{
    id: string;
  }>`SELECT max(id)::text AS id FROM graphile_worker.jobs WHERE task_identifier = 'test.hold'`.execute(db);
  return rows[0]!.id;
}

function workerProcess(tasks: 'hold' | 'registry'): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./jobs-recovery-worker.ts', import.meta.url))], {
    env: { ...process.env, WORKER_DATABASE_URL: t.url, WORKER_TASKS: tasks },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += String(d);
  });
  return { child, output: () => out };
}

/** A worker process that takes the job and holds it; resolves once it does. */
async function holdingWorker(jobId: string): Promise<ChildProcess> {
  const { child, output } = workerProcess('hold');
  await waitFor('the worker process to take the job', () => output().includes(`holding ${jobId}\n`), 30_000);
  return child;
}

/** This process's worker: the same task, which completes; it sweeps every 100 ms. */
async function survivor(graceMs: number, ran: string[]) {
  const runner = await startWorker({
    pool: t.pool,
    logger: pino({ level: 'silent' }),
    modules: [
      {
        tasks: {
          'test.hold': async (_payload, helpers) => {
            ran.push(helpers.job.id);
          },
        },
      },
    ],
    concurrency: 1,
    pollInterval: 100,
    recovery: { sweepIntervalMs: 100, graceMs },
  });
  return runner;
}

async function livenessRows(): Promise<{ worker_id: string; process_key: number; dead: boolean }[]> {
  const { rows } = await sql<{ worker_id: string; process_key: number; dead: boolean }>`
    SELECT worker_id, process_key, dead_since IS NOT NULL AS dead FROM job_worker_liveness ORDER BY worker_id`.execute(db);
  return rows;
}

test('a live worker keeps its job; killed, its job runs in another process within seconds, not hours', async () => {
  const jobId = await queueHold();
  const child = await holdingWorker(jobId);
  const holder = await lockedBy(jobId);
  assert.ok(holder, 'the worker process locked the job');

  const ran: string[] = [];
  const runner = await survivor(300, ran);
  // Many sweeps and grace periods go by: the holder is alive, so its job stays with it.
  await sleep(1_500);
  assert.equal(await lockedBy(jobId), holder);
  assert.deepEqual(ran, []);
  const before = await livenessRows();
  assert.ok(
    before.some((r) => r.worker_id === holder && !r.dead),
    `the holder is recorded as alive: ${holder} ${JSON.stringify(before)}`,
  );

  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  const killedAt = Date.now();
  await waitFor('the job to run again', () => ran.length === 1);
  assert.deepEqual(ran, [jobId]);
  assert.ok(Date.now() - killedAt < 15_000);
  await waitFor('the job to be done', async () => (await lockedBy(jobId)) === undefined);
  assert.equal(
    (await livenessRows()).some((r) => r.worker_id === holder),
    false,
    'the dead worker is forgotten',
  );

  await runner.stop();
  assert.deepEqual(await livenessRows(), [], 'a process that stops forgets its own workers');
});

test('a job whose process was killed on its last attempt gets that attempt back and runs again', async () => {
  const jobId = await queueHold(1);
  const child = await holdingWorker(jobId);
  const { rows } = await sql<{ attempts: number; max_attempts: number }>`
    SELECT attempts, max_attempts FROM graphile_worker.jobs WHERE id = ${jobId}::bigint`.execute(db);
  assert.deepEqual(rows[0], { attempts: 1, max_attempts: 1 }, 'its one attempt taken');
  const ran: string[] = [];
  const runner = await survivor(300, ran);
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  await waitFor('the job to run again', () => ran.length === 1);
  assert.deepEqual(ran, [jobId]);
  await waitFor('the job to be done', async () => (await lockedBy(jobId)) === undefined);
  await runner.stop();
});

test('a worker whose liveness connection drops takes its lock again and keeps its job', async () => {
  const jobId = await queueHold();
  const child = await holdingWorker(jobId);
  const holder = (await lockedBy(jobId))!;
  const ran: string[] = [];
  const runner = await survivor(3_000, ran);
  defer(() => runner.stop());
  const key = (await livenessRows()).find((r) => r.worker_id === holder)!.process_key;

  // The holder's lock session ends (a database restart would do the same to every session).
  const { rows: killed } = await sql<{ ok: boolean }>`
    SELECT pg_terminate_backend(l.pid) AS ok FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.classid = ${LIVENESS_LOCK_CLASS}::int::oid AND l.objid = ${key}::int::oid AND l.objsubid = 2`.execute(
    db,
  );
  assert.deepEqual(
    killed.map((r) => r.ok),
    [true],
  );
  await waitFor(
    'the holder to take its lock again',
    async () => {
      const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ${LIVENESS_LOCK_CLASS}::int::oid AND l.objid = ${key}::int::oid`.execute(
        db,
      );
      return rows[0]!.n === 1;
    },
    10_000,
  );
  // Longer than the grace period from the moment the lock was lost: the job is still the holder's.
  await sleep(4_000);
  assert.equal(await lockedBy(jobId), holder);
  assert.deepEqual(ran, []);
  assert.ok((await livenessRows()).some((r) => r.worker_id === holder && !r.dead));

  child.kill('SIGKILL');
  await once(child, 'exit');
  await waitFor('the job to run again', () => ran.length === 1);
});

test('a scheduled daily run whose worker process is killed mid-way is resumed by another worker: nothing lost or doubled', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-recovery-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const size = 20_000;
  const base = writeNdjson(
    join(dir, 'base.ndjson'),
    Array.from({ length: size }, (_, i) => companySnapshot({ n: 300_000 + i })),
  );
  const load = await runDaily(db, { date: '2026-11-10', source: createFileSource(base) });
  assert.equal(load.new, size);
  const changed = writeNdjson(
    join(dir, 'changed.ndjson'),
    Array.from({ length: size }, (_, i) => companySnapshot({ n: 300_000 + i, name: `NOWA ${i}` })),
  );
  await enqueueDailyRuns(db, [`file:${changed}`], '2026-11-11');

  const run = async () =>
    (
      await sql<{ status: string; events_count: number; updated_count: number; attempts: number }>`
    SELECT status, events_count::int AS events_count, updated_count, attempts FROM daily_runs WHERE run_date = '2026-11-11'`.execute(db)
    ).rows[0];
  const { child } = workerProcess('registry');
  const exited = once(child, 'exit');
  await waitFor('the scheduled run to commit its first batches', async () => ((await run())?.events_count ?? 0) >= 2_000, 60_000);
  child.kill('SIGKILL');
  await exited;
  const partial = (await run())!;
  assert.equal(partial.status, 'running', 'killed before the run completed');
  assert.ok(partial.events_count < size);

  const logger = pino({ level: 'silent' });
  const runner = await startWorker({
    pool: t.pool,
    logger,
    modules: [createRegistryJobs({ config: loadConfig({ DATABASE_URL: t.url, REGISTRY_SOURCES: '' }), db, logger, clock: systemClock })],
    concurrency: 1,
    pollInterval: 100,
    recovery: { sweepIntervalMs: 100, graceMs: 300 },
  });
  defer(() => runner.stop());
  await waitFor('the run to be resumed and completed', async () => (await run())?.status === 'completed', 60_000);
  const done = (await run())!;
  assert.deepEqual(
    { events: done.events_count, updated: done.updated_count, attempts: done.attempts },
    { events: size, updated: size, attempts: 2 },
  );
  const {
    rows: [events],
  } = await sql<{ n: number; companies: number }>`
    SELECT count(*)::int AS n, count(DISTINCT company_id)::int AS companies FROM events WHERE event_date = '2026-11-11'`.execute(db);
  assert.deepEqual(events, { n: size, companies: size });
  await waitFor(
    'the job to be done',
    async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'registry.daily'`.execute(db))
        .rows[0]!.n === 0,
  );
});
