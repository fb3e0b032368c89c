import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestDatabase } from './helpers/db.ts';
import { defer } from './helpers/cleanup.ts';
import { createManualClock, createTestApp } from './helpers/app.ts';
import { RUN_LOCK_CLASS } from '../src/registry/store/locks.ts';

/**
 * GET /api/v1/sources when a daily run's process died mid-run: its row stays `running`, but no
 * session holds the run's lock any more, so the source reports a failed run, degraded, with the
 * day as a gap (DECISIONS 9). While a process does hold the lock, the run is in progress.
 */

interface SourceEntry {
  source: string;
  health: string;
  last_run: { date: string; status: string; started_at: string; finished_at: string | null } | null;
  gaps: string[];
}

const db = await createTestDatabase();
const clock = createManualClock('2026-11-21T05:00:00Z');
const t = await createTestApp({ db, clock, env: { REGISTRY_SOURCES: 'krs', KRS_API_URL: 'http://127.0.0.1:1/api/krs' } });

await sql`INSERT INTO daily_runs (run_date, source, source_key, status, started_at, finished_at) VALUES
  ('2026-11-18', 'krs', 'krs', 'completed', '2026-11-19T03:00:00Z', '2026-11-19T03:10:00Z'),
  ('2026-11-19', 'krs', 'krs', 'completed', '2026-11-20T03:00:00Z', '2026-11-20T03:10:00Z'),
  ('2026-11-20', 'krs', 'krs', 'running', '2026-11-21T03:00:00Z', NULL)`.execute(db.db);

async function krs(): Promise<SourceEntry> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/sources' });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { data: SourceEntry[] }).data.find((s) => s.source === 'krs')!;
}

test('a running row whose process died is a failed run: the source is degraded and its day a gap', async () => {
  const s = await krs();
  assert.deepEqual(
    { date: s.last_run?.date, status: s.last_run?.status, started_at: s.last_run?.started_at, finished_at: s.last_run?.finished_at },
    { date: '2026-11-20', status: 'failed', started_at: '2026-11-21T03:00:00.000Z', finished_at: null },
  );
  assert.equal(s.health, 'degraded');
  assert.deepEqual(s.gaps, ['2026-11-20']);
});

test('while a process holds the run lock, the run is in progress: the source is ok and the day not yet owed', async () => {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  defer(() => holder.end());
  // The lock a run's process takes (locks.ts tryLockRun), for the day and the source's key.
  await holder.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [RUN_LOCK_CLASS, '2026-11-20|krs']);
  const s = await krs();
  assert.equal(s.last_run?.status, 'running');
  assert.equal(s.last_run?.date, '2026-11-20');
  assert.equal(s.health, 'ok');
  assert.deepEqual(s.gaps, []);
  await holder.query('SELECT pg_advisory_unlock($1::int, hashtext($2))', [RUN_LOCK_CLASS, '2026-11-20|krs']);
  assert.equal((await krs()).last_run?.status, 'failed', 'and failed again once the lock is let go');
});
