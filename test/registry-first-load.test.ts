import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, krsFor, nipFor, regonFor } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { findCompanyByIdentifier } from '../src/registry/store.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';

// A first load into an empty registry skips the per-batch lookup and takes every line as new
// (src/registry/daily.ts planBatch `assumeNew`); these cases are the ones that assumption gets
// wrong, and the run must still store each company once, with the last line winning.
// Each test gets an empty registry of its own.

async function integrity(db: Awaited<ReturnType<typeof createTestDatabase>>['db']) {
  const { rows } = await sql<{ companies: number; identifiers: number; dangling: number }>`
    SELECT (SELECT count(*)::int FROM companies) AS companies, (SELECT count(*)::int FROM company_identifiers) AS identifiers,
      (SELECT count(*)::int FROM company_identifiers ci LEFT JOIN companies c ON c.id = ci.company_id WHERE c.id IS NULL) AS dangling`.execute(db);
  return rows[0]!;
}

function only(s: CompanySnapshot, types: string[]): CompanySnapshot {
  return { ...s, identity: { ...s.identity, identifiers: s.identity.identifiers.filter((x) => types.includes(x.type)) } };
}

test('a company named again in a later batch of a first load, by another set of identifiers, is one company', async () => {
  const t = await createTestDatabase();
  const lines = [
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 100 + i })),
    only(companySnapshot({ n: 1, name: 'PIERWSZA' }), ['NIP', 'KRS']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 200 + i })),
    only(companySnapshot({ n: 1, name: 'DRUGA' }), ['KRS', 'REGON9']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 300 + i })),
    only(companySnapshot({ n: 1, name: 'TRZECIA' }), ['NIP']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 400 + i })),
  ];
  const s = await runDaily(t.db, { date: '2026-11-01', source: arraySource(lines), batchSize: 4 });
  assert.equal(s.new, 37);
  // The day's total (kept per first-seen day, less the companies deleted when a line was not new).
  assert.equal(s.total, 37);
  assert.equal(s.processed + s.skipped, lines.length);
  const byNip = await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(1) });
  assert.equal(byNip?.name, 'TRZECIA');
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'REGON9', value: regonFor(1) }))?.id, byNip!.id);
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'KRS', value: krsFor(1) }))?.id, byNip!.id);
  assert.deepEqual(await integrity(t.db), { companies: 37, identifiers: 36 * 3 + 3, dangling: 0 });

  // Each repeated line was retried with a lookup (the second ended the assumption); the 36 other companies
  // are each stored once (above).
});

test('two first loads racing into an empty registry store each company once', async () => {
  const t = await createTestDatabase();
  const snapshots = Array.from({ length: 150 }, (_, i) => companySnapshot({ n: 7000 + i }));
  const [x, y] = await Promise.all([
    runDaily(t.db, { date: '2026-11-01', source: arraySource(snapshots), sourceKey: 'race-x', batchSize: 10 }),
    runDaily(t.db, { date: '2026-11-01', source: arraySource([...snapshots].reverse()), sourceKey: 'race-y', batchSize: 10 }),
  ]);
  assert.equal(x.new + y.new, 150);
  assert.equal(Math.max(x.total, y.total), 150);
  assert.equal(x.updated + y.updated + x.events + y.events, 0);
  assert.deepEqual(await integrity(t.db), { companies: 150, identifiers: 450, dangling: 0 });
});
