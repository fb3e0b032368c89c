import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { SearchFilters } from './filters.ts';
import { searchIndexFromRows } from './search-index-builder.ts';
import { identifierSortKey, rowMatches, type IndexRow } from './search-index-rows.ts';

/** The index must answer exactly what filtering and sorting every row answers. */

const CITIES = ['lodz', 'warszawa', 'krakow', 'kedzierzyn-kozle', null];
const VOIVODESHIPS = ['lodzkie', 'mazowieckie', 'malopolskie', null];
const LEGAL = ['sp-z-oo', 'jdg', 'sa', null];
const CODES = ['4941Z', '4942Z', '4711Z', '6201Z', '6202Z', '5610A', '201', '3600Z', '3700Z'];
const WORDS = ['alfa', 'alfabet', 'trans', 'transport', 'beta', 'kowalski', 'sp', 'z', 'o', '100'];
const STATUSES = ['ACTIVE', 'SUSPENDED', 'DELETED'] as const;

const dateArb = fc.option(
  fc.integer({ min: 0, max: 60 }).map((d) => new Date(Date.UTC(2020, 0, 1 + d * 7)).toISOString().slice(0, 10)),
  { nil: null },
);

const rowArb = (id: number) =>
  fc
    .record({
      activityStart: dateArb,
      primaryIdentifier: fc.oneof(fc.stringMatching(/^\d{10}$/), fc.stringMatching(/^\d{9}$/), fc.constantFrom('1234567890', '123456789')),
      status: fc.constantFrom(...STATUSES),
      voivodeship: fc.constantFrom(...VOIVODESHIPS),
      city: fc.constantFrom(...CITIES),
      // '0095': a malformed code a source could store; no filter may match it.
      postalCode: fc.constantFrom('90001', '00950', '01000', '0095', null),
      legalForm: fc.constantFrom(...LEGAL),
      hasPhone: fc.boolean(),
      hasEmail: fc.boolean(),
      hasFax: fc.boolean(),
      activityCodes: fc.uniqueArray(fc.constantFrom(...CODES), { maxLength: 3 }),
      nameFolded: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
    })
    .map((r): IndexRow => ({ ...r, id: String(id) }));

const rowsArb = fc.integer({ min: 0, max: 120 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rowArb(i + 1))));

const filtersArb: fc.Arbitrary<SearchFilters> = fc.record({
  status: fc.constantFrom(...STATUSES),
  hasContact: fc.constantFrom('phone', 'email', 'fax', null),
  activityCodes: fc.uniqueArray(fc.constantFrom(...CODES, '9999Z'), { maxLength: 2 }).map((c) => c.sort()),
  activityPrefix: fc.constantFrom(null, null, '4', '49', '47', '494', '62', '2', '20', '9', '36'),
  activityStartFrom: fc.option(
    dateArb.filter((d) => d !== null),
    { nil: null },
  ),
  activityStartTo: fc.option(
    dateArb.filter((d) => d !== null),
    { nil: null },
  ),
  voivodeship: fc.constantFrom(...VOIVODESHIPS, 'opolskie'),
  city: fc.constantFrom(...CITIES, 'gdansk'),
  postalCode: fc.constantFrom(null, '90001', '11111', '0095', 'SW1A1AA', '1E3'),
  legalForm: fc.constantFrom(...LEGAL, 'fundacja'),
  nameWords: fc.uniqueArray(fc.constantFrom('a', 'alf', 'alfab', 'tr', 'transp', 'x', '1', 'z'), { maxLength: 2 }),
}) as fc.Arbitrary<SearchFilters>;

function reference(rows: readonly IndexRow[], f: SearchFilters, offset: number, limit: number) {
  const day = (r: IndexRow) => (r.activityStart === null ? -Infinity : Date.parse(r.activityStart));
  const matching = rows
    .filter((r) => rowMatches(r, f))
    .sort(
      (a, b) =>
        day(b) - day(a) || identifierSortKey(a.primaryIdentifier) - identifierSortKey(b.primaryIdentifier) || Number(a.id) - Number(b.id),
    );
  return { total: matching.length, ids: matching.slice(offset, offset + limit).map((r) => r.id) };
}

