import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import pg from 'pg';
import type { TestDatabase } from './db.ts';

/** The connections of index builds in worker threads (src/db/snapshot-worker.ts), by their application name's suffix. */
export async function workerBackends(db: TestDatabase, suffix: string): Promise<{ pid: number; wait: string | null }[]> {
  const { rows } = await sql<{ pid: number; wait: string | null }>`
    SELECT pid, wait_event_type AS wait FROM pg_stat_activity
    WHERE datname = current_database() AND application_name LIKE ${`%:${suffix}`}`.execute(db.db);
  return rows;
}

/** Runs `fn` while another connection holds `companies` locked: a worker's read waits on it. */
export async function whileCompaniesLocked<T>(db: TestDatabase, fn: () => Promise<T>): Promise<T> {
  const locker = new pg.Client({ connectionString: db.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
    return await fn();
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
  }
}

/** Polls until a worker's connection (by suffix) waits on a lock; returns its pid. */
export async function workerWaitingOnLock(db: TestDatabase, suffix: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const waiting = (await workerBackends(db, suffix)).find((b) => b.wait === 'Lock');
    if (waiting) return waiting.pid;
    assert.ok(Date.now() < deadline, 'the worker never waited on the lock');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls until no worker connection (by suffix) is left. */
export async function noWorkerBackendsLeft(db: TestDatabase, suffix: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await workerBackends(db, suffix)).length > 0) {
    assert.ok(Date.now() < deadline, 'the worker connection outlived its build');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Exports a snapshot from a read-only repeatable-read transaction, runs `afterExport` (changes
 * committed now are invisible in the snapshot), starts a worker with it, and ends the
 * transaction once the worker has imported it.
 */
export async function startInSnapshot<B extends { imported: Promise<void> }>(
  db: TestDatabase,
  start: (snapshot: string) => B,
  afterExport: () => Promise<void> = async () => {},
): Promise<B> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ s: string }>('SELECT pg_export_snapshot() AS s');
    await afterExport();
    const build = start(rows[0]!.s);
    await build.imported;
    await client.query('COMMIT');
    return build;
  } finally {
    await client.end();
  }
}

/** The nice value of each of this process's threads (Linux), the main thread's first. */
export function threadNiceValues(): number[] {
  const nice = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  const main = nice(readFileSync('/proc/self/stat', 'utf8'));
  const others = readdirSync('/proc/self/task')
    .filter((t) => t !== String(process.pid))
    .map((t) => nice(readFileSync(`/proc/self/task/${t}/stat`, 'utf8')));
  return [main, ...others];
}
