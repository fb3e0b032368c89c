import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql } from 'kysely';
import { connectionOf } from '../src/db/database.ts';
import { runDaily } from '../src/registry/daily.ts';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { createCompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { startWorkerBuild, type WorkerBuild } from '../src/modules/companies/search-index-worker.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import {
  noWorkerBackendsLeft,
  startInSnapshot,
  whileCompaniesLocked,
  workerBackends,
  workerWaitingOnLock,
} from './helpers/snapshot-worker.ts';
import { arraySource, companySnapshot } from './helpers/registry.ts';

/**
 * A full build in a worker thread reads the companies over a connection of its own, in the
 * snapshot the serving thread exported (docs/search.md, "Freshness"): it sees exactly that state,
 * and a failure (its connection lost, the build stopped) rejects and leaves nothing behind.
 */

const named = (n: number, name: string) => companySnapshot({ n, name: `${name} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ` });
const noPause = () => {};

async function seeded(count: number): Promise<TestDatabase> {
  const db = await createTestDatabase();
  await runDaily(db.db, {
    date: '2026-11-01',
    source: arraySource(Array.from({ length: count }, (_, i) => named(i + 1, `PIERWSZA ${i + 1}`))),
    sourceKey: 'file:base',
  });
  return db;
}

/** A worker build reading the snapshot of a repeatable-read transaction, which ends once the worker has imported it. */
const startIn = (db: TestDatabase, afterExport?: () => Promise<void>): Promise<WorkerBuild> =>
  startInSnapshot(db, (snapshot) => startWorkerBuild(noPause, { connection: connectionOf(db.db)!, snapshot, chunkSize: 2 }), afterExport);

const SUFFIX = 'search-build';

test('the worker reads the exported snapshot: a change committed after the export is not in the index', { timeout: 60_000 }, async () => {
  const db = await seeded(5);
  const build = await startIn(db, async () => {
    // Committed after the export, before the worker starts: only the imported snapshot hides it.
    await runDaily(db.db, { date: '2026-11-02', source: arraySource([named(1, 'ZMIENIONA'), named(9, 'NOWA')]), sourceKey: 'file:next' });
  });
  await build.read;
  const index = await build.finish();
  assert.equal(index.size, 5);
  const q = (text: string) => index.query(parseSearchQuery({ q: text }).filters, 0, 10).total;
  assert.deepEqual([q('pierwsza'), q('zmieniona'), q('nowa')], [5, 0, 0]);
  assert.deepEqual(await workerBackends(db, SUFFIX), [], 'the worker closed its connection');
});

test('a snapshot that does not exist (any more) rejects the build', { timeout: 60_000 }, async () => {
  const db = await seeded(2);
  const build = startWorkerBuild(noPause, { connection: connectionOf(db.db)!, snapshot: '00000003-0000001B-1', chunkSize: 2 });
  await assert.rejects(build.imported, /snapshot/i);
  await assert.rejects(build.finish(), /snapshot/i);
  await build.abort();
});

test('its connection lost mid-read: the build rejects; the engine keeps serving the index it had', { timeout: 60_000 }, async () => {
  const db = await seeded(4);
  const engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), maxDelta: 0, followEveryMs: 0 });
  try {
    await engine.refresh();
    const before = engine.status();
    assert.deepEqual([before.engine, before.companies, before.dataAsOf], ['memory', 4, '2026-11-01']);
    await runDaily(db.db, { date: '2026-11-02', source: arraySource([named(1, 'ZMIENIONA')]), sourceKey: 'file:next' });
    // The worker's read waits on this lock (taken after the run), then its connection is cut.
    await whileCompaniesLocked(db, async () => {
      // Above maxDelta: a rebuild starts; until it is in, the old index answers.
      const held = await engine.search(parseSearchQuery({ q: 'zmieniona' }).filters, 0, 10);
      assert.deepEqual([held.engine, held.total, held.dataAsOf], ['memory', 0, '2026-11-01']);
      await sql`SELECT pg_terminate_backend(${await workerWaitingOnLock(db, SUFFIX)}::int)`.execute(db.db);
    });
    const deadline = Date.now() + 30_000;
    while (engine.status().rebuilding) {
      assert.ok(Date.now() < deadline, 'the build never ended');
      await new Promise((r) => setTimeout(r, 20));
    }
    const after = engine.status();
    assert.deepEqual([after.engine, after.companies, after.dataAsOf], ['memory', 4, '2026-11-01']);
    const answer = await engine.search(parseSearchQuery({ q: 'pierwsza' }).filters, 0, 10);
    assert.deepEqual([answer.engine, answer.total, answer.dataAsOf], ['memory', 4, '2026-11-01']);
  } finally {
    await engine.stop();
  }
});

test('stop() during a build: it resolves, the worker and its connection are gone', { timeout: 60_000 }, async () => {
  const db = await seeded(3);
  const engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), followEveryMs: 0 });
  await whileCompaniesLocked(db, async () => {
    engine.start();
    await workerWaitingOnLock(db, SUFFIX);
    await engine.stop();
    assert.equal(engine.status().engine, 'sql');
  });
  await noWorkerBackendsLeft(db, SUFFIX);
});
