import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, type CompanySpec } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';

// A batch that writes no events commits without waiting for the WAL flush; a batch with events
// waits (src/registry/daily/writer.ts writeBatch, docs/registry.md "Durability of a batch").

const t = await createTestDatabase();

/** The run's database, sharing the test pool, with every statement it sends recorded. */
function recordingDb() {
  const statements: string[] = [];
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: t.pool }),
    log: (e) => {
      if (e.level === 'query') statements.push(e.query.sql);
    },
  });
  return { db, relaxed: () => statements.filter((s) => /synchronous_commit\s*=\s*off/.test(s)).length, statements };
}

const specs: CompanySpec[] = [1, 2, 3, 4, 5].map((n) => ({ n, name: `FIRMA ${n} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ` }));

test('a first load commits each batch without waiting for the WAL flush, and stores everything', async () => {
  const r = recordingDb();
  const s = await runDaily(r.db, {
    date: '2026-11-01',
    source: arraySource(specs.map(companySnapshot)),
    sourceKey: 'commit:1',
    batchSize: 2,
  });
  assert.equal(s.new, 5);
  // Three batches (2 + 2 + 1), none with events.
  assert.equal(r.relaxed(), 3);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(t.db);
  assert.equal(rows[0]!.n, 5);
  // The setting is the transaction's own: the pool's connections keep the server's default.
  const { rows: setting } = await sql<{ v: string }>`SELECT current_setting('synchronous_commit') AS v`.execute(t.db);
  assert.equal(setting[0]!.v, 'on');
});

test('a batch with events waits for the WAL flush; a batch without them does not', async () => {
  const r = recordingDb();
  // The first batch holds the two renamed companies (events); the other two batches hold
  // unchanged companies only.
  const day2 = [
    { ...specs[0]!, name: 'FIRMA 1 NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' },
    { ...specs[1]!, name: 'FIRMA 2 NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' },
    specs[2]!,
    specs[3]!,
    specs[4]!,
  ];
  const s = await runDaily(r.db, {
    date: '2026-11-02',
    source: arraySource(day2.map(companySnapshot)),
    sourceKey: 'commit:2',
    batchSize: 2,
  });
  assert.deepEqual({ updated: s.updated, events: s.events }, { updated: 2, events: 2 });
  assert.equal(r.relaxed(), 2, 'only the two batches without events relax their commit');
  // The relaxed batches are the last two: the SET comes after the events batch's insert.
  const insertAt = r.statements.findIndex((q) => /INSERT INTO events/.test(q));
  const firstRelaxed = r.statements.findIndex((q) => /synchronous_commit\s*=\s*off/.test(q));
  assert.ok(insertAt >= 0 && firstRelaxed > insertAt);
});
