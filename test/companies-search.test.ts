import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql } from 'kysely';
import { nipCheckDigit, regon9CheckDigit } from '../src/lib/identifiers.ts';
import { runDaily } from '../src/registry/daily.ts';
import type { CompanySnapshot, Profile } from '../src/registry/model.ts';
import type { RegistrySource } from '../src/registry/sources/source.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * GET /companies/search over a small registry whose every answer is known, run twice: once with
 * the in-memory index and once with SQL only, so both engines are held to the same answers.
 */

export function nip(n: number): string {
  for (let i = n; ; i++) {
    const first9 = String(100_000_000 + i).slice(-9);
    const check = nipCheckDigit(first9);
    if (check !== null && first9[0] !== '0') return `${first9}${check}`;
  }
}

export function regon(n: number): string {
  const first8 = String(20_000_000 + n).slice(-8);
  return `${first8}${regon9CheckDigit(first8)}`;
}

interface Spec {
  ids: { NIP?: string; REGON9?: string; KRS?: string };
  name: string;
  legal: string;
  city: string;
  postal: string;
  voivodeship: string;
  codes: string[];
  start?: string;
  contacts?: { type: 'phone' | 'email' | 'fax'; value: string }[];
  extraDates?: { type: 'suspension' | 'closure'; date: string }[];
}

function snapshotOf(s: Spec): CompanySnapshot {
  const profile: Profile = {
    source: 'file', name: s.name, status: 'aktywny', legal_form: s.legal,
    address: { street: 'Prosta', building: '1', apartment: '', city: s.city, postal_code: s.postal, voivodeship: s.voivodeship, country_code: 'PL' },
    units: [], contacts: s.contacts ?? [],
    activities: s.codes.map((code, i) => ({ code, name: `Activity ${code}`, is_primary: i === 0 })),
    dates: [...(s.start ? [{ type: 'activity_start' as const, date: s.start }] : []), ...(s.extraDates ?? [])],
    websites: [], vat_status: null, bank_accounts: [],
  };
  return {
    identity: { identifiers: Object.entries(s.ids).map(([type, value]) => ({ type: type as 'NIP', value })), company_type: s.legal, country_code: 'PL' },
    profiles: [profile],
    persons: [],
  };
}

const phone = { type: 'phone' as const, value: '+48 42 000 00 01' };
const email = { type: 'email' as const, value: 'biuro@example.pl' };
const fax = { type: 'fax' as const, value: '+48 42 000 00 02' };

export const ALFA = nip(1);
export const BETA = nip(2);
export const GAMMA = nip(3);
export const KOWALSKI = nip(4);
export const DELTA = nip(5);
export const EPSILON = nip(6);
export const ETA = nip(8);
export const THETA_KRS = '0000123456';
export const IOTA_REGON = regon(9);
export const KAPPA = nip(10);

