import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor, writeNdjson } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { deferSecondaryIndexes, restoreDeferredIndexes } from '../src/registry/deferred-indexes.ts';
import { findCompanyByIdentifier } from '../src/registry/store.ts';
import { openRuntime } from '../src/runtime.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import type { RegistrySource } from '../src/registry/sources/source.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';

// A first load into an empty registry drops the secondary indexes of companies and
// company_identifiers and builds them at its end (src/registry/deferred-indexes.ts). Whatever
// happens to the run, the registry must end up with exactly the indexes it had.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

async function indexDefinitions(db: Db): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    SELECT indexdef AS def FROM pg_indexes WHERE tablename IN ('companies', 'company_identifiers') ORDER BY indexname`.execute(db);
  return rows.map((r) => r.def);
}

async function deferredRows(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM deferred_indexes`.execute(db);
  return rows[0]!.n;
}

const companies = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => companySnapshot({ n: from + i, city: i % 2 ? 'Gdańsk' : 'Łódź' }));

/**
 * The snapshots, with `during` awaited after the first `after` of them: the run has committed
 * some batches and is still going.
 */
function sourceWith(snapshots: CompanySnapshot[], after: number, during: () => Promise<void>, failAfter = false): RegistrySource {
  return {
    name: 'file',
    async *snapshotsForDate() {
      for (let i = 0; i < snapshots.length; i++) {
        if (i === after) {
          await during();
          if (failAfter) throw new Error('the source broke');
        }
        yield snapshots[i]!;
      }
    },
  };
}

/**
 * A run with deferIndexes forced on over `count` companies from `from`, and the indexes as they
 * were after the first `pauseAt` lines (some batches committed, the run still going).
 */
async function runWatchingIndexes(db: Db, date: string, from: number, count: number, pauseAt: number, fail = false) {
  let midRun: string[] = [];
  const run = runDaily(db, {
    date,
    batchSize: 10,
    deferIndexes: true,
    source: sourceWith(
      companies(from, count),
      pauseAt,
      async () => {
        midRun = await indexDefinitions(db);
      },
      fail,
    ),
  });
  return run.then(
    (summary) => ({ summary, midRun: () => midRun }),
    (error: unknown) => ({ error, midRun: () => midRun }),
  );
}

test('a first load that defers its indexes loads without them and ends with exactly the indexes it started with', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);
  assert.ok(
    before.some((d) => d.includes('companies_search_city_idx')),
    'the migrations create the search indexes',
  );
  const r = await runWatchingIndexes(t.db, '2026-11-01', 100, 60, 35);
  assert.equal('summary' in r && r.summary.new, 60);
  // While loading: only the primary keys (companies', and the identifiers' that keeps each identifier to one company).
  assert.deepEqual(
    r
      .midRun()
      .map((d) => /INDEX (\S+)/.exec(d)![1])
      .sort(),
    ['companies_pkey', 'company_identifiers_pkey'],
  );
  assert.deepEqual(await indexDefinitions(t.db), before);
  assert.equal(await deferredRows(t.db), 0);
  // The identifiers' pages are marked all-visible at the end (a VACUUM), so a lookup by identifier
  // reads the key alone: an index-only scan with no fetch from the table.
  const { rows: visible } = await sql<{ pages: number; visible: number }>`
    SELECT relpages AS pages, relallvisible AS visible FROM pg_class WHERE relname = 'company_identifiers'`.execute(t.db);
  assert.ok(visible[0]!.pages > 0 && visible[0]!.visible === visible[0]!.pages, JSON.stringify(visible[0]));
  const plan = await t.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
    const { rows: lines } = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
      SELECT company_id FROM company_identifiers WHERE key = identifier_key('NIP', ${nipFor(120)})`.execute(trx);
    return lines.map((l) => l['QUERY PLAN']).join('\n');
  });
  assert.match(plan, /Index Only Scan using company_identifiers_pkey[\s\S]*Heap Fetches: 0/);
  // The rebuilt indexes hold the companies: a city search through its index finds them.
  await sql`SET enable_seqscan = off`.execute(t.db);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE city_folded = 'gdansk'`.execute(t.db);
  assert.equal(rows[0]!.n, 30);
});

test('a first load that fails builds its indexes before it reports the failure', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);
  const r = await runWatchingIndexes(t.db, '2026-11-01', 100, 60, 35, true);
  assert.match('error' in r ? String(r.error) : 'no error', /the source broke/);
  assert.equal(r.midRun().length, 2);
  assert.deepEqual(await indexDefinitions(t.db), before);
  assert.equal(await deferredRows(t.db), 0);
  const { rows } = await sql<{ status: string; new_count: number }>`SELECT status, new_count FROM daily_runs`.execute(t.db);
  assert.deepEqual(rows, [{ status: 'failed', new_count: 30 }]);
});

test('indexes are deferred only by a run that starts on an empty registry', async () => {
  const t = await createTestDatabase();
  await runDaily(t.db, { date: '2026-11-01', source: arraySource(companies(100, 5)) });
  const before = await indexDefinitions(t.db);
  const r = await runWatchingIndexes(t.db, '2026-11-02', 200, 40, 25);
  assert.equal('summary' in r && r.summary.new, 40);
  assert.deepEqual(r.midRun(), before);
  assert.deepEqual(await indexDefinitions(t.db), before);
});

