import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql } from 'kysely';
import { runDaily } from '../src/registry/daily.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { ALFA, BETA, COMPANIES, IOTA_REGON, KOWALSKI, lodzCompany, sourceOf } from './companies-dataset.test.ts';

/**
 * GET /companies/search over a small registry whose every answer is known, run twice: once with
 * the in-memory index and once with SQL only, so both engines are held to the same answers.
 */

const ACTIVE_TOTAL = COMPANIES.length - 2;

for (const mode of ['memory', 'sql'] as const) {
  describe(`GET /companies/search (${mode} engine)`, () => {
    let t: TestApp;
    let engine: CompanySearchEngine;
    let account: TestAccount;
    let auth: { authorization: string };

    before(async () => {
      const db = await createTestDatabase();
      await runDaily(db.db, { date: '2026-11-20', source: sourceOf(COMPANIES), sourceKey: 'file:search-test' });
      engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), mode });
      t = await createTestApp({ db, overrides: { companySearch: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
      await engine.refresh();
      assert.equal(engine.status().engine, mode);
      account = await createAccount(t);
      auth = bearer(account.master);
      const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow();
      await applyLedgerEntry(t.db.db, { accountId: id, type: 'deposit', amount: 10_000, description: 'test top-up' });
    });

    const search = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/companies/search${query ? `?${query}` : ''}`, headers: auth });
      return res;
    };
    const ok = async (query: string) => {
      const res = await search(query);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as {
        total: number;
        per_page: number;
        current_page: number;
        last_page: number;
        results: { name: string; identifiers: { type: string; value: string }[]; status: string; activity_start: string | null }[];
      };
    };
    const names = async (query: string) => (await ok(query)).results.map((r) => r.name);
    const total = async (query: string) => (await ok(query)).total;
    const invalid = async (query: string, field: string) => {
      const res = await search(query);
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      assert.ok(res.json().errors[field], `${query}: expected an error on ${field}, got ${res.body}`);
      return res.json();
    };

    test('no filter: every ACTIVE company, 20 a page, exact total and page meta', async () => {
      const d = await ok('');
      assert.equal(d.total, ACTIVE_TOTAL);
      assert.equal(d.per_page, 20);
      assert.equal(d.current_page, 1);
      assert.equal(d.last_page, Math.ceil(ACTIVE_TOTAL / 20));
      assert.equal(d.results.length, 20);
      assert.ok(d.results.every((r) => r.status === 'ACTIVE'));
    });

    test('a result carries identifiers, name, city, voivodeship, activity_start, activity_main, status and contacts', async () => {
      const res = await search(`q=alfa`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        status: 'success',
        data: {
          total: 1,
          per_page: 20,
          current_page: 1,
          last_page: 1,
          data_as_of: '2026-11-20',
          results: [
            {
              identifiers: [
                { type: 'NIP', value: ALFA },
                { type: 'KRS', value: '0000000101' },
              ],
              name: 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
              city: 'Łódź',
              voivodeship: 'łódzkie',
              activity_start: '2020-05-01',
              activity_main: '4941Z',
              status: 'ACTIVE',
              contacts: [
                { type: 'email', value: 'biuro@example.pl' },
                { type: 'phone', value: '+48 42 000 00 01' },
              ],
            },
          ],
        },
      });
    });

    test('order: activity_start newest first, ties by primary identifier, companies without a start date last', async () => {
      const d = await ok('');
      const starts = d.results.map((r) => r.activity_start);
      assert.deepEqual(starts.slice(0, 4), ['2022-01-01', '2021-03-15', '2021-03-15', '2021-03-15']);
      const tied = d.results.slice(1, 4).map((r) => r.identifiers[0]!.value);
      assert.deepEqual(tied, [...tied].sort(), 'equal dates are ordered by primary identifier');
      assert.deepEqual(tied.sort(), [BETA, KOWALSKI, IOTA_REGON].sort());
      const last = await ok('page=2');
      assert.equal(last.results.at(-1)!.name, 'Fundacja Zeta');
      assert.equal(last.results.at(-1)!.activity_start, null);
    });

    test('pagination: page 2 holds the rest; a page past the end is empty with 200, any number; bounds are 422', async () => {
      const p2 = await ok('page=2');
      assert.equal(p2.current_page, 2);
      assert.equal(p2.results.length, ACTIVE_TOTAL - 20);
      const all = [...(await ok('page=1')).results, ...p2.results].map((r) => r.identifiers[0]!.value);
      assert.equal(new Set(all).size, ACTIVE_TOTAL, 'pages neither overlap nor skip');
      const past = await ok('page=7');
      assert.deepEqual(
        { ...past, results: past.results.length },
        { total: ACTIVE_TOTAL, per_page: 20, current_page: 7, last_page: 2, data_as_of: '2026-11-20', results: 0 },
      );
      // Past the last page, whatever its number: empty (only a page beyond 500 with results is
      // refused: companies-search-deep.test.ts).
      const far = await ok('page=99999');
      assert.deepEqual({ ...far, results: far.results.length }, { ...past, current_page: 99999, results: 0 });
      await invalid('page=0', 'page');
      await invalid('page=1000001', 'page');
      await invalid('page=abc', 'page');
      await invalid('page=1.5', 'page');
      // Decimal digits only: JavaScript's number forms are not page numbers.
      for (const q of ['page=0x2', 'page=2e0', 'page=%202', 'page=2%20', 'page=0b10', 'page=']) await invalid(q, 'page');
      assert.equal((await ok('page=02')).current_page, 2);
    });

    test('status: ACTIVE by default, SUSPENDED and DELETED on request, any case', async () => {
      assert.deepEqual(await names('status=SUSPENDED'), ['Delta Budownictwo sp. z o.o.']);
      assert.deepEqual(await names('status=deleted'), ['Epsilon Handel']);
      assert.equal(await total('status=ACTIVE'), ACTIVE_TOTAL);
      await invalid('status=ALL', 'status');
    });

    test('has_contact: phone, email, fax', async () => {
      assert.equal(await total('has_contact=phone'), 4 + 13);
      assert.deepEqual((await names('has_contact=fax')).sort(), ['Eta Consulting sp. z o.o.', 'Gamma Software S.A.']);
      assert.equal(await total('has_contact=email'), 4);
      await invalid('has_contact=sms', 'has_contact');
    });

    test('activity_code: exact, with or without dots, any case; activities is a comma list meaning any of', async () => {
      const transport = ['ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'Jan Kowalski Usługi Transportowe'];
      assert.deepEqual((await names('activity_code=4941Z')).sort(), transport);
      assert.deepEqual((await names('activity_code=49.41.Z')).sort(), transport);
      assert.deepEqual((await names('activity_code=49.41.z')).sort(), transport);
      assert.deepEqual(
        await names('activity_code=5229C'),
        ['ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ'],
        'a secondary activity matches too',
      );
      assert.equal(await total('activity_code=4941'), 0, 'exact, not a prefix');
      assert.equal(await total('activities=4941Z,62.01.Z'), 4);
      assert.equal(await total('activities=4941Z&activity_code=6202Z'), 3, 'both name codes; any of them matches');
      await invalid('activity_code=abc', 'activity_code');
      await invalid('activities=6201Z,%25', 'activities');
    });

    test('activity_prefix: any activity starting with it, dots ignored', async () => {
      assert.equal(await total('activity_prefix=62'), 2);
      assert.equal(await total('activity_prefix=62.0'), 2);
      assert.equal(await total('activity_prefix=6202'), 1);
      assert.equal(await total('activity_prefix=4'), 2, '4941Z twice; 4120Z and 4711Z are not ACTIVE');
      assert.equal(await total('activity_prefix=5'), 26, '5229C and 25 × 5610A');
      assert.equal(await total('activity_prefix=49&activity_code=5229C'), 1);
      await invalid('activity_prefix=x', 'activity_prefix');
    });

    test('activity_start_from / _to (inclusive), open_from as an alias; both bounds apply', async () => {
      assert.equal(await total('activity_start_from=2021-03-15'), 4);
      assert.equal(await total('open_from=2021-03-15'), 4);
      assert.equal(await total('activity_start_to=2000-01-05'), 5);
      assert.equal(await total('activity_start_from=2000-01-05&activity_start_to=2000-01-10'), 6);
      assert.equal(await total('activity_start_from=2010-01-01&open_from=2021-01-01'), 4, 'the later lower bound wins');
      assert.equal(await total('activity_start_from=2030-01-01'), 0);
      await invalid('activity_start_from=2021-02-30', 'activity_start_from');
      await invalid('open_from=yesterday', 'open_from');
      await invalid('activity_start_from=2021-01-01&activity_start_to=2020-01-01', 'activity_start_to');
    });

    test('voivodeship: name in any case, with or without diacritics, slug, TERYT code or "województwo …"', async () => {
      for (const v of ['łódzkie', 'ŁÓDZKIE', 'lodzkie', 'Lodzkie', '10', 'województwo łódzkie']) {
        assert.equal(await total(`voivodeship=${encodeURIComponent(v)}`), 3, v);
      }
      await invalid('voivodeship=atlantis', 'voivodeship');
    });

    test('city: any case, with or without Polish diacritics', async () => {
      for (const c of ['Łódź', 'ŁÓDŹ', 'lodz', 'LODZ', '  łódź ']) assert.equal(await total(`city=${encodeURIComponent(c)}`), 3, c);
      assert.equal(await total(`city=${encodeURIComponent('kedzierzyn-kozle')}`), 1);
      assert.equal(await total(`city=${encodeURIComponent('Zielona Gora')}`), 1);
      assert.equal(await total('city=lod'), 0, 'the whole name, not a prefix');
      await invalid(`city=${'a'.repeat(151)}`, 'city');
    });

    test('postal_code: with or without the dash; any other text up to 20 characters matches nothing', async () => {
      assert.equal(await total('postal_code=90-001'), 1);
      assert.equal(await total('postal_code=90001'), 1);
      assert.equal(await total('postal_code=90-002'), 1, 'stored without the dash, asked with it');
      assert.equal(await total('postal_code=31-000'), 25);
      assert.equal(await total('postal_code=%2031%20000%20'), 25);
      for (const code of ['9000', '90-00', '900010', 'abcde', 'SW1A 1AA', '75008 CEDEX', '31-000%25', '1E3', '1'.repeat(20)]) {
        assert.equal(await total(`postal_code=${encodeURIComponent(code)}`), 0, code);
      }
      await invalid(`postal_code=${'1'.repeat(21)}`, 'postal_code');
    });

    test('legal_form: the dictionary slug', async () => {
      assert.equal(await total('legal_form=sp-z-oo'), 3);
      assert.equal(await total('legal_form=SA'), 1);
      assert.equal(await total('legal_form=jdg'), 27);
      assert.equal(await total('legal_form=fundacja'), 1);
      await invalid('legal_form=llc', 'legal_form');
    });

    test('filters combine', async () => {
      assert.deepEqual(await names('city=lodz&has_contact=phone&activity_prefix=49'), [
        'Jan Kowalski Usługi Transportowe',
        'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      ]);
      assert.equal(await total('voivodeship=lodzkie&legal_form=sp-z-oo&activity_start_from=2021-01-01'), 1);
      assert.equal(await total('city=krakow&has_contact=phone&activity_code=5610A&activity_start_to=2000-01-10'), 5);
      assert.equal(
        await total(
          'city=krakow&postal_code=31-000&legal_form=jdg&voivodeship=malopolskie&activity_prefix=56&has_contact=phone&status=ACTIVE&open_from=2000-01-01&activity_start_to=2000-12-31&q=piekarnia',
        ),
        13,
      );
      assert.equal(await total('city=warszawa&status=DELETED&activity_code=4711Z&has_contact=email'), 1);
      assert.equal(await total('city=warszawa&status=DELETED&activity_code=4711Z&has_contact=phone'), 0);
    });

    test('q: word prefixes of the name, ignoring case, diacritics and legal-form words', async () => {
      assert.deepEqual(await names('q=gamma'), ['Gamma Software S.A.']);
      assert.deepEqual(await names('q=GAMMA%20S.A.'), ['Gamma Software S.A.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('gamma spółka akcyjna')}`), ['Gamma Software S.A.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('beta sp. z o.o.')}`), ['BETA IT SP. Z O.O.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('usługi kowal')}`), ['Jan Kowalski Usługi Transportowe']);
      assert.deepEqual(await names(`q=${encodeURIComponent('ALFA spolka z ograniczona odpowiedzialnoscia')}`), [
        'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      ]);
      assert.equal(await total('q=trans'), 2, 'TRANS and Transportowe');
      assert.equal(await total('q=ware'), 0, 'a word prefix, not any substring');
      assert.equal(await total('q=piekarnia'), 26);
      assert.equal(await total('q=piekarnia%20krakowska%2012'), 1);
      assert.equal(await total(`q=${encodeURIComponent('sp. z o.o.')}`), ACTIVE_TOTAL, 'only legal-form words: no name condition');
      await invalid(`q=${'a'.repeat(201)}`, 'q');
      await invalid('q=a%20b%20c%20d%20e%20f%20g%20h%20i', 'q');
    });

    test('injection strings are data: SQL and LIKE metacharacters match literally or not at all', async () => {
      for (const city of [
        "' OR '1'='1",
        '%',
        '_',
        '\\',
        '%%',
        "Kędzierzyn-Koźle'; DROP TABLE companies; --",
        'K_dzierzyn-Ko_le',
        'Kędzierzyn%',
      ]) {
        assert.equal(await total(`city=${encodeURIComponent(city)}`), 0, city);
      }
      assert.equal(await total(`q=${encodeURIComponent("o'hara")}`), 1, 'the apostrophe separates words like any punctuation');
      assert.equal(await total(`q=${encodeURIComponent('procent_100%')}`), 1);
      assert.equal(await total(`q=${encodeURIComponent('100%')}`), 1);
      assert.equal(await total(`q=${encodeURIComponent('%')}`), ACTIVE_TOTAL, 'no word at all: no name condition');
      assert.equal(await total(`q=${encodeURIComponent('_a')}`), 3, '`_` is a separator, not a wildcard: words starting with a');
      assert.equal(await total(`q=${encodeURIComponent("x' OR 1=1 --")}`), 0);
      await invalid(`legal_form=${encodeURIComponent("'; DROP TABLE companies; --")}`, 'legal_form');
      await invalid(`activity_prefix=${encodeURIComponent('6%')}`, 'activity_prefix');
      assert.equal(await total(`postal_code=${encodeURIComponent("00-95'")}`), 0);
      await invalid('city=lodz%00', 'city');
      await invalid('q=orlen%00', 'q');
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM companies`.execute(t.db.db);
      assert.equal(Number(rows[0]!.n), COMPANIES.length);
    });

    test('unknown parameters are ignored; a repeated parameter is 422; several errors are listed at once', async () => {
      assert.equal(await total('foo=bar&limit=5&per_page=3&sort=name'), ACTIVE_TOTAL);
      await invalid('city=lodz&city=krakow', 'city');
      const body = await invalid('status=x&has_contact=y&legal_form=z', 'status');
      assert.deepEqual(Object.keys(body.errors).sort(), ['has_contact', 'legal_form', 'status']);
      assert.match(body.message, / \(and 2 more errors\)$/);
      // A schema error (page, a repeated or too long parameter) and the value checks together.
      const mixed = await invalid(`page=0&city=${'x'.repeat(151)}&status=FOO&has_contact=x&city_=1`, 'page');
      assert.deepEqual(Object.keys(mixed.errors).sort(), ['city', 'has_contact', 'page', 'status']);
      assert.match(mixed.message, /^The city field must not be greater than 150 characters\. \(and 3 more errors\)$/);
      const repeated = await invalid('city=a&city=b&status=FOO', 'city');
      assert.deepEqual(Object.keys(repeated.errors).sort(), ['city', 'status']);
    });

    test('401 without a token; 402 on an empty wallet; exactly 1 credit per successful search and none for a 422', async () => {
      const anon = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search' });
      assert.equal(anon.statusCode, 401);
      assert.deepEqual(anon.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });

      const other = await createAccount(t);
      const balance = async () =>
        (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(other.master) })).json().data.balance as number;
      assert.equal(await balance(), 100);
      const first = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?city=lodz', headers: bearer(other.master) });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['x-credits-charged'], '1');
      assert.equal(await balance(), 99);
      const bad = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?status=nope', headers: bearer(other.master) });
      assert.equal(bad.statusCode, 422);
      assert.equal(await balance(), 99);
      const empty = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?page=9', headers: bearer(other.master) });
      assert.equal(empty.statusCode, 200, 'a page past the end is a successful search');
      assert.equal(await balance(), 98);

      const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', other.userRef).executeTakeFirstOrThrow();
      await applyLedgerEntry(t.db.db, { accountId: id, type: 'usage', amount: -98, description: 'drain' });
      const broke = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search', headers: bearer(other.master) });
      assert.equal(broke.statusCode, 402);
      assert.deepEqual(broke.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
      const ledger = await t.db.db
        .selectFrom('wallet_transactions')
        .select(['type', 'amount', 'description'])
        .where('account_id', '=', id)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        ledger.filter((l) => l.type === 'usage' && l.description === 'companies.search').map((l) => Number(l.amount)),
        [-1, -1],
      );
    });

    test('an API token may search too', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: auth, payload: { name: 'search token' } });
      const token = res.json().data.plaintext as string;
      const r = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?city=lodz', headers: bearer(token) });
      assert.equal(r.statusCode, 200);
      assert.equal(r.json().data.total, 3);
    });

    test('a later daily run is searchable by the next search, data_as_of its date', async () => {
      const added = lodzCompany(500, 'Omega Nowa Firma', '2026-11-01');
      await runDaily(t.db.db, { date: '2026-11-21', source: sourceOf([added]), sourceKey: 'file:search-test-2' });
      const d = await ok('city=lodz');
      assert.deepEqual(
        [d.results[0]!.name, d.total, (d as unknown as { data_as_of: string }).data_as_of],
        ['Omega Nowa Firma', 4, '2026-11-21'],
      );
    });
  });
}

describe('GET /companies/search while the index is being built', () => {
  test('a SQL search cut off by its statement timeout answers 503, not charged', async () => {
    const slow: CompanySearchEngine = {
      async search() {
        throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      },
      answerUnchecked: () => null,
      confirm: async () => null,
      start() {},
      async refresh() {},
      status: () => ({
        engine: 'sql',
        companies: null,
        bytes: null,
        buildMs: null,
        buildReadMs: null,
        builtAt: null,
        rebuilding: true,
        delta: null,
        dataAsOf: null,
        readAhead: 0,
      }),
      async stop() {},
    };
    const t = await createTestApp({ overrides: { companySearch: slow } });
    const account = await createAccount(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?status=ACTIVE', headers: bearer(account.master) });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { message: 'The search index is being built; this search took too long. Try again in a minute.' });
    const wallet = await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(account.master) });
    assert.equal(wallet.json().data.balance, 100);
  });
});
