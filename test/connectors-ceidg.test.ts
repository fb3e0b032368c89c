import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompanySnapshot } from '../src/registry/model.ts';
import { createCeidgSource, type CeidgSourceOptions } from '../src/registry/sources/ceidg/ceidg-source.ts';
import { mapCeidgEntry, pickCurrentEntry } from '../src/registry/sources/ceidg/ceidg-mapper.ts';
import { EntityNotFoundError, MalformedPayloadError, SourceConfigError, SourceUnavailableError } from '../src/registry/sources/errors.ts';
import { jsonFixtureReply, jsonReply, readFixtureJson, type FixtureServer, type Handler, withServer } from './helpers/fixture-server.ts';

const FIRMA = 'ceidg/v2-doc-example-firma-31F87519-wylacznie-w-formie-spolki-test-env.json';
const FIRMY = 'ceidg/v2-doc-example-firmy-nip-3563457932-test-env.json';
const ZMIANA = 'ceidg/v2-doc-example-zmiana-dataod-2021-09-01-test-env.json';
const RAPORTY = 'ceidg/v2-doc-example-raporty-test-env.json';
const SCHEMA = 'ceidg/ceidg-api-v3-openapi-schema.json';
const TOKEN = 'eyJ.test.token';
const FAST_RETRY = { retries: 2, backoffBaseMs: 5, backoffMaxMs: 20 };

type Obj = Record<string, unknown>;
const firmaEntry = (): Obj => (readFixtureJson(FIRMA) as { firma: Obj[] }).firma[0]!;
const firmyEntries = (): Obj[] => (readFixtureJson(FIRMY) as { firmy: Obj[] }).firmy;

function source(server: FixtureServer, extra: Partial<CeidgSourceOptions> = {}) {
  return createCeidgSource({
    baseUrl: `${server.url}/api/ceidg/v2/`,
    token: TOKEN,
    retry: FAST_RETRY,
    rateLimits: [],
    timeoutMs: 2_000,
    ...extra,
  });
}

async function collect(iterable: AsyncIterable<CompanySnapshot>): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) out.push(s);
  return out;
}

