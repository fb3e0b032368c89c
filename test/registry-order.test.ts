import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { findCompanyByIdentifier } from '../src/registry/store.ts';

const t = await createTestDatabase();

test('when a company appears several times in one stream, the last line wins whatever the retries', async () => {
  const lines = [1, 2, 3, 4].map((v) => companySnapshot({ n: 42, name: `WERSJA ${v}` }));
  await runDaily(t.db, { date: '2026-11-01', source: arraySource(lines), batchSize: 1 });
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(42) }))?.name, 'WERSJA 4');

  const day2 = [5, 6, 7].map((v) => companySnapshot({ n: 42, name: `WERSJA ${v}` }));
  const s = await runDaily(t.db, { date: '2026-11-02', source: arraySource(day2), batchSize: 1 });
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(42) }))?.name, 'WERSJA 7');
  assert.equal(s.updated, 1);
});