export const COMPANIES: Spec[] = [
  { ids: { NIP: ALFA, KRS: '0000000101' }, name: 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Łódź', postal: '90-001', voivodeship: 'łódzkie', codes: ['49.41.Z', '52.29.C'], start: '2020-05-01', contacts: [phone, email] },
  { ids: { NIP: BETA }, name: 'BETA IT SP. Z O.O.', legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Warszawa', postal: '00-950', voivodeship: 'mazowieckie', codes: ['6201Z', '6202Z'], start: '2021-03-15', contacts: [email] },
  { ids: { NIP: GAMMA }, name: 'Gamma Software S.A.', legal: 'SPÓŁKA AKCYJNA', city: 'Kraków', postal: '30-001', voivodeship: 'małopolskie', codes: ['6201Z'], start: '2019-01-10', contacts: [phone, fax] },
  { ids: { NIP: KOWALSKI }, name: 'Jan Kowalski Usługi Transportowe', legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ', city: 'ŁÓDŹ', postal: '90002', voivodeship: 'ŁÓDZKIE', codes: ['4941Z'], start: '2021-03-15', contacts: [phone] },
  { ids: { NIP: DELTA }, name: 'Delta Budownictwo sp. z o.o.', legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Gdańsk', postal: '80-001', voivodeship: 'pomorskie', codes: ['4120Z'], start: '2018-06-01', contacts: [phone], extraDates: [{ type: 'suspension', date: '2024-01-01' }] },
  { ids: { NIP: EPSILON }, name: 'Epsilon Handel', legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ', city: 'Warszawa', postal: '00-951', voivodeship: 'mazowieckie', codes: ['4711Z'], start: '2015-02-02', contacts: [email], extraDates: [{ type: 'closure', date: '2023-05-05' }] },
  { ids: { NIP: nip(7) }, name: 'Fundacja Zeta', legal: 'FUNDACJA', city: 'Poznań', postal: '60-001', voivodeship: 'wielkopolskie', codes: ['9499Z'] },
  { ids: { NIP: ETA }, name: 'Eta Consulting sp. z o.o.', legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'LODZ', postal: '90-003', voivodeship: 'Lodzkie', codes: ['7022Z'], start: '2022-01-01', contacts: [fax] },
  { ids: { KRS: THETA_KRS }, name: 'Stowarzyszenie Theta', legal: 'STOWARZYSZENIE', city: 'Wrocław', postal: '50-001', voivodeship: 'dolnośląskie', codes: ['9499Z'], start: '2010-10-10' },
  { ids: { REGON9: IOTA_REGON }, name: 'Piekarnia Iota Anna Nowak', legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ', city: 'Zielona Góra', postal: '65-001', voivodeship: 'lubuskie', codes: ['1071Z'], start: '2021-03-15', contacts: [phone, email] },
  { ids: { NIP: KAPPA }, name: 'PROCENT_100% O\'HARA \\ SPÓŁKA JAWNA', legal: 'SPÓŁKA JAWNA', city: 'Kędzierzyn-Koźle', postal: '47-200', voivodeship: 'opolskie', codes: ['2562Z'], start: '2017-07-07', contacts: [email] },
  // 25 bakeries in Kraków for paging: starts 2000-01-01 .. 2000-01-25.
  ...Array.from({ length: 25 }, (_, i): Spec => ({
    ids: { NIP: nip(100 + i * 3) }, name: `Piekarnia Krakowska ${i + 1}`, legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ', city: 'Kraków', postal: '31-000',
    voivodeship: 'małopolskie', codes: ['5610A'], start: `2000-01-${String(i + 1).padStart(2, '0')}`, contacts: i % 2 === 0 ? [phone] : [],
  })),
];

export function sourceOf(specs: Spec[]): RegistrySource {
  return { name: 'file', async *snapshotsForDate() { for (const s of specs) yield snapshotOf(s); } };
}

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
      t = await createTestApp({ db, extras: { companySearch: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
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
      return res.json().data as { total: number; per_page: number; current_page: number; last_page: number; results: { name: string; identifiers: { type: string; value: string }[]; status: string; activity_start: string | null }[] };
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
          total: 1, per_page: 20, current_page: 1, last_page: 1,
          results: [{
            identifiers: [{ type: 'NIP', value: ALFA }, { type: 'KRS', value: '0000000101' }],
            name: 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
            city: 'Łódź', voivodeship: 'łódzkie', activity_start: '2020-05-01', activity_main: '4941Z', status: 'ACTIVE',
            contacts: [{ type: 'email', value: 'biuro@example.pl' }, { type: 'phone', value: '+48 42 000 00 01' }],
          }],
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

    test('pagination: page 2 holds the rest; a page past the end is empty with 200; bounds are 422', async () => {
      const p2 = await ok('page=2');
      assert.equal(p2.current_page, 2);
      assert.equal(p2.results.length, ACTIVE_TOTAL - 20);
      const all = [...(await ok('page=1')).results, ...p2.results].map((r) => r.identifiers[0]!.value);
      assert.equal(new Set(all).size, ACTIVE_TOTAL, 'pages neither overlap nor skip');
      const past = await ok('page=7');
      assert.deepEqual({ ...past, results: past.results.length }, { total: ACTIVE_TOTAL, per_page: 20, current_page: 7, last_page: 2, results: 0 });
      await invalid('page=0', 'page');
      await invalid('page=501', 'page');
      await invalid('page=abc', 'page');
      await invalid('page=1.5', 'page');
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
      assert.deepEqual(await names('activity_code=5229C'), ['ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ'], 'a secondary activity matches too');
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

    test('postal_code: with or without the dash', async () => {
      assert.equal(await total('postal_code=90-001'), 1);
      assert.equal(await total('postal_code=90001'), 1);
      assert.equal(await total('postal_code=90-002'), 1, 'stored without the dash, asked with it');
      assert.equal(await total('postal_code=31-000'), 25);
      await invalid('postal_code=9000', 'postal_code');
      await invalid('postal_code=abcde', 'postal_code');
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
      assert.deepEqual(await names('city=lodz&has_contact=phone&activity_prefix=49'), ['Jan Kowalski Usługi Transportowe', 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ']);
      assert.equal(await total('voivodeship=lodzkie&legal_form=sp-z-oo&activity_start_from=2021-01-01'), 1);
      assert.equal(await total('city=krakow&has_contact=phone&activity_code=5610A&activity_start_to=2000-01-10'), 5);
      assert.equal(await total('city=krakow&postal_code=31-000&legal_form=jdg&voivodeship=malopolskie&activity_prefix=56&has_contact=phone&status=ACTIVE&open_from=2000-01-01&activity_start_to=2000-12-31&q=piekarnia'), 13);
      assert.equal(await total('city=warszawa&status=DELETED&activity_code=4711Z&has_contact=email'), 1);
      assert.equal(await total('city=warszawa&status=DELETED&activity_code=4711Z&has_contact=phone'), 0);
    });

    test('q: word prefixes of the name, ignoring case, diacritics and legal-form words', async () => {
      assert.deepEqual(await names('q=gamma'), ['Gamma Software S.A.']);
      assert.deepEqual(await names('q=GAMMA%20S.A.'), ['Gamma Software S.A.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('gamma spółka akcyjna')}`), ['Gamma Software S.A.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('beta sp. z o.o.')}`), ['BETA IT SP. Z O.O.']);
      assert.deepEqual(await names(`q=${encodeURIComponent('usługi kowal')}`), ['Jan Kowalski Usługi Transportowe']);
      assert.deepEqual(await names(`q=${encodeURIComponent('ALFA spolka z ograniczona odpowiedzialnoscia')}`), ['ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ']);
      assert.equal(await total('q=trans'), 2, 'TRANS and Transportowe');
      assert.equal(await total('q=ware'), 0, 'a word prefix, not any substring');
      assert.equal(await total('q=piekarnia'), 26);
      assert.equal(await total('q=piekarnia%20krakowska%2012'), 1);
      assert.equal(await total(`q=${encodeURIComponent('sp. z o.o.')}`), ACTIVE_TOTAL, 'only legal-form words: no name condition');
      await invalid(`q=${'a'.repeat(201)}`, 'q');
      await invalid('q=a%20b%20c%20d%20e%20f%20g%20h%20i', 'q');
    });

    test('injection strings are data: SQL and LIKE metacharacters match literally or not at all', async () => {
      for (const city of ["' OR '1'='1", '%', '_', '\\', '%%', "Kędzierzyn-Koźle'; DROP TABLE companies; --", 'K_dzierzyn-Ko_le', 'Kędzierzyn%']) {
        assert.equal(await total(`city=${encodeURIComponent(city)}`), 0, city);
      }
      assert.equal(await total(`q=${encodeURIComponent("o'hara")}`), 1, "the apostrophe separates words like any punctuation");
      assert.equal(await total(`q=${encodeURIComponent('procent_100%')}`), 1);
      assert.equal(await total(`q=${encodeURIComponent('100%')}`), 1);
      assert.equal(await total(`q=${encodeURIComponent('%')}`), ACTIVE_TOTAL, 'no word at all: no name condition');
      assert.equal(await total(`q=${encodeURIComponent('_a')}`), 3, '`_` is a separator, not a wildcard: words starting with a');
      assert.equal(await total(`q=${encodeURIComponent("x' OR 1=1 --")}`), 0);
      await invalid(`legal_form=${encodeURIComponent("'; DROP TABLE companies; --")}`, 'legal_form');
      await invalid(`activity_prefix=${encodeURIComponent('6%')}`, 'activity_prefix');
      await invalid(`postal_code=${encodeURIComponent("00-95'")}`, 'postal_code');
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM companies`.execute(t.db.db);
      assert.equal(Number(rows[0]!.n), COMPANIES.length);
    });

    test('unknown parameters are ignored; a repeated parameter is 422; several errors are listed at once', async () => {
      assert.equal(await total('foo=bar&limit=5&per_page=3&sort=name'), ACTIVE_TOTAL);
      await invalid('city=lodz&city=krakow', 'city');
      const body = await invalid('status=x&has_contact=y&postal_code=z', 'status');
      assert.deepEqual(Object.keys(body.errors).sort(), ['has_contact', 'postal_code', 'status']);
      assert.match(body.message, / \(and 2 more errors\)$/);
    });

    test('401 without a token; 402 on an empty wallet; exactly 1 credit per successful search and none for a 422', async () => {
      const anon = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search' });
      assert.equal(anon.statusCode, 401);
      assert.deepEqual(anon.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });

      const other = await createAccount(t);
      const balance = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(other.master) })).json().data.balance as number;
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
      const ledger = await t.db.db.selectFrom('wallet_transactions').select(['type', 'amount', 'description']).where('account_id', '=', id).orderBy('id').execute();
      assert.deepEqual(ledger.filter((l) => l.type === 'usage' && l.description === 'companies.search').map((l) => Number(l.amount)), [-1, -1]);
    });

    test('an API token may search too', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: auth, payload: { name: 'search token' } });
      const token = res.json().data.plaintext as string;
      const r = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?city=lodz', headers: bearer(token) });
      assert.equal(r.statusCode, 200);
      assert.equal(r.json().data.total, 3);
    });

    test('a later daily run is searchable once the index has caught up', async () => {
      const added: Spec = { ids: { NIP: nip(500) }, name: 'Omega Nowa Firma', legal: 'SPÓŁKA AKCYJNA', city: 'Łódź', postal: '90-009', voivodeship: 'łódzkie', codes: ['6201Z'], start: '2026-11-01' };
      await runDaily(t.db.db, { date: '2026-11-21', source: sourceOf([added]), sourceKey: 'file:search-test-2' });
      await engine.refresh();
      assert.deepEqual((await ok('city=lodz')).results[0]!.name, 'Omega Nowa Firma');
      assert.equal(await total('city=lodz'), 4);
    });
  });
}
