import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { lookupBatch } from '../src/registry/daily/planner.ts';
import { isSkip, prepareEntry, type PreparedItem } from '../src/registry/prepare.ts';

const t = await createTestDatabase();

test("a batch's lookup split into parts finds each line's company exactly as one statement does", async () => {
  await runDaily(t.db, {
    date: '2026-11-01',
    source: arraySource(Array.from({ length: 900 }, (_, i) => companySnapshot({ n: 1000 + i }))),
  });
  // Unchanged, changed and unknown companies, in an order unlike the stored one.
  const items = Array.from({ length: 1100 }, (_, i) => {
    const n = 1000 + ((i * 7919) % 1100);
    const entry = prepareEntry(companySnapshot({ n, name: i % 3 === 0 ? `ZMIANA ${i}` : undefined }), false);
    assert.ok(!isSkip(entry));
    return entry as PreparedItem;
  });
  const whole = await lookupBatch(t.db, 'file', items, false, 1);
  assert.equal(whole.filter((m) => m !== null).length, 900);
  assert.ok(whole.some((m) => m?.sameFingerprint === false && m.snapshotJson !== null));
  for (const parts of [2, 3, 4]) assert.deepEqual(await lookupBatch(t.db, 'file', items, false, parts), whole, `${parts} parts`);
  // Too few lines to split: one statement.
  assert.deepEqual(await lookupBatch(t.db, 'file', items.slice(0, 300), false, 4), whole.slice(0, 300));
});
