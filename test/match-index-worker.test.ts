import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { connectionOf } from '../src/db/database.ts';
import { createMatchEngine } from '../src/modules/match/engine.ts';
import type { MatchIndex } from '../src/modules/match/match-index.ts';
import { startMatchWorkerBuild } from '../src/modules/match/match-index-worker.ts';
import { readMatchRowsByIds } from '../src/modules/match/repo.ts';
import { runDaily } from '../src/registry/daily.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, type CompanySpec } from './helpers/registry.ts';
import {
  noWorkerBackendsLeft,
  startInSnapshot,
  threadNiceValues,
  whileCompaniesLocked,
  workerBackends,
  workerWaitingOnLock,
} from './helpers/snapshot-worker.ts';

/**
 * The match index is built in a worker thread (src/modules/match/match-index-worker.ts): it holds
 * exactly what a build in the serving thread holds, it reads the snapshot the serving thread
 * exported, and stop() ends it with its connection.
 */

const SPECS: CompanySpec[] = [
  { n: 1, name: 'PIEKARNIA ŻYTNIA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Kraków', street: 'ul. Długa', postalCode: '31-147' },
  { n: 2, name: 'Piekarnia Pszenna S.A.', city: 'Łódź', street: 'al. Kościuszki', postalCode: '90-001' },
  { n: 3, name: 'ZAKŁAD USŁUG BUDOWLANYCH "MUR-BET" JAN NOWAK', city: 'Gdańsk', street: '', postalCode: '' },
  { n: 4, name: 'Mur Bet Sp. z o.o.', city: 'Kraków', street: 'ul. Długa', postalCode: '31-147', status: 'wykreślony' },
  { n: 5, name: 'FUNDACJA ŚWIĄTECZNA', city: '', street: 'ul. Krótka', postalCode: '00-950', withoutKrs: true },
  ...Array.from({ length: 40 }, (_, i) => ({
    n: 10 + i,
    name: `FIRMA HANDLOWA ${['ALFA', 'BETA', 'GAMMA', 'DELTA'][i % 4]} ${i}`,
    city: i % 3 ? 'Warszawa' : 'Poznań',
  })),
];

async function seeded(specs: CompanySpec[] = SPECS): Promise<TestDatabase> {
  const db = await createTestDatabase();
  await runDaily(db.db, { date: '2026-11-01', source: arraySource(specs.map(companySnapshot)), sourceKey: 'file:base' });
  return db;
}

async function built(db: TestDatabase, buildIn: 'worker' | 'thread'): Promise<MatchIndex> {
  const engine = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }), buildIn, chunkSize: 7 });
  try {
    await engine.refresh();
    return (await engine.current(0))!;
  } finally {
    await engine.stop();
  }
}

const SUFFIX = 'match-build';

test('a build in the worker holds what a build in the serving thread holds', { timeout: 60_000 }, async () => {
  const db = await seeded();
  const [inThread, inWorker] = [await built(db, 'thread'), await built(db, 'worker')];
  assert.equal(inWorker.size, SPECS.length);
  assert.equal(inWorker.companies, inThread.companies);
  const words = new Set<string>();
  for (let i = 0; i < inThread.size; i++) {
    const c = inThread.candidate(i);
    assert.deepEqual(inWorker.candidate(i), c);
    for (const w of c.tokens) words.add(w);
    for (const place of [c.city, c.street]) if (place !== null) assert.equal(inWorker.placeId(place), inThread.placeId(place));
  }
  assert.ok(words.size > 20);
  for (const w of words) {
    const id = inThread.tokenId(w);
    assert.ok(id >= 0);
    assert.equal(inWorker.tokenId(w), id);
    assert.equal(inWorker.weightOf(w), inThread.weightOf(w));
    assert.deepEqual([...inWorker.postingsOf(id)], [...inThread.postingsOf(id)]);
    // Typo lookups go through the trigram dictionary.
    const typo = w.length > 4 ? w.slice(0, 2) + w.slice(3) : w;
    assert.deepEqual(inWorker.variantsOf(typo), inThread.variantsOf(typo));
  }
  const ids = (await db.db.selectFrom('companies').select('id').execute()).map((r) => String(r.id));
  for (const row of await readMatchRowsByIds(db.db, ids))
    for (const key of row.identifierKeys) {
      const found = inWorker.findByIdentifierKey(key);
      assert.deepEqual(found, inThread.findByIdentifierKey(key));
      assert.deepEqual(
        found.map((c) => c.id),
        [row.id],
      );
    }
});

test('the worker reads the exported snapshot: a change committed after the export is not in the index', { timeout: 60_000 }, async () => {
  const db = await seeded(SPECS.slice(0, 5));
  const build = await startInSnapshot(
    db,
    (snapshot) => startMatchWorkerBuild(async () => {}, { connection: connectionOf(db.db)!, snapshot, chunkSize: 2 }),
    // Committed after the export, before the worker starts: only the imported snapshot hides it.
    () =>
      runDaily(db.db, {
        date: '2026-11-02',
        source: arraySource([companySnapshot({ n: 1, name: 'ZMIENIONA NAZWA' }), companySnapshot({ n: 99, name: 'NOWA FIRMA' })]),
        sourceKey: 'file:next',
      }).then(() => {}),
  );
  await build.read;
  const index = await build.finish();
  assert.equal(index.size, 5);
  assert.equal(index.tokenId('zmieniona'), -1);
  assert.equal(index.tokenId('nowa'), -1);
  assert.ok(index.tokenId('piekarnia') >= 0);
  assert.deepEqual(await workerBackends(db, SUFFIX), [], 'the worker closed its connection');
});

test('a snapshot that does not exist (any more) rejects the build', { timeout: 60_000 }, async () => {
  const db = await seeded(SPECS.slice(0, 2));
  const build = startMatchWorkerBuild(async () => {}, { connection: connectionOf(db.db)!, snapshot: '00000003-0000001B-1', chunkSize: 2 });
  await assert.rejects(build.imported, /snapshot/i);
  await assert.rejects(build.finish(), /snapshot/i);
  await build.abort();
});

test(
  'stop() during a build: it resolves, the worker (at nice 19) and its connection are gone, and there is no index',
  { timeout: 60_000 },
  async () => {
    const db = await seeded(SPECS.slice(0, 3));
    const engine = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }) });
    await whileCompaniesLocked(db, async () => {
      engine.start();
      await workerWaitingOnLock(db, SUFFIX);
      // The build's thread yields the cores to the serving thread (src/db/snapshot-worker.ts).
      const [main, ...others] = threadNiceValues();
      assert.equal(main, 0);
      assert.deepEqual(
        others.filter((n) => n !== 0),
        [19],
      );
      await engine.stop();
      assert.equal(engine.status().ready, false);
    });
    await noWorkerBackendsLeft(db, SUFFIX);
  },
);