describe('SearchIndex', async () => {
  test('identifierSortKey orders like text comparison of digit strings', async () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,10}$/), fc.stringMatching(/^\d{1,10}$/), (a, b) => {
        const byText = a < b ? -1 : a > b ? 1 : 0;
        assert.equal(Math.sign(identifierSortKey(a) - identifierSortKey(b)), byText);
      }),
      { numRuns: 2000 },
    );
  });

  test('query = filter every row, sort, slice (random rows, filters and pages)', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.array(fc.tuple(filtersArb, fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 25 })), { minLength: 1, maxLength: 8 }),
        async (rows, queries) => {
          const index = await searchIndexFromRows(rows);
          for (const [f, offset, limit] of queries) assert.deepEqual(index.query(f, offset, limit), reference(rows, f, offset, limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('upserts: a replaced or added company is answered from the delta, in its place in the order', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.array(fc.tuple(fc.integer({ min: 1, max: 140 }), rowArb(0)), { maxLength: 10 }),
        filtersArb,
        fc.integer({ min: 0, max: 40 }),
        async (rows, changes, f, offset) => {
          let index = await searchIndexFromRows(rows);
          const current = new Map(rows.map((r) => [r.id, r] as const));
          // One change at a time, and the rest as one set (a company listed twice keeps its last row).
          const half = Math.floor(changes.length / 2);
          for (const [id, row] of changes.slice(0, half)) {
            const changed = { ...row, id: String(id) };
            index = await index.withChanges([changed]);
            current.set(changed.id, changed);
          }
          const rest = changes.slice(half).map(([id, row]) => ({ ...row, id: String(id) }));
          const before = index;
          const beforeAnswer = before.query(f, offset, 20);
          index = await index.withChanges(rest, () => {});
          for (const changed of rest) current.set(changed.id, changed);
          assert.deepEqual(before.query(f, offset, 20), beforeAnswer, 'the index changes were applied to is left as it was');
          assert.equal(index.size, current.size);
          assert.deepEqual(index.query(f, offset, 20), reference([...current.values()], f, offset, 20));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('filters on packed columns only (counted from the histogram), with and without a delta', async () => {
    const dimsOnly = filtersArb.map((f) => ({
      ...f,
      activityCodes: [],
      activityPrefix: null,
      activityStartFrom: null,
      activityStartTo: null,
      city: null,
      postalCode: null,
      nameWords: [],
    }));
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.array(fc.tuple(fc.integer({ min: 1, max: 140 }), rowArb(0)), { maxLength: 6 }),
        dimsOnly,
        fc.integer({ min: 0, max: 80 }),
        fc.integer({ min: 1, max: 30 }),
        async (rows, changes, f, offset, limit) => {
          let index = await searchIndexFromRows(rows);
          const current = new Map(rows.map((r) => [r.id, r] as const));
          assert.deepEqual(index.query(f, offset, limit), reference(rows, f, offset, limit));
          for (const [id, row] of changes) {
            const changed = { ...row, id: String(id) };
            index = await index.withChanges([changed]);
            current.set(changed.id, changed);
          }
          assert.deepEqual(index.query(f, offset, limit), reference([...current.values()], f, offset, limit));
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a row in several lists of a union (two matching codes, two words with the prefix) counts once', async () => {
    const base = {
      activityStart: '2020-01-01',
      status: 'ACTIVE' as const,
      voivodeship: null,
      city: null,
      postalCode: null,
      legalForm: null,
      hasPhone: false,
      hasEmail: false,
      hasFax: false,
    };
    const rows: IndexRow[] = Array.from({ length: 100 }, (_, i) => ({
      ...base,
      id: String(i + 1),
      primaryIdentifier: String(1_000_000_000 + i),
      activityCodes: i < 10 ? ['4941Z', '4942Z'] : ['6201Z'],
      nameFolded: i < 10 ? 'alfa alfabet' : 'beta',
    }));
    const index = await searchIndexFromRows(rows);
    const f: SearchFilters = {
      status: 'ACTIVE',
      hasContact: null,
      activityCodes: [],
      activityPrefix: null,
      activityStartFrom: null,
      activityStartTo: null,
      voivodeship: null,
      city: null,
      postalCode: null,
      legalForm: null,
      nameWords: [],
    };
    assert.equal(index.query({ ...f, nameWords: ['alf'] }, 0, 20).total, 10);
    assert.equal(index.query({ ...f, activityCodes: ['4941Z', '4942Z'] }, 0, 20).total, 10);
    assert.equal(index.query({ ...f, activityPrefix: '494' }, 0, 20).total, 10);
    assert.deepEqual(
      index.query({ ...f, activityPrefix: '494' }, 0, 20).ids,
      rows.slice(0, 10).map((r) => r.id),
    );
    assert.equal(index.query({ ...f, activityPrefix: '49' }, 0, 20).total, 10);
    assert.equal(index.query({ ...f, activityPrefix: '62' }, 0, 20).total, 90);
  });

  test('rows given in result order are taken as they are; a pausing build gives the same index', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArb, filtersArb, async (rows, f) => {
        const day = (r: IndexRow) => (r.activityStart === null ? -Infinity : Date.parse(r.activityStart));
        const ordered = [...rows].sort(
          (a, b) =>
            day(b) - day(a) ||
            identifierSortKey(a.primaryIdentifier) - identifierSortKey(b.primaryIdentifier) ||
            Number(a.id) - Number(b.id),
        );
        let pauses = 0;
        const index = await searchIndexFromRows(ordered, () => {
          pauses++;
        });
        assert.deepEqual(index.query(f, 0, 50), reference(rows, f, 0, 50));
        assert.ok(pauses > 0);
      }),
      { numRuns: 100 },
    );
  });

  test('a postal-code filter that is not five digits matches nothing, not the number it spells', async () => {
    const base = {
      activityStart: '2020-01-01',
      status: 'ACTIVE' as const,
      voivodeship: null,
      city: null,
      legalForm: null,
      hasPhone: false,
      hasEmail: false,
      hasFax: false,
      activityCodes: [],
      nameFolded: 'alfa',
    };
    const rows: IndexRow[] = ['01000', '00095', '0095', '00950'].map((postalCode, i) => ({
      ...base,
      id: String(i + 1),
      primaryIdentifier: String(1_000_000_000 + i),
      postalCode,
    }));
    const index = await searchIndexFromRows(rows);
    const f: SearchFilters = {
      status: 'ACTIVE',
      hasContact: null,
      activityCodes: [],
      activityPrefix: null,
      activityStartFrom: null,
      activityStartTo: null,
      voivodeship: null,
      city: null,
      postalCode: null,
      legalForm: null,
      nameWords: [],
    };
    for (const postalCode of ['1E3', '1000', '0095', '95', 'SW1A1AA', '009500']) {
      assert.deepEqual(index.query({ ...f, postalCode }, 0, 20), { total: 0, ids: [] }, postalCode);
      assert.deepEqual(reference(rows, { ...f, postalCode }, 0, 20), { total: 0, ids: [] }, postalCode);
    }
    assert.deepEqual(index.query({ ...f, postalCode: '01000' }, 0, 20), { total: 1, ids: ['1'] });
  });

  test('an empty index answers zero', async () => {
    const index = await searchIndexFromRows([]);
    const f: SearchFilters = {
      status: 'ACTIVE',
      hasContact: null,
      activityCodes: [],
      activityPrefix: null,
      activityStartFrom: null,
      activityStartTo: null,
      voivodeship: null,
      city: null,
      postalCode: null,
      legalForm: null,
      nameWords: [],
    };
    assert.deepEqual(index.query(f, 0, 20), { total: 0, ids: [] });
  });
});
