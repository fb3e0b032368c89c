import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql } from 'kysely';
import { seedSyntheticCompanies } from '../src/registry/demo.ts';
import { runDaily } from '../src/registry/daily.ts';
import { createSyntheticSource } from '../src/registry/sources/synthetic.ts';
import { parseSearchQuery, type SearchFilters, type SearchQuery } from '../src/modules/companies/filters.ts';
import { searchCompaniesSql } from '../src/modules/companies/repo.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { importCompany } from '../src/registry/import.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { COMPANIES, nip, sourceOf } from './companies-dataset.test.ts';
import { seededRandom } from '../src/lib/random.ts';

/**
 * The in-memory index against the SQL search on a generated registry (Polish names, diacritics,
 * partial PKD codes, every status): the same totals and the same pages for hundreds of filter
 * combinations; and the index following the database as runs and imports change it.
 */

const logger = pino({ level: 'silent' });

describe('search engines on a generated registry', () => {
  let db: TestDatabase;
  let memory: CompanySearchEngine;
  const values = {
    cities: [] as string[],
    postal: [] as string[],
    codes: [] as string[],
    words: [] as string[],
    dates: [] as string[],
    voivodeships: [] as string[],
    legal: [] as string[],
  };

  before(async () => {
    db = await createTestDatabase();
    await seedSyntheticCompanies(db.db, { count: 3000, seed: 7, date: '2026-11-01' });
    // A few days of changes: suspensions, closures, new activities, renames.
    const synthetic = createSyntheticSource({ seed: 7, size: 3000 });
    for (const date of ['2026-11-02', '2026-11-03']) await runDaily(db.db, { date, source: synthetic, sourceKey: 'synthetic:7' });
    memory = createCompanySearchEngine({ db: db.db, logger });
    await memory.refresh();
    const pick = async (query: ReturnType<typeof sql<{ v: string }>>) => (await query.execute(db.db)).rows.map((r) => r.v).filter(Boolean);
    values.cities = await pick(sql<{ v: string }>`SELECT DISTINCT city_folded AS v FROM companies ORDER BY 1 LIMIT 60`);
    values.postal = await pick(sql<{ v: string }>`SELECT DISTINCT postal_code AS v FROM companies ORDER BY 1 LIMIT 60`);
    values.codes = await pick(sql<{ v: string }>`SELECT DISTINCT unnest(activity_codes) AS v FROM companies ORDER BY 1`);
    values.words = await pick(
      sql<{
        v: string;
      }>`SELECT DISTINCT left(w, 1 + length(w) % 4) AS v FROM companies, regexp_split_to_table(name_folded, '[^a-z0-9]+') w WHERE w <> '' ORDER BY 1 LIMIT 300`,
    );
    values.dates = await pick(
      sql<{
        v: string;
      }>`SELECT DISTINCT to_char(activity_start, 'YYYY-MM-DD') AS v FROM companies WHERE activity_start IS NOT NULL ORDER BY 1`,
    );
    values.voivodeships = await pick(sql<{ v: string }>`SELECT DISTINCT voivodeship_folded AS v FROM companies`);
    values.legal = await pick(sql<{ v: string }>`SELECT DISTINCT legal_form AS v FROM companies`);
  });

  function randomQuery(random: () => number): SearchQuery {
    const one = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const q: SearchQuery = {};
    const n = 1 + Math.floor(random() * 4);
    for (let i = 0; i < n; i++) {
      switch (Math.floor(random() * 12)) {
        case 0:
          q.status = one(['ACTIVE', 'SUSPENDED', 'DELETED']);
          break;
        case 1:
          q.has_contact = one(['phone', 'email', 'fax']);
          break;
        case 2:
          q.activity_code = one(values.codes);
          break;
        case 3:
          q.activities = `${one(values.codes)},${one(values.codes)}`;
          break;
        case 4:
          q.activity_prefix = one(values.codes).slice(0, 1 + Math.floor(random() * 3));
          break;
        case 5:
          q.activity_start_from = one(values.dates);
          break;
        case 6:
          q.activity_start_to = one(values.dates);
          break;
        case 7:
          q.voivodeship = one(values.voivodeships);
          break;
        case 8:
          q.city = one(values.cities);
          break;
        case 9:
          q.postal_code = one(values.postal);
          break;
        case 10:
          q.legal_form = one(values.legal);
          break;
        default:
          q.q = one(values.words) + (random() < 0.3 ? ` ${one(values.words)}` : '');
      }
    }
    if (q.activity_start_from && q.activity_start_to && q.activity_start_to < q.activity_start_from)
      [q.activity_start_from, q.activity_start_to] = [q.activity_start_to, q.activity_start_from];
    return q;
  }

  test('the same total and the same pages from memory and from SQL, for 400 filter combinations', async () => {
    const random = seededRandom(42);
    let nonEmpty = 0;
    for (let i = 0; i < 400; i++) {
      const query = randomQuery(random);
      const { filters } = parseSearchQuery(query);
      const fromSql = await searchCompaniesSql(db.db, filters, 0, 20);
      const fromMemory = await memory.search(filters, 0, 20);
      assert.equal(fromMemory.engine, 'memory');
      assert.deepEqual({ total: fromMemory.total, ids: fromMemory.ids }, fromSql, JSON.stringify(query));
      if (fromSql.total > 20) {
        const offset = 20 * Math.floor(random() * Math.ceil(fromSql.total / 20));
        const [a, b] = [await searchCompaniesSql(db.db, filters, offset, 20), await memory.search(filters, offset, 20)];
        assert.deepEqual({ total: b.total, ids: b.ids }, a, `${JSON.stringify(query)} at ${offset}`);
      }
      if (fromSql.total > 0) nonEmpty++;
    }
    assert.ok(nonEmpty > 150, `enough combinations find something (${nonEmpty})`);
  });

  test('a name word in another script matches no company in either engine; a postal code with an en dash is the one with a hyphen', async () => {
    const word = values.words.find((w) => /^[a-z]{2,}$/.test(w))!;
    const postal = values.postal[0]!;
    const cases: Array<[SearchQuery, number | 'same-as-hyphen']> = [
      [{ q: 'Газпром' }, 0],
      [{ q: 'Αθήνα' }, 0],
      [{ q: `${word} Газ` }, 0],
      [{ postal_code: `${postal.slice(0, 2)}\u2013${postal.slice(2)}` }, 'same-as-hyphen'],
    ];
    const hyphen = await searchCompaniesSql(
      db.db,
      parseSearchQuery({ postal_code: `${postal.slice(0, 2)}-${postal.slice(2)}` }).filters,
      0,
      20,
    );
    assert.ok(hyphen.total > 0);
    assert.ok((await searchCompaniesSql(db.db, parseSearchQuery({ q: word }).filters, 0, 20)).total > 0, `${word} alone finds companies`);
    for (const [query, expected] of cases) {
      const { filters } = parseSearchQuery(query);
      const fromSql = await searchCompaniesSql(db.db, filters, 0, 20);
      const fromMemory = await memory.search(filters, 0, 20);
      assert.deepEqual({ total: fromMemory.total, ids: fromMemory.ids }, fromSql, JSON.stringify(query));
      assert.equal(fromSql.total, expected === 'same-as-hyphen' ? hyphen.total : expected, JSON.stringify(query));
    }
  });

  test('a build in a worker thread answers exactly as a build in this thread (400 filter combinations, any page)', async () => {
    const thread = createCompanySearchEngine({ db: db.db, logger, buildIn: 'thread', followEveryMs: 0 });
    await thread.refresh();
    try {
      assert.equal(thread.status().companies, memory.status().companies);
      const random = seededRandom(7);
      for (let i = 0; i < 400; i++) {
        const { filters } = parseSearchQuery(randomQuery(random));
        const offset = 20 * Math.floor(random() * 5);
        const [a, b] = [await thread.search(filters, offset, 20), await memory.search(filters, offset, 20)];
        assert.deepEqual(b, a, JSON.stringify(filters));
      }
    } finally {
      await thread.stop();
    }
  });

  test('wide filters too: every status alone, each voivodeship, each legal form', async () => {
    const queries: SearchQuery[] = [
      ...['ACTIVE', 'SUSPENDED', 'DELETED'].map((status) => ({ status })),
      ...values.voivodeships.map((voivodeship) => ({ voivodeship })),
      ...values.legal.map((legal_form) => ({ legal_form, status: 'DELETED' })),
    ];
    for (const query of queries) {
      const { filters } = parseSearchQuery(query);
      const [a, b] = [await searchCompaniesSql(db.db, filters, 40, 20), await memory.search(filters, 40, 20)];
      assert.deepEqual({ total: b.total, ids: b.ids }, a, JSON.stringify(query));
    }
  });

  test('the index follows the database: a finished run and an import at once, without a rebuild', async () => {
    const f = (query: SearchQuery): SearchFilters => parseSearchQuery(query).filters;
    const beta = COMPANIES[1]!;
    const builtAt = memory.status().builtAt;
    // A run of another source: applied as a delta by the next search.
    await runDaily(db.db, { date: '2026-11-04', source: sourceOf([beta]), sourceKey: 'file:engines-1' });
    const fresh = await memory.search(f({ q: 'beta it' }), 0, 20);
    assert.equal(fresh.total, 1, 'a finished run is in the next search');
    assert.equal(fresh.dataAsOf, '2026-11-04');
    assert.equal(memory.status().builtAt, builtAt, 'no rebuild for a small run');

    // An import: searchable from the next search on, without a rebuild.
    const before = memory.status().builtAt;
    const lookup = {
      name: 'krs' as const,
      async *snapshotsForDate() {},
      async lookup() {
        return {
          identity: { identifiers: [{ type: 'NIP' as const, value: nip(900) }], company_type: '', country_code: 'PL' },
          profiles: [
            {
              source: 'krs' as const,
              name: 'Gdańska Stocznia Importowana',
              status: 'aktywny',
              legal_form: 'SPÓŁKA AKCYJNA',
              address: {
                street: '',
                building: '',
                apartment: '',
                city: 'Gdańsk',
                postal_code: '80-958',
                voivodeship: 'pomorskie',
                country_code: 'PL',
              },
              units: [],
              contacts: [],
              activities: [{ code: '3011Z', name: 'x', is_primary: true }],
              dates: [{ type: 'activity_start' as const, date: '2026-11-04' }],
              websites: [],
              vat_status: null,
              bank_accounts: [],
            },
          ],
          persons: [],
        };
      },
    };
    const imported = await importCompany({ db: db.db, logger, sources: [lookup] }, { type: 'NIP', value: nip(900) });
    assert.equal(imported.found, true);
    const found = await memory.search(f({ q: 'stocznia', city: 'gdansk', activity_code: '30.11.Z' }), 0, 20);
    assert.deepEqual(found, { total: 1, ids: [imported.companyId], engine: 'memory', dataAsOf: '2026-11-04' });
    assert.equal(memory.status().builtAt, before, 'no rebuild for an import');
    const sqlTotal = await searchCompaniesSql(db.db, f({}), 0, 20);
    assert.deepEqual((await memory.search(f({}), 0, 20)).total, sqlTotal.total);
  });

  test('a failed run counts as finished; resumed and completed, it is picked up again', async () => {
    const f = parseSearchQuery({ q: 'fundacja zeta' }).filters;
    const zeta = COMPANIES[6]!;
    // One batch commits, then the source breaks: the run is failed with the company stored.
    const broken = {
      name: 'file' as const,
      async *snapshotsForDate() {
        for await (const s of sourceOf([zeta]).snapshotsForDate('x')) yield s;
        throw new Error('source broke');
      },
    };
    await assert.rejects(runDaily(db.db, { date: '2026-11-05', source: broken, sourceKey: 'file:engines-2', batchSize: 1 }));
    const run = await db.db.selectFrom('daily_runs').select('status').where('source_key', '=', 'file:engines-2').executeTakeFirstOrThrow();
    assert.equal(run.status, 'failed');
    await memory.refresh();
    assert.equal((await memory.search(f, 0, 20)).total, 1);

    const renamed = { ...zeta, name: 'Fundacja Zeta Plus' };
    await runDaily(db.db, { date: '2026-11-05', source: sourceOf([renamed]), sourceKey: 'file:engines-2' });
    await memory.refresh();
    assert.equal((await memory.search(parseSearchQuery({ q: 'zeta plus' }).filters, 0, 20)).total, 1);
  });
});