test('a live run keeps its deferred indexes to itself; those of a run whose process died are built by the next run or process start', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);

  // A first load is under way (its batches so far committed) when another process starts and
  // another source's run begins: neither touches the indexes the load will build itself.
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let paused!: () => void;
  const pausedAt = new Promise<void>((resolve) => {
    paused = resolve;
  });
  const load = runDaily(t.db, {
    date: '2026-11-01',
    batchSize: 10,
    deferIndexes: true,
    sourceKey: 'file:first',
    source: sourceWith(companies(100, 60), 35, async () => {
      paused();
      await released;
    }),
  });
  try {
    await pausedAt;
    assert.deepEqual(await restoreDeferredIndexes(t.db, null), []);
    await runDaily(t.db, { date: '2026-11-01', sourceKey: 'file:other', source: arraySource(companies(900, 3)) });
    assert.equal((await indexDefinitions(t.db)).length, 2);
  } finally {
    release();
  }
  assert.equal((await load).new, 60);
  assert.deepEqual(await indexDefinitions(t.db), before);

  // What a process killed mid-load leaves: its run still 'running', nobody holding its lock, the
  // indexes dropped and recorded.
  const { rows } = await sql<{ id: string }>`
    INSERT INTO daily_runs (run_date, source, source_key, status) VALUES ('2026-11-02', 'file', 'file:killed', 'running') RETURNING id`.execute(
    t.db,
  );
  const dropped = await deferSecondaryIndexes(t.db, rows[0]!.id);
  assert.equal(dropped.length, 5);
  assert.equal((await indexDefinitions(t.db)).length, 2);
  // The next run of any source builds them before it writes.
  await runDaily(t.db, {
    date: '2026-11-03',
    sourceKey: 'file:next',
    source: arraySource([companySnapshot({ n: 100, name: 'NOWA NAZWA' })]),
  });
  assert.deepEqual(await indexDefinitions(t.db), before);
  assert.equal(await deferredRows(t.db), 0);
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(100) }))?.name, 'NOWA NAZWA');

  // And so does any process start (src/runtime.ts), with no run at all.
  await deferSecondaryIndexes(t.db, rows[0]!.id);
  assert.equal((await indexDefinitions(t.db)).length, 2);
  const rt = await openRuntime(loadConfig({ DATABASE_URL: t.url }), createLogger('silent'), { poolSize: 2 });
  await rt.close();
  assert.deepEqual(await indexDefinitions(t.db), before);
  assert.equal(await deferredRows(t.db), 0);
});

test('indexes are not deferred while another transaction holds the table; nothing is dropped or recorded', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);
  const holder = await t.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT count(*) FROM companies');
    assert.deepEqual(await deferSecondaryIndexes(t.db, '1', 200), []);
    assert.deepEqual(await indexDefinitions(t.db), before);
    assert.equal(await deferredRows(t.db), 0);
    await holder.query('COMMIT');
  } finally {
    holder.release();
  }
  assert.equal((await deferSecondaryIndexes(t.db, '1', 200)).length, 5);
  assert.equal(await deferredRows(t.db), 5);
});

test('a first load whose indexes cannot be deferred (any error, here a missing table) loads with them in place', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);
  await sql`DROP TABLE deferred_indexes`.execute(t.db);
  const r = await runWatchingIndexes(t.db, '2026-11-01', 100, 30, 15);
  assert.equal('summary' in r && r.summary.new, 30);
  assert.deepEqual(r.midRun(), before);
  assert.deepEqual(await indexDefinitions(t.db), before);
});

test('a first load killed with SIGKILL leaves its indexes recorded; run again, it builds them and loses and doubles nothing', async () => {
  const t = await createTestDatabase();
  const before = await indexDefinitions(t.db);
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-deferred-'));
  try {
    // Large enough (over 8 MB) to be read by the preparing worker, so the load defers its indexes by default.
    const size = 20_000;
    const file = writeNdjson(
      join(dir, 'first.ndjson'),
      Array.from({ length: size }, (_, i) => companySnapshot({ n: 300_000 + i })),
    );
    const args = ['daily', '--date', '2026-11-01', '--source', `file:${file}`, '--batch-size', '500'];
    const killed = await regwatch(t.url, args, (child) => {
      const poll = setInterval(
        () =>
          void (async () => {
            const { rows } = await sql<{ n: number }>`SELECT coalesce(max(new_count), 0)::int AS n FROM daily_runs`.execute(t.db);
            if (rows[0]!.n >= 2000) {
              clearInterval(poll);
              child.kill('SIGKILL');
            }
          })(),
        20,
      );
      child.on('exit', () => clearInterval(poll));
    });
    assert.equal(killed.signal, 'SIGKILL', `the run finished before it could be killed: ${killed.stdout}`);
    assert.equal((await indexDefinitions(t.db)).length, 2);
    assert.equal(await deferredRows(t.db), 5);

    const resumed = await regwatch(t.url, args);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`new=\\d+ updated=0 deleted=0 events=0 total=${size} .*\\(resumed\\)`));
    assert.deepEqual(await indexDefinitions(t.db), before);
    assert.equal(await deferredRows(t.db), 0);
    const { rows } = await sql<{ companies: number; identifiers: number; new_count: number }>`
      SELECT (SELECT count(*)::int FROM companies) AS companies, (SELECT count(*)::int FROM company_identifiers) AS identifiers,
        (SELECT new_count FROM daily_runs) AS new_count`.execute(t.db);
    assert.deepEqual(rows[0], { companies: size, identifiers: size * 3, new_count: size });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function regwatch(
  url: string,
  args: string[],
  onSpawn?: (child: ReturnType<typeof spawn>) => void,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'regwatch.js'), ...args], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', REGISTRY_SOURCES: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}
