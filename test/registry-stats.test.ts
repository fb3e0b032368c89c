import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { getDayStats, getRangeStats } from '../src/modules/stats/service.ts';

const t = await createTestDatabase();

// Day A: 5 new. Day B: 2 new, 2 updated (one becomes deleted). Day C (35 days later): 1 new, 1 updated.
await runDaily(t.db, { date: '2026-10-01', source: arraySource([1, 2, 3, 4, 5].map((n) => companySnapshot({ n }))) });
await runDaily(t.db, {
  date: '2026-10-03',
  source: arraySource([
    companySnapshot({ n: 1, name: 'PIERWSZA NOWA NAZWA' }),
    companySnapshot({ n: 2, status: 'wykreślony', dates: [{ type: 'deletion', date: '2026-10-03' }] }),
    companySnapshot({ n: 6 }),
    companySnapshot({ n: 7 }),
  ]),
});
await runDaily(t.db, {
  date: '2026-11-07',
  source: arraySource([companySnapshot({ n: 3, city: 'Kraków' }), companySnapshot({ n: 8 })]),
  sourceKey: 'synthetic-like',
});

test("day statistics come from that day's run, with the total known at its end", async () => {
  assert.deepEqual(await getDayStats(t.db, '2026-10-01'), {
    meta: {
      date: '2026-10-01',
      type: 'daily_snapshot',
      source: 'snapshot file import',
      description: (await getDayStats(t.db, '2026-10-01'))!.meta.description,
    },
    data: { new: 5, updated: 0, deleted: 0, total: 5 },
  });
  const b = await getDayStats(t.db, '2026-10-03');
  assert.deepEqual(b?.data, { new: 2, updated: 2, deleted: 1, total: 7 });
  assert.match(b!.meta.description, /2026-10-03/);
  assert.equal((await getDayStats(t.db, '2026-11-07'))?.data.total, 8);
});

test('a day without a run is null (404)', async () => {
  assert.equal(await getDayStats(t.db, '2026-10-02'), null);
  assert.equal(await getDayStats(t.db, '1999-01-01'), null);
});

test('the range covers the 30 days ending at the date, clamped to days with runs', async () => {
  const r = await getRangeStats(t.db, '2026-10-20');
  assert.deepEqual(r?.meta.from_date, '2026-10-01');
  assert.deepEqual(r?.meta.to_date, '2026-10-03');
  assert.deepEqual(r?.data, { new: 7, updated: 2, deleted: 1, total: 7 });
  // 2026-11-07 reaches back to 2026-10-09: only its own run is inside.
  const late = await getRangeStats(t.db, '2026-11-07');
  assert.deepEqual(
    { from: late?.meta.from_date, to: late?.meta.to_date, data: late?.data },
    { from: '2026-11-07', to: '2026-11-07', data: { new: 1, updated: 1, deleted: 0, total: 8 } },
  );
  // 2026-10-30 reaches back to 2026-10-01 exactly (30 days inclusive).
  assert.equal((await getRangeStats(t.db, '2026-10-30'))?.meta.from_date, '2026-10-01');
  assert.equal((await getRangeStats(t.db, '2026-10-31'))?.meta.from_date, '2026-10-03');
  assert.equal(await getRangeStats(t.db, '2026-09-30'), null);
});

test('malformed dates are refused', async () => {
  await assert.rejects(getDayStats(t.db, '2026-02-30'), RangeError);
  await assert.rejects(getRangeStats(t.db, '20261001'), RangeError);
});

test('on-demand import runs do not make a day of their own', async () => {
  await runDaily(t.db, {
    date: '2026-10-02',
    source: arraySource([companySnapshot({ n: 50 })]),
    sourceKey: 'import:krs:NIP:123',
    importIdentifier: { type: 'NIP', value: '123' },
  });
  assert.equal(await getDayStats(t.db, '2026-10-02'), null);
});

test('a back-dated run: its total counts the companies it saw that day, so it is never below its own updated', async () => {
  const d = await createTestDatabase();
  await runDaily(d.db, { date: '2026-10-10', source: arraySource([1, 2, 3].map((n) => companySnapshot({ n }))) });
  const back = await runDaily(d.db, {
    date: '2026-09-01',
    source: arraySource([companySnapshot({ n: 1, name: 'NAZWA Z WRZEŚNIA' }), companySnapshot({ n: 9 })]),
  });
  assert.deepEqual({ new: back.new, updated: back.updated, total: back.total }, { new: 1, updated: 1, total: 2 });
  assert.deepEqual((await getDayStats(d.db, '2026-09-01'))?.data, { new: 1, updated: 1, deleted: 0, total: 2 });
  // The later day's counts stand; its total now counts the company first seen on 2026-09-01,
  // which was known at its end (a total that shrank from day to day with nothing deleted would
  // say otherwise), and the range's total is the last day's.
  assert.deepEqual((await getDayStats(d.db, '2026-10-10'))?.data, { new: 3, updated: 0, deleted: 0, total: 4 });
  assert.equal((await getRangeStats(d.db, '2026-10-10'))?.data.total, 4);
  // A third run, back-dated between the two, adds to the later day's total only.
  await runDaily(d.db, { date: '2026-09-20', source: arraySource([companySnapshot({ n: 10 })]) });
  assert.deepEqual((await getDayStats(d.db, '2026-09-20'))?.data.new, 1);
  assert.equal((await getDayStats(d.db, '2026-09-01'))?.data.total, 2);
  assert.equal((await getDayStats(d.db, '2026-10-10'))?.data.total, 5);
});

test('a caught-up earlier day does not make a company count twice as updated on a later day', async () => {
  const db = await createTestDatabase();
  const asSynthetic = (s: ReturnType<typeof companySnapshot>) => ({
    ...s,
    profiles: s.profiles.map((p) => ({ ...p, source: 'synthetic' as const })),
  });
  await runDaily(db.db, { date: '2026-10-01', source: arraySource([companySnapshot({ n: 1 })]) });
  await runDaily(db.db, { date: '2026-10-01', source: arraySource([asSynthetic(companySnapshot({ n: 1 }))], 'synthetic') });
  // Day 3 of `file`, then the caught-up day 2 of `file`, then day 3 of `synthetic`.
  await runDaily(db.db, { date: '2026-10-03', source: arraySource([companySnapshot({ n: 1, name: 'NAZWA TRZY' })]) });
  await runDaily(db.db, { date: '2026-10-02', source: arraySource([companySnapshot({ n: 1, name: 'NAZWA TRZY', city: 'Kraków' })]) });
  await runDaily(db.db, { date: '2026-10-03', source: arraySource([asSynthetic(companySnapshot({ n: 1, city: 'Gdańsk' }))], 'synthetic') });
  assert.equal((await getDayStats(db.db, '2026-10-03'))!.data.updated, 1);
  assert.equal((await getDayStats(db.db, '2026-10-02'))!.data.updated, 1);
  // The profile's last change stays the later day.
  const { last_changed_date } = await db.db
    .selectFrom('companies')
    .select(sql<string>`last_changed_date::text`.as('last_changed_date'))
    .executeTakeFirstOrThrow();
  assert.equal(last_changed_date, '2026-10-03');
});

test("the range at the calendar's first days is an empty window, not a failure", async () => {
  for (const date of ['0001-01-01', '0001-01-29']) assert.equal(await getRangeStats(t.db, date), null, date);
});
