import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor, regonFor } from './helpers/registry.ts';
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

test('many companies each listed several times, spread over overlapping batches: each ends as its last line says', async () => {
  // Batches overlap (one written, one planned, one looked up), so lines of one company in nearby
  // batches race: the later ones are retried, superseded lines dropped, and the last line wins.
  const fresh = await createTestDatabase();
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (const date of ['2026-11-01', '2026-11-02']) {
    const lines = Array.from({ length: 300 }, (_, i) => ({ n: 500 + Math.floor(random() * 40), v: `${date} ${i}` }));
    await runDaily(fresh.db, {
      date,
      source: arraySource(lines.map(({ n, v }) => companySnapshot({ n, name: `WERSJA ${v}` }))),
      batchSize: 7,
    });
    const last = new Map(lines.map(({ n, v }) => [n, v]));
    for (const [n, v] of last)
      assert.equal(
        (await findCompanyByIdentifier(fresh.db, { type: 'NIP', value: nipFor(n) }))?.name,
        `WERSJA ${v}`,
        `company ${n} on ${date}`,
      );
  }
});

test('a later line of another company that shares an identifier does not drop a retried line', async () => {
  // Two lines of company 61, then a line that names company 62 by its NIP but carries 61's REGON
  // (NIP wins the match). The second line of 61 is retried (its company is claimed in the batch);
  // the third line, applied to 62, must not count as a later line of 61.
  const fresh = await createTestDatabase();
  await runDaily(fresh.db, { date: '2026-11-01', source: arraySource([companySnapshot({ n: 61 }), companySnapshot({ n: 62 })]) });
  const stray = companySnapshot({ n: 62, name: 'FIRMA 62 PO ZMIANIE' });
  stray.identity.identifiers = stray.identity.identifiers.map((x) => (x.type === 'REGON9' ? { ...x, value: regonFor(61) } : x));
  await runDaily(fresh.db, {
    date: '2026-11-02',
    source: arraySource([companySnapshot({ n: 61, name: 'PIERWSZA' }), companySnapshot({ n: 61, name: 'DRUGA' }), stray]),
  });
  assert.equal((await findCompanyByIdentifier(fresh.db, { type: 'NIP', value: nipFor(61) }))?.name, 'DRUGA');
  assert.equal((await findCompanyByIdentifier(fresh.db, { type: 'NIP', value: nipFor(62) }))?.name, 'FIRMA 62 PO ZMIANIE');
});