describe('CEIDG lookup', () => {
  test('by NIP: the bearer token is sent, the entry is mapped field by field', async () => {
    await withServer(
      (req) => (req.path === '/api/ceidg/v2/firma' && req.query.get('nip') === '2367852376' ? jsonFixtureReply(FIRMA) : { status: 204 }),
      async (server) => {
        const ceidg = source(server);
        const snapshot = await ceidg.lookup!({ type: 'NIP', value: '236-785-23-76' });
        await ceidg.close();
        assert.equal(server.requests[0]!.headers.authorization, `Bearer ${TOKEN}`);
        assert.deepEqual(snapshot, {
          identity: {
            identifiers: [
              { type: 'NIP', value: '2367852376' },
              { type: 'REGON9', value: '298837860' },
            ],
            company_type: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
            country_code: 'PL',
          },
          profiles: [
            {
              source: 'ceidg',
              name: 'Adam IntegracjaMGMF - Zmiana',
              status: 'WYLACZNIE_W_FORMIE_SPOLKI',
              legal_form: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
              address: {
                street: 'ul. Zwierzyniecka',
                building: '1',
                apartment: '',
                city: 'Białystok',
                postal_code: '15-333',
                voivodeship: 'PODLASKIE',
                country_code: 'PL',
              },
              units: [],
              contacts: [],
              activities: [
                { code: '3030Z', name: '', is_primary: true },
                { code: '3011Z', name: '', is_primary: false },
                { code: '3012Z', name: '', is_primary: false },
                { code: '3020Z', name: '', is_primary: false },
              ],
              dates: [{ type: 'activity_start', date: '2014-07-28' }],
              websites: [],
              vat_status: null,
              bank_accounts: [],
            },
          ],
          persons: [{ full_name: 'Adam IntegracjaMGMF - Zmiana', role: 'WŁAŚCICIEL' }],
        });
      },
    );
  });

  test('by REGON; nothing found is 204 (null); KRS is not a CEIDG key', async () => {
    await withServer(
      (req) => (req.query.get('regon') === '298837860' ? jsonFixtureReply(FIRMA) : { status: 204 }),
      async (server) => {
        const ceidg = source(server);
        assert.equal((await ceidg.lookup!({ type: 'REGON9', value: '298837860' }))!.profiles[0]!.status, 'WYLACZNIE_W_FORMIE_SPOLKI');
        assert.equal(await ceidg.lookup!({ type: 'NIP', value: '7740001454' }), null);
        assert.equal(await ceidg.lookup!({ type: 'KRS', value: '0000028860' }), null);
        await ceidg.close();
        assert.equal(server.requests.length, 2);
      },
    );
  });

  test('one owner, several entries: live entries win over deleted ones, then the latest start', () => {
    const [first, second] = firmyEntries();
    assert.equal(pickCurrentEntry([first!, second!]), first);
    const live = { ...second!, status: 'AKTYWNY' };
    assert.equal(pickCurrentEntry([first!, live]), live);
    const suspended = { ...first!, status: undefined, numerStatusu: 3 };
    assert.equal(pickCurrentEntry([second!, suspended]), suspended);
  });

  test('a v3 entry (PKD objects, PKD year, insolvency notices, extra places, contacts) is mapped; its fields exist in the v3 schema', () => {
    const schema = readFixtureJson(SCHEMA) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    const v3: Obj = {
      ...firmaEntry(),
      id: 'aa3e93f3-27d0-4e20-8e77-39ddf7c2f1f3',
      status: 'ZAWIESZONY',
      numerStatusu: 3,
      rokPkd: '2025',
      pkdGlowny: { kod: '62.10.B', nazwa: 'Pozostała działalność w zakresie programowania' },
      pkd: [
        { kod: '6210B', nazwa: 'Pozostała działalność w zakresie programowania' },
        { kod: '6290Z', nazwa: 'Pozostała działalność usługowa w zakresie technologii informatycznych i komputerowych' },
      ],
      adresyDzialalnosciDodatkowe: [
        { ulica: 'ul. Lipowa', budynek: '3', lokal: '4', miasto: 'Białystok', kod: '15-424', wojewodztwo: 'PODLASKIE', kraj: 'PL' },
      ],
      telefon: '+48 85 000 00 00',
      email: 'Biuro@Example.PL',
      www: 'WWW.EXAMPLE.PL',
      dataZawieszenia: '2026-01-05',
      upadlosci: [{ rodzajInformacji: 'OGŁOSZENIE UPADŁOŚCI', dataOrzeczenia: '2026-02-10' }],
    };
    const allowed = new Set(Object.keys(schema.components.schemas.FirmaCeidg!.properties));
    assert.deepEqual(
      Object.keys(v3).filter((k) => !allowed.has(k)),
      [],
    );
    for (const key of Object.keys(v3.adresyDzialalnosciDodatkowe instanceof Array ? (v3.adresyDzialalnosciDodatkowe[0] as Obj) : {})) {
      assert.ok(key in schema.components.schemas.Adres!.properties, key);
    }
    const profile = mapCeidgEntry(v3, 'x').profiles[0]!;
    assert.equal(profile.status, 'ZAWIESZONY');
    assert.deepEqual(profile.activities, [
      { code: '6210B', name: 'Pozostała działalność w zakresie programowania', is_primary: true },
      { code: '6290Z', name: 'Pozostała działalność usługowa w zakresie technologii informatycznych i komputerowych', is_primary: false },
    ]);
    assert.deepEqual(profile.contacts, [
      { type: 'phone', value: '+48 85 000 00 00' },
      { type: 'email', value: 'biuro@example.pl' },
    ]);
    assert.deepEqual(profile.websites, ['www.example.pl']);
    assert.deepEqual(profile.units, [
      {
        identifier: 'ul. Lipowa 3/4, 15-424 Białystok',
        name: '',
        address: {
          street: 'ul. Lipowa',
          building: '3',
          apartment: '4',
          city: 'Białystok',
          postal_code: '15-424',
          voivodeship: 'PODLASKIE',
          country_code: 'PL',
        },
        dates: [],
      },
    ]);
    assert.deepEqual(profile.dates, [
      { type: 'activity_start', date: '2014-07-28' },
      { type: 'suspension', date: '2026-01-05' },
      { type: 'bankruptcy_start', date: '2026-02-10' },
    ]);
  });

  test('an entry without any valid owner identifier cannot be matched and is rejected', () => {
    assert.throws(
      () => mapCeidgEntry({ ...firmaEntry(), wlasciciel: { imie: 'A', nazwisko: 'B', nip: '123' } }, 'x'),
      MalformedPayloadError,
    );
    assert.throws(() => createCeidgSource({ baseUrl: 'https://dane.biznes.gov.pl/api/ceidg/v2', token: '' }), SourceConfigError);
  });
});

describe('CEIDG daily run', () => {
  const changed = (readFixtureJson(ZMIANA) as { identyfikatoryWpisow: string[] }).identyfikatoryWpisow.map((id) => id.toUpperCase());
  const [idA, idB, idC] = [changed[0]!, changed[30]!, changed[60]!];

  function ceidgApi(): Handler {
    return (req) => {
      if (req.path === '/api/ceidg/v2/zmiana') return jsonFixtureReply(ZMIANA);
      if (req.path === '/api/ceidg/v2/firmy' && req.query.get('nip') === '3563457932') return jsonFixtureReply(FIRMY);
      if (req.path === '/api/ceidg/v2/firma') {
        const ids = (req.query.get('ids') ?? '').split(',');
        // One entry's record is cut off: the whole batch is unreadable until asked one by one.
        if (ids.includes(idB)) return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"firma": [{"id": "' };
        const firma: Obj[] = [];
        // Real records under the ids of the change feed (the documentation's examples have other ids).
        if (ids.includes(idA)) firma.push({ ...firmaEntry(), id: idA });
        if (ids.includes(idC)) firma.push({ ...firmyEntries()[0]!, id: idC });
        return jsonReply({ firma, properties: {} });
      }
      return { status: 404 };
    };
  }

  test("change feed → /firma?ids= batches → snapshots; deleted entries checked against the owner's other entries", async () => {
    await withServer(ceidgApi(), async (server) => {
      const errors: Array<[string, string]> = [];
      const ceidg = source(server, { onEntityError: (id, e) => errors.push([id, e.constructor.name]) });
      const snapshots = await collect(ceidg.snapshotsForDate('2021-09-01'));
      await ceidg.close();
      const zmiana = server.requests.find((r) => r.path.endsWith('/zmiana'))!;
      assert.equal(zmiana.query.get('dataod'), '2021-09-01 00:00:00');
      assert.equal(zmiana.query.get('datado'), '2021-09-01 23:59:59');
      assert.equal(server.requests.filter((r) => r.path.endsWith('/zmiana')).length, 1, 'count 100 fits one page');
      const batches = server.requests.filter((r) => r.path.endsWith('/firma') && (r.query.get('ids') ?? '').includes(','));
      assert.equal(batches.length, 4);
      assert.deepEqual(batches[0]!.query.get('ids')!.split(','), changed.slice(0, 25));
      assert.deepEqual(
        snapshots.map((s) => [s.profiles[0]!.name, s.profiles[0]!.status]),
        [
          ['Adam IntegracjaMGMF - Zmiana', 'WYLACZNIE_W_FORMIE_SPOLKI'],
          ['Adam IntegracjaMGMF', 'WYKRESLONY'],
        ],
      );
      assert.deepEqual(snapshots[1]!.identity.identifiers, [
        { type: 'NIP', value: '3563457932' },
        { type: 'REGON9', value: '618155359' },
      ]);
      assert.ok(server.requests.some((r) => r.path.endsWith('/firmy') && r.query.get('nip') === '3563457932'));
      assert.deepEqual(
        errors.find(([id]) => id === idB),
        [idB, MalformedPayloadError.name],
      );
      assert.equal(errors.length, 98);
      assert.ok(errors.filter(([id]) => id !== idB).every(([, name]) => name === EntityNotFoundError.name));
    });
  });

  test('the change feed is paged until count is reached', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await withServer(
      (req) => {
        if (req.path.endsWith('/zmiana')) {
          const page = Number(req.query.get('page'));
          const limit = Number(req.query.get('limit'));
          return jsonReply({ identyfikatoryWpisow: ids.slice(page * limit, (page + 1) * limit), count: ids.length, links: {} });
        }
        return { status: 404 };
      },
      async (server) => {
        const ceidg = source(server);
        const changedIds = await ceidg.changedEntryIds('2026-09-22');
        await ceidg.close();
        assert.equal(changedIds.length, 250);
        assert.deepEqual(
          server.requests.map((r) => r.query.get('page')),
          ['0', '1', '2'],
        );
      },
    );
  });

  test('a rejected token makes the run fail with an auth SourceUnavailableError', async () => {
    await withServer(
      () => ({ status: 401 }),
      async (server) => {
        const ceidg = source(server);
        await assert.rejects(
          collect(ceidg.snapshotsForDate('2026-09-22')),
          (e: unknown) => e instanceof SourceUnavailableError && e.reason === 'auth' && e.source === 'ceidg',
        );
        await ceidg.close();
      },
    );
  });

  test('429 is retried after Retry-After; a 500 that persists fails the run', async () => {
    let limited = 1;
    await withServer(
      (req) => {
        if (req.path.endsWith('/zmiana') && limited-- > 0) return { status: 429, headers: { 'retry-after': '0' } };
        if (req.path.endsWith('/zmiana')) return { status: 204 };
        return { status: 404 };
      },
      async (server) => {
        const ceidg = source(server);
        assert.deepEqual(await collect(ceidg.snapshotsForDate('2026-09-22')), []);
        await ceidg.close();
        assert.equal(server.requests.length, 2);
      },
    );
    await withServer(
      () => ({ status: 500 }),
      async (server) => {
        const ceidg = source(server);
        await assert.rejects(
          collect(ceidg.snapshotsForDate('2026-09-22')),
          (e: unknown) => e instanceof SourceUnavailableError && e.status === 500,
        );
        await ceidg.close();
        assert.equal(server.requests.length, FAST_RETRY.retries + 1);
      },
    );
  });

  test('the list of ready daily reports', async () => {
    await withServer(
      (req) => (req.path.endsWith('/raporty') ? jsonFixtureReply(RAPORTY) : { status: 404 }),
      async (server) => {
        const ceidg = source(server);
        const reports = await ceidg.listReports('2022-01-25', '2022-01-31');
        await ceidg.close();
        assert.equal(reports.length, 2);
        assert.equal(reports[0]!.name, 'Złożone wnioski - województwo zachodniopomorskie');
        assert.equal(reports[0]!.format, '.csv');
        assert.equal(reports[0]!.createdAt, '2022-01-31 03:00:09');
        assert.match(reports[1]!.id, /^CfDJ8PLxGKJmLrdBliOdQ1byllB-2PARBot/);
      },
    );
  });
});
