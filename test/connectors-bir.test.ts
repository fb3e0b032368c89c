import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompanySnapshot } from '../src/registry/model.ts';
import {
  BIR_TEST_KEY,
  BIR_TEST_URL,
  createBirSource,
  type BirSource,
  type BirSourceOptions,
} from '../src/registry/sources/bir/bir-source.ts';
import {
  BirServiceError,
  birStatus,
  isActiveByUwaga4,
  mapLegalEntity,
  mapNaturalPerson,
  readActivityDates,
  readLocalUnit,
  readPkdRows,
  readSearchHits,
  SUMMARY_REPORTS,
} from '../src/registry/sources/bir/bir-reports.ts';
import { parseBirRows, type BirRow } from '../src/registry/sources/bir/bir-soap.ts';
import {
  EntityNotFoundError,
  MalformedPayloadError,
  SourceConfigError,
  SourceDateOutOfRangeError,
  SourceUnavailableError,
} from '../src/registry/sources/errors.ts';
import {
  birEmptyReply,
  birGetValueReply,
  birInnerFixtureReply,
  birInnerReply,
  birMultipartReply,
  parseSoapCall,
  readFixtureText,
  soapXmlReply,
  splitOfficialEnvelopes,
  startFixtureServer,
  type FixtureServer,
  type Reply,
} from './helpers/fixture-server.ts';

const KEY = 'testkey0123456789abc';
const SID = 'bzfcw9r4595x2gx8t86x'; // the session id inside bir1-test-Zaloguj-response
const FAST_RETRY = { retries: 2, backoffBaseMs: 5, backoffMaxMs: 20 };

const OFFICIAL_NOT_FOUND = splitOfficialEnvelopes('bir/gus-official-BIR11-DanePobierzPelnyRaport-KomunikatyOBledach.xml')[0]!;
const OFFICIAL_NO_SUMMARY = splitOfficialEnvelopes('bir/gus-official-BIR11-RaportyZbiorcze-KomunikatyOBledach.xml')[0]!;
const OFFICIAL_SEARCH_NOT_FOUND = splitOfficialEnvelopes('bir/gus-official-BIR11-DaneSzukajPodmioty-KomunikatyOBledach.xml')[0]!;

interface BirMock {
  search?: Record<string, Reply>;
  report?: Record<string, Reply | (() => Reply)>;
  summary?: Record<string, Reply>;
  getValue?: Record<string, string>;
  login?: () => Reply;
  /** Called before routing; may answer instead (e.g. a 500). */
  intercept?: (method: string, params: Record<string, string>) => Reply | undefined;
}

/**
 * A GUS BIR stand-in: routes by wsa:Action and parameters, issues the recorded session id,
 * and, like the real service, answers data calls without a valid session with an empty result.
 */
class BirServer {
  server!: FixtureServer;
  validSids = new Set<string>();
  calls: Array<{ method: string; params: Record<string, string>; sid: string | undefined }> = [];
  constructor(public mock: BirMock) {}

  async start(): Promise<this> {
    this.server = await startFixtureServer((req) => {
      const call = parseSoapCall(req);
      this.calls.push({ method: call.method, params: call.params, sid: call.sid });
      const intercepted = this.mock.intercept?.(call.method, call.params);
      if (intercepted) return intercepted;
      if (call.method === 'Zaloguj') {
        if (call.params.pKluczUzytkownika !== KEY)
          return birMultipartReply('bir/bir11-test-Zaloguj-invalid-key-empty-result.multipart.txt');
        this.validSids.add(SID);
        return this.mock.login?.() ?? birMultipartReply('bir/bir1-test-Zaloguj-response.multipart.txt');
      }
      const sessionOk = call.sid !== undefined && this.validSids.has(call.sid);
      if (call.method === 'GetValue') {
        const name = call.params.pNazwaParametru!;
        if (name === 'StatusSesji') return birGetValueReply(sessionOk ? '1' : '0');
        return birGetValueReply(this.mock.getValue?.[name] ?? (name === 'StatusUslugi' ? '1' : ''));
      }
      if (call.method === 'Wyloguj') return birEmptyReply('Wyloguj');
      if (!sessionOk) {
        return call.method === 'DaneSzukajPodmioty'
          ? birMultipartReply('bir/bir11-prod-DaneSzukajPodmioty-nip-9540007714-empty-result.multipart.txt')
          : birEmptyReply(call.method);
      }
      if (call.method === 'DaneSzukajPodmioty') {
        const key = Object.entries(call.params)
          .map(([k, v]) => `${k}=${v}`)
          .join('&');
        return this.mock.search?.[key] ?? soapXmlReply(OFFICIAL_SEARCH_NOT_FOUND.envelope!);
      }
      if (call.method === 'DanePobierzPelnyRaport') {
        const route = this.mock.report?.[`${call.params.pRegon}|${call.params.pNazwaRaportu}`];
        return (typeof route === 'function' ? route() : route) ?? soapXmlReply(OFFICIAL_NOT_FOUND.envelope!);
      }
      if (call.method === 'DanePobierzRaportZbiorczy') {
        return (
          this.mock.summary?.[`${call.params.pDataRaportu}|${call.params.pNazwaRaportu}`] ?? soapXmlReply(OFFICIAL_NO_SUMMARY.envelope!)
        );
      }
      return { status: 400, body: `unknown action ${call.action}` };
    });
    return this;
  }

  get endpoint(): string {
    return `${this.server.url}/wsBIR/UslugaBIRzewnPubl.svc`;
  }

  source(extra: Partial<BirSourceOptions> = {}): BirSource {
    return createBirSource({ baseUrl: this.endpoint, apiKey: KEY, retry: FAST_RETRY, rateLimits: [], timeoutMs: 2_000, ...extra });
  }

  methods(): string[] {
    return this.calls.map((c) => (c.method === 'GetValue' ? `GetValue:${c.params.pNazwaParametru}` : c.method));
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

const multipart = (file: string): Reply => birMultipartReply(`bir/${file}`);
const inner = (method: string, file: string): Reply => birInnerFixtureReply(method, `bir/${file}`);
const rowsOf = (file: string): BirRow[] => parseBirRows(readFixtureText(`bir/${file}`));

async function collect(iterable: AsyncIterable<CompanySnapshot>): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) out.push(s);
  return out;
}

const LEGAL_MOCK: BirMock = {
  search: {
    'Nip=5170359458': multipart('bir1-test-DaneSzukaj-nip-5170359458.multipart.txt'),
    'Krs=0000163893': inner('DaneSzukajPodmioty', 'bir12-test-2026-DaneSzukajPodmioty-krs-0000163893-spzoo-inner.xml'),
    'Krs=0000040289': inner('DaneSzukajPodmioty', 'bir12-test-2026-DaneSzukajPodmioty-krs-0000040289-sa-w-upadlosci-ukladowej-inner.xml'),
    'Krs=0000028301': inner('DaneSzukajPodmioty', 'bir12-test-2026-DaneSzukajPodmioty-krs-0000028301-spzoo-inner.xml'),
    'Krs=9999999999': inner('DaneSzukajPodmioty', 'bir12-test-2026-DaneSzukajPodmioty-krs-9999999999-error4-not-found-inner.xml'),
    'Nip=7183649047': multipart('bir11-prod-DaneSzukajPodmioty-nip-7183649047-error4-not-found.multipart.txt'),
    'Nip=5790004488': multipart('bir11-prod-DaneSzukajPodmioty-nip-5790004488-typ-F-silos-1.multipart.txt'),
    'Nip=1234': inner('DaneSzukajPodmioty', 'bir11-inner-DaneSzukajPodmioty-error4-nip-1234.xml'),
    'Regon=01034470800689': multipart('bir1-test-DaneSzukaj-regon-01034470800689.multipart.txt'),
  },
  report: {
    // Recorded against BIR1 (report names of that time); served for today's BIR1.2 names.
    '18085317700000|BIR12OsPrawna': multipart('bir1-test-DanePobierzPelnyRaport-PublDaneRaportPrawna-18085317700000.multipart.txt'),
    '18085317700000|BIR12OsPrawnaPkd': multipart(
      'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnosciPrawnej-18085317700000.multipart.txt',
    ),
    '430036025|BIR12OsPrawna': inner('DanePobierzPelnyRaport', 'bir12-test-2026-BIR12OsPrawna-430036025-spzoo-inner.xml'),
    '430036025|BIR12OsPrawnaPkd': inner('DanePobierzPelnyRaport', 'bir12-test-2026-BIR12OsPrawnaPkd-430036025-spzoo-inner.xml'),
    '276566762|BIR12OsPrawna': inner(
      'DanePobierzPelnyRaport',
      'bir12-test-2026-BIR12OsPrawna-276566762-sa-w-upadlosci-ukladowej-inner.xml',
    ),
    '276566762|BIR12OsPrawnaPkd': inner(
      'DanePobierzPelnyRaport',
      'bir12-test-2026-BIR12OsPrawnaPkd-276566762-sa-w-upadlosci-ukladowej-inner.xml',
    ),
    '291218756|BIR12OsPrawna': inner('DanePobierzPelnyRaport', 'bir12-test-2026-BIR12OsPrawna-291218756-spzoo-inner.xml'),
    '291218756|BIR12OsPrawnaPkd': inner('DanePobierzPelnyRaport', 'bir12-test-2026-BIR12OsPrawnaPkd-291218756-spzoo-inner.xml'),
    '010001345|BIR11OsPrawna': multipart('bir11-prod-DanePobierzPelnyRaport-BIR11OsPrawna-010001345-sa-pzu.multipart.txt'),
    '272051357|BIR11OsPrawna': multipart('bir11-prod-DanePobierzPelnyRaport-BIR11OsPrawna-272051357-spolka-jawna-skreslona.multipart.txt'),
    '810528352|BIR11OsPrawna': multipart(
      'bir11-prod-DanePobierzPelnyRaport-BIR11OsPrawna-810528352-error4-wrong-report-for-typ-F.multipart.txt',
    ),
    '01034470800689|BIR11JednLokalnaOsPrawnej': multipart(
      'bir1-test-DanePobierzPelnyRaport-PublDaneRaportLokalnaPrawnej-01034470800689.multipart.txt',
    ),
    '01034470800689|BIR11JednLokalnaOsPrawnejPkd': multipart(
      'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnosciPrawnej-01034470800689.multipart.txt',
    ),
    '000001554|BIR11OsPrawna': inner('DanePobierzPelnyRaport', 'bir11-inner-BIR11OsPrawna-000001554-uczelnia-liczbaJednLokalnych-2.xml'),
  },
};

describe('BIR session and protocol', () => {
  let bir: BirServer;
  before(async () => {
    bir = await new BirServer(LEGAL_MOCK).start();
  });
  after(() => bir.close());

  test('logs in once, then sends SOAP 1.2 with WS-Addressing and the session id as the sid header', async () => {
    const source = bir.source();
    await source.lookup!({ type: 'NIP', value: '5170359458' });
    const [login, search] = bir.server.requests;
    assert.equal(bir.calls[0]!.method, 'Zaloguj');
    assert.equal(bir.calls[0]!.params.pKluczUzytkownika, KEY);
    assert.equal(login!.headers.sid, undefined);
    assert.match(String(login!.headers['content-type']), /^application\/soap\+xml; charset=utf-8/);
    assert.match(search!.body, new RegExp(`<wsa:To>${bir.endpoint}</wsa:To>`));
    assert.match(search!.body, /<wsa:Action>http:\/\/CIS\/BIR\/PUBL\/2014\/07\/IUslugaBIRzewnPubl\/DaneSzukajPodmioty<\/wsa:Action>/);
    assert.match(search!.body, /<dat:Nip>5170359458<\/dat:Nip>/);
    assert.equal(search!.headers.sid, SID);
    assert.equal(source.client.sessionId, SID);
    await source.close();
    assert.equal(bir.calls.at(-1)!.method, 'Wyloguj');
  });

  test('an empty ZalogujResult (wrong key) is an auth-level SourceUnavailableError', async () => {
    const source = bir.source({ apiKey: 'wrong-key-0000000000' });
    await assert.rejects(source.lookup!({ type: 'NIP', value: '5170359458' }), (error: unknown) => {
      assert.ok(error instanceof SourceUnavailableError);
      assert.equal(error.source, 'bir');
      assert.equal(error.reason, 'auth');
      return true;
    });
    await source.close();
  });

  test('session expiry: the empty result is diagnosed, Zaloguj runs again and the call is repeated', async () => {
    const source = bir.source();
    await source.lookup!({ type: 'NIP', value: '7183649047' });
    bir.validSids.clear(); // GUS dropped the session (60 minutes, 03:20 recycle)
    bir.calls = [];
    const snapshot = await source.lookup!({ type: 'NIP', value: '5170359458' });
    assert.deepEqual(bir.methods().slice(0, 5), [
      'DaneSzukajPodmioty',
      'GetValue:StatusSesji',
      'Zaloguj',
      'DaneSzukajPodmioty',
      'DanePobierzPelnyRaport',
    ]);
    assert.equal(snapshot!.profiles[0]!.name, 'ASSECO SYSTEMS SPÓŁKA AKCYJNA');
    await source.close();
  });

  test('a session older than the limit is renewed before the call', async () => {
    let now = Date.parse('2026-09-22T08:00:00Z');
    const source = bir.source({ clock: { now: () => new Date(now) }, sessionMaxAgeMs: 55 * 60_000 });
    await source.lookup!({ type: 'NIP', value: '7183649047' });
    now += 56 * 60_000;
    bir.calls = [];
    await source.lookup!({ type: 'NIP', value: '7183649047' });
    assert.deepEqual(bir.methods(), ['Zaloguj', 'DaneSzukajPodmioty']);
    await source.close();
  });

  test('a valid session with message code 4 means nothing was found', async () => {
    const server = await new BirServer({
      getValue: { KomunikatKod: '4' },
      intercept: (method) => (method === 'DaneSzukajPodmioty' ? birEmptyReply(method) : undefined),
    }).start();
    const source = server.source();
    assert.equal(await source.lookup!({ type: 'REGON9', value: '010001345' }), null);
    assert.deepEqual(server.methods(), ['Zaloguj', 'DaneSzukajPodmioty', 'GetValue:StatusSesji', 'GetValue:KomunikatKod']);
    await source.close();
    await server.close();
  });

  test('empty results that a new session does not cure, with the service in a technical break: unavailable', async () => {
    const server = await new BirServer({ getValue: { StatusUslugi: '2', KomunikatUslugi: 'Przerwa techniczna' } }).start();
    server.validSids.add('never');
    const source = server.source();
    // The service keeps dropping the session at once.
    server.mock.login = () => {
      server.validSids.clear();
      return birMultipartReply('bir/bir1-test-Zaloguj-response.multipart.txt');
    };
    await assert.rejects(source.lookup!({ type: 'NIP', value: '5170359458' }), (error: unknown) => {
      assert.ok(error instanceof SourceUnavailableError);
      assert.equal(error.reason, 'service');
      assert.match(error.message, /status 2 \(Przerwa techniczna\)/);
      return true;
    });
    await source.close();
    await server.close();
  });

  test('a 500 and a timeout are retried', async () => {
    let failures = 2;
    const server = await new BirServer({
      ...LEGAL_MOCK,
      intercept: (method) => {
        if (method !== 'DaneSzukajPodmioty' || failures === 0) return undefined;
        failures -= 1;
        return failures === 1
          ? { status: 500, headers: { 'content-type': 'application/soap+xml' }, body: '<s:Envelope/>' }
          : { ...birEmptyReply(method), delayMs: 1_000 };
      },
    }).start();
    const source = server.source({ timeoutMs: 150 });
    const snapshot = await source.lookup!({ type: 'NIP', value: '5170359458' });
    assert.equal(snapshot!.profiles[0]!.name, 'ASSECO SYSTEMS SPÓŁKA AKCYJNA');
    assert.equal(server.calls.filter((c) => c.method === 'DaneSzukajPodmioty').length, 3);
    await source.close();
    await server.close();
  });

  test('the test environment works without configuring its documented key; production needs one', () => {
    const source = createBirSource({ baseUrl: `${BIR_TEST_URL}/` });
    assert.equal(source.name, 'bir');
    assert.equal(BIR_TEST_KEY, 'abcde12345abcde12345');
    void source.close();
    assert.throws(
      () => createBirSource({ baseUrl: 'https://wyszukiwarkaregon.stat.gov.pl/wsBIR/UslugaBIRzewnPubl.svc' }),
      SourceConfigError,
    );
    assert.throws(() => createBirSource({ baseUrl: '' }), SourceConfigError);
  });
});

describe('BIR legal persons', () => {
  let bir: BirServer;
  let source: BirSource;
  before(async () => {
    bir = await new BirServer(LEGAL_MOCK).start();
    source = bir.source();
  });
  after(async () => {
    await source.close();
    await bir.close();
  });

  test('search by NIP, then OsPrawna and OsPrawnaPkd (recorded BIR1 test environment), field by field', async () => {
    const snapshot = await source.lookup!({ type: 'NIP', value: '5170359458' });
    assert.deepEqual(snapshot!.identity, {
      identifiers: [
        { type: 'REGON9', value: '180853177' },
        { type: 'NIP', value: '5170359458' },
        { type: 'KRS', value: '0000421310' },
      ],
      company_type: 'OSOBA PRAWNA',
      country_code: 'PL',
    });
    assert.deepEqual(snapshot!.profiles, [
      {
        source: 'bir',
        name: 'ASSECO SYSTEMS SPÓŁKA AKCYJNA',
        status: 'aktywny',
        legal_form: 'SPÓŁKI AKCYJNE',
        address: {
          street: 'ul. Test-Krucza',
          building: '14',
          apartment: '',
          city: 'Rzeszów',
          postal_code: '35-322',
          voivodeship: 'PODKARPACKIE',
          country_code: 'PL',
        },
        units: [],
        contacts: [],
        activities: [
          {
            code: '7010Z',
            name: 'DZIAŁALNOŚĆ FIRM CENTRALNYCH (HEAD OFFICES) I HOLDINGÓW, Z WYŁĄCZENIEM HOLDINGÓW FINANSOWYCH',
            is_primary: true,
          },
          { code: '6420Z', name: 'DZIAŁALNOŚĆ HOLDINGÓW FINANSOWYCH', is_primary: false },
          { code: '6201Z', name: 'DZIAŁALNOŚĆ ZWIĄZANA Z OPROGRAMOWANIEM', is_primary: false },
        ],
        dates: [{ type: 'activity_start', date: '2012-05-21' }],
        websites: [],
        vat_status: null,
        bank_accounts: [],
      },
    ]);
    assert.deepEqual(snapshot!.persons, []);
    // No local units: the list report is not asked for.
    assert.ok(!bir.calls.some((c) => c.params.pNazwaRaportu === 'BIR12OsPrawnaListaJednLokalnych'));
  });

  test('search by KRS (BIR1.2 test environment 2026): KRS, NIP and REGON from the register kind 138', async () => {
    const snapshot = await source.lookup!({ type: 'KRS', value: '0000163893' });
    assert.deepEqual(snapshot!.identity.identifiers, [
      { type: 'REGON9', value: '430036025' },
      { type: 'NIP', value: '7160004884' },
      { type: 'KRS', value: '0000163893' },
    ]);
    const profile = snapshot!.profiles[0]!;
    assert.equal(profile.name, 'PRZEDSIĘBIORSTWO BUDOWLANE MARBUD SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    assert.equal(profile.status, 'aktywny');
    assert.deepEqual(profile.address, {
      street: 'ul. Test-Wilcza',
      building: '18',
      apartment: '22',
      city: 'Puławy',
      postal_code: '24-100',
      voivodeship: 'LUBELSKIE',
      country_code: 'PL',
    });
    assert.ok(profile.activities.length > 0);
    assert.equal(profile.activities.filter((a) => a.is_primary).length, 1);
    assert.ok(profile.dates.some((d) => d.type === 'registration'));
  });

  test('UNISERV … W UPADŁOŚCI UKŁADOWEJ has no bankruptcy date: the name suffix gives the status', async () => {
    const uniserv = await source.lookup!({ type: 'KRS', value: '0000040289' });
    assert.equal(uniserv!.profiles[0]!.status, 'w upadłości');
    assert.deepEqual(uniserv!.profiles[0]!.activities, [
      { code: '4399Z', name: 'POZOSTAŁE SPECJALISTYCZNE ROBOTY BUDOWLANE, GDZIE INDZIEJ NIESKLASYFIKOWANE', is_primary: true },
    ]);
    assert.deepEqual(uniserv!.profiles[0]!.dates, [
      { type: 'registration', date: '2001-08-31' },
      { type: 'activity_start', date: '1999-07-16' },
    ]);
    const grant = await source.lookup!({ type: 'KRS', value: '28301' });
    assert.equal(grant!.profiles[0]!.name, '"GRANT" SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    assert.deepEqual(
      grant!.identity.identifiers.map((i) => i.value),
      ['291218756', '6612064945', '0000028301'],
    );
  });

  test('not found (error 4 rows, real and test environment) gives null', async () => {
    assert.equal(await source.lookup!({ type: 'KRS', value: '9999999999' }), null);
    assert.equal(await source.lookup!({ type: 'NIP', value: '7183649047' }), null);
    assert.deepEqual(await source.client.search('Nip', '1234'), []);
  });

  test('PZU S.A. (production BIR1.1): full report field by field', async () => {
    const [general] = await source.client.fullReport('010001345', 'BIR11OsPrawna');
    const snapshot = mapLegalEntity({ general: general!, pkd: [], units: [], partners: [] });
    assert.deepEqual(snapshot.identity.identifiers, [
      { type: 'REGON9', value: '010001345' },
      { type: 'NIP', value: '5260251049' },
      { type: 'KRS', value: '0000009831' },
    ]);
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.name, 'POWSZECHNY ZAKŁAD UBEZPIECZEŃ SPÓŁKA AKCYJNA');
    assert.equal(profile.legal_form, 'SPÓŁKI AKCYJNE');
    assert.deepEqual(profile.address, {
      street: 'Rondo Ignacego Daszyńskiego',
      building: '4',
      apartment: '',
      city: 'Warszawa',
      postal_code: '00-843',
      voivodeship: 'MAZOWIECKIE',
      country_code: 'PL',
    });
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2001-04-30' },
      { type: 'activity_start', date: '1992-01-15' },
    ]);
    assert.equal(profile.status, 'aktywny');
  });

  test('a deleted general partnership: closure and deletion dates, phone and fax', async () => {
    const [general] = await source.client.fullReport('272051357', 'BIR11OsPrawna');
    const snapshot = mapLegalEntity({ general: general!, pkd: [], units: [], partners: [] });
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.status, 'skreślony');
    assert.equal(snapshot.identity.company_type, 'JEDNOSTKA ORGANIZACYJNA NIEMAJĄCA OSOBOWOŚCI PRAWNEJ');
    assert.equal(profile.legal_form, 'SPÓŁKI JAWNE');
    assert.deepEqual(profile.contacts, [
      { type: 'phone', value: '03275737523' },
      { type: 'fax', value: '0327573822' },
    ]);
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2004-04-30' },
      { type: 'activity_start', date: '1994-02-01' },
      { type: 'closure', date: '2016-04-16' },
      { type: 'deletion', date: '2016-04-22' },
    ]);
    assert.deepEqual(
      snapshot.identity.identifiers.map((i) => i.value),
      ['272051357', '9540007714', '0000205820'],
    );
  });

  test('error 4 for a legal-person report on a natural person carries the entity type', async () => {
    await assert.rejects(source.client.fullReport('810528352', 'BIR11OsPrawna'), (error: unknown) => {
      assert.ok(error instanceof BirServiceError);
      assert.equal(error.code, 4);
      assert.equal(error.entityType, 'F');
      return true;
    });
    const hits = readSearchHits(await source.client.search('Nip', '5790004488'));
    assert.deepEqual(hits, [
      {
        regon: '810528352',
        nip: '5790004488',
        name: 'Przedsiębiorstwo Handlowo Usługowe "ELRO" Elżbieta Pufal',
        type: 'F',
        silo: 1,
        endDate: '',
      },
    ]);
  });

  test('a university with local units: the unit list is requested when GUS counts units', async () => {
    const [general] = await source.client.fullReport('000001554', 'BIR11OsPrawna');
    const snapshot = mapLegalEntity({ general: general!, pkd: [], units: [], partners: [] });
    assert.equal(snapshot.profiles[0]!.name, 'POLITECHNIKA WARSZAWSKA');
    // No register number: no KRS identifier.
    assert.deepEqual(snapshot.identity.identifiers, [
      { type: 'REGON9', value: '000001554' },
      { type: 'NIP', value: '5250005834' },
    ]);
  });

  test('a local unit by REGON14: search hit LP, unit report and unit PKD', async () => {
    const hits = readSearchHits(await source.client.search('Regon', '01034470800689'));
    assert.equal(hits[0]!.type, 'LP');
    const [row] = await source.client.fullReport('01034470800689', 'BIR11JednLokalnaOsPrawnej');
    assert.deepEqual(readLocalUnit(row!), {
      identifier: '01034470800689',
      name: 'AGENCJA NIERUCHOMOŚCI ROLNYCH ODDZIAŁ TERENOWY W RZESZOWIE',
      address: {
        street: 'ul. Test-Wilcza',
        building: '7',
        apartment: '',
        city: 'Rzeszów',
        postal_code: '35-001',
        voivodeship: 'PODKARPACKIE',
        country_code: 'PL',
      },
      dates: [{ type: 'activity_start', date: '1992-04-01' }],
    });
    const pkd = readPkdRows(await source.client.fullReport('01034470800689', 'BIR11JednLokalnaOsPrawnejPkd'));
    assert.deepEqual(
      pkd.map((p) => [p.code, p.is_primary]),
      [['6831Z', true]],
    );
  });
});

describe('BIR natural persons', () => {
  const NATURAL_MOCK: BirMock = {
    search: {
      'Nip=8991051697': multipart('bir1-test-DaneSzukaj-nip-8991051697.multipart.txt'),
      'Regon=970442445': multipart('bir1-test-DaneSzukaj-regon-970442445.multipart.txt'),
      'Nip=5881018622': multipart('bir1-test-DaneSzukaj-nip-5881018622.multipart.txt'),
    },
    report: {
      '022225213|BIR12OsFizycznaDzialalnoscCeidg': multipart(
        'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnoscFizycznejCeidg-022225213.multipart.txt',
      ),
      '022225213|BIR12OsFizycznaPkd': multipart(
        'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnosciFizycznej-022225213.multipart.txt',
      ),
      '970442445|BIR12OsFizycznaDzialalnoscPozostala': multipart(
        'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnoscFizycznejPozostala-970442445.multipart.txt',
      ),
      '191049200|BIR12OsFizycznaDzialalnoscSkreslonaDo20141108': multipart(
        'bir1-test-DanePobierzPelnyRaport-PublDaneRaportDzialalnoscFizycznejWKrupgn-191049200.multipart.txt',
      ),
    },
  };
  let bir: BirServer;
  let source: BirSource;
  before(async () => {
    bir = await new BirServer(NATURAL_MOCK).start();
    source = bir.source();
  });
  after(async () => {
    await source.close();
    await bir.close();
  });

  test('CEIDG business (silo 1): business report, PKD, register date; owner report absent (official error 4)', async () => {
    const snapshot = await source.lookup!({ type: 'NIP', value: '8991051697' });
    assert.deepEqual(
      bir.calls.filter((c) => c.method === 'DanePobierzPelnyRaport').map((c) => c.params.pNazwaRaportu),
      ['BIR12OsFizycznaDaneOgolne', 'BIR12OsFizycznaDzialalnoscCeidg', 'BIR12OsFizycznaPkd'],
    );
    assert.deepEqual(snapshot!.identity, {
      identifiers: [
        { type: 'REGON9', value: '022225213' },
        { type: 'NIP', value: '8991051697' },
      ],
      company_type: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
      country_code: 'PL',
    });
    assert.deepEqual(snapshot!.profiles[0], {
      source: 'bir',
      name: 'RYSZARD XXXXXXXX "ZAKŁAD USŁUGOWO-HANDLOWY MECHANIKA POJAZDOWA"',
      status: 'aktywny',
      legal_form: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
      address: {
        street: 'ul. Test-Krucza',
        building: '24',
        apartment: '',
        city: 'Wrocław',
        postal_code: '50-502',
        voivodeship: 'DOLNOŚLĄSKIE',
        country_code: 'PL',
      },
      units: [],
      contacts: [],
      activities: [
        {
          code: '4532Z',
          name: 'SPRZEDAŻ DETALICZNA CZĘŚCI I AKCESORIÓW DO POJAZDÓW SAMOCHODOWYCH, Z WYŁĄCZENIEM MOTOCYKLI',
          is_primary: false,
        },
        { code: '4520Z', name: 'KONSERWACJA I NAPRAWA POJAZDÓW SAMOCHODOWYCH, Z WYŁĄCZENIEM MOTOCYKLI', is_primary: true },
      ],
      dates: [
        { type: 'registration', date: '2011-12-27' },
        { type: 'activity_start', date: '2001-03-31' },
      ],
      websites: [],
      vat_status: null,
      bank_accounts: [],
    });
  });

  test('"other" business (silo 3) by REGON: fax kept, no NIP known', async () => {
    const snapshot = await source.lookup!({ type: 'REGON9', value: '970442445' });
    assert.deepEqual(snapshot!.identity.identifiers, [{ type: 'REGON9', value: '970442445' }]);
    assert.deepEqual(snapshot!.profiles[0]!.contacts, [{ type: 'fax', value: '0684775175' }]);
    assert.equal(snapshot!.profiles[0]!.address!.building, '1');
    assert.equal(snapshot!.profiles[0]!.status, 'aktywny');
  });

  test('business deleted before 2014-11-08 (silo 4): ended', async () => {
    const snapshot = await source.lookup!({ type: 'NIP', value: '5881018622' });
    assert.equal(snapshot!.profiles[0]!.status, 'zakończony');
    assert.deepEqual(snapshot!.profiles[0]!.dates, [{ type: 'closure', date: '2011-02-15' }]);
    assert.deepEqual(snapshot!.profiles[0]!.activities, []);
  });
});

describe('BIR official report samples (GUS documentation package)', () => {
  test('legal person: OsPrawna, Pkd, ListaJednLokalnych and civil-partnership partners', () => {
    const snapshot = mapLegalEntity({
      general: rowsOf('gus-official-sample-02-BIR11OsPrawna.xml')[0]!,
      pkd: rowsOf('gus-official-sample-03-BIR11OsPrawnaPkd.xml'),
      units: rowsOf('gus-official-sample-04-BIR11OsPrawnaListaJednLokalnych.xml'),
      partners: rowsOf('gus-official-sample-07-BIR11OsPrawnaSpCywilnaWspolnicy.xml'),
    });
    assert.deepEqual(snapshot.identity.identifiers, [
      { type: 'REGON9', value: '276592498' },
      { type: 'NIP', value: '9542300619' },
      { type: 'KRS', value: '0000135115' },
    ]);
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.legal_form, 'SPÓŁKI Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    assert.deepEqual(
      profile.activities.map((a) => [a.code, a.is_primary]),
      [
        ['4773Z', true],
        ['2120Z', false],
      ],
    );
    assert.deepEqual(
      profile.units.map((u) => [u.identifier, u.name, u.address!.postal_code]),
      [
        ['27659249800038', 'APTEKA "EUROPEJSKA"', '40-026'],
        ['27659249800045', 'APTEKA "EUROPEJSKA" (GEANT)', '40-028'],
      ],
    );
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2009-03-24' },
      { type: 'activity_start', date: '1999-08-29' },
    ]);
    assert.deepEqual(snapshot.persons, [
      { full_name: 'PAWEŁ MARIUSZ XXXXXXXX', role: 'WSPÓLNIK SPÓŁKI CYWILNEJ' },
      { full_name: 'IWONA KRYSTYNA XXXXXXXX', role: 'WSPÓLNIK SPÓŁKI CYWILNEJ' },
    ]);
  });

  test('local unit of a legal person with its PKD', () => {
    const unit = readLocalUnit(rowsOf('gus-official-sample-05-BIR11JednLokalnaOsPrawnej.xml')[0]!);
    assert.deepEqual(unit, {
      identifier: '27659249800038',
      name: 'APTEKA "EUROPEJSKA"',
      address: {
        street: 'ul. Test-Wilcza',
        building: '7',
        apartment: '',
        city: 'Katowice',
        postal_code: '40-026',
        voivodeship: 'ŚLĄSKIE',
        country_code: 'PL',
      },
      dates: [{ type: 'activity_start', date: '1999-08-25' }],
    });
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-sample-06-BIR11JednLokalnaOsPrawnejPkd.xml')).map((p) => p.code),
      ['4773Z', '2120Z'],
    );
  });

  test('natural person with a CEIDG and an agricultural business, PKD of both silos and local units', () => {
    const snapshot = mapNaturalPerson({
      general: rowsOf('gus-official-sample-08-BIR11OsFizycznaDaneOgolne.xml')[0]!,
      businesses: [
        { silo: 2, row: rowsOf('gus-official-sample-10-BIR11OsFizycznaDzialalnoscRolnicza.xml')[0]! },
        { silo: 1, row: rowsOf('gus-official-sample-09-BIR11OsFizycznaDzialalnoscCeidg.xml')[0]! },
      ],
      pkd: rowsOf('gus-official-sample-13-BIR11OsFizycznaPkd-a.xml'),
      units: rowsOf('gus-official-sample-15-BIR11OsFizycznaListaJednLokalnych.xml'),
    });
    // The sample's identifiers are placeholders (xxxxxxxxx), which never become identifiers.
    assert.deepEqual(snapshot.identity.identifiers, []);
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.name, 'MIKOŁAJ XXXXXXXX "MELISSA"');
    assert.equal(profile.status, 'aktywny');
    assert.deepEqual(
      profile.activities.map((a) => [a.code, a.is_primary]),
      [
        ['4941Z', true],
        ['0150Z', false],
        ['4939Z', false],
      ],
    );
    assert.deepEqual(
      profile.units.map((u) => [u.identifier, u.name]),
      [
        ['xxxxxxxxxx00039', 'ARMATURA MIKOŁAJ XXXXXXXX'],
        ['xxxxxxxxxx00060', 'Apteka "MELISSA"'],
        ['xxxxxxxxxx00078', 'Drogeria "MELISSA"'],
      ],
    );
    assert.equal(profile.units[1]!.address!.building, '29/31');
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2011-12-22' },
      { type: 'activity_start', date: '2001-11-15' },
    ]);
    assert.deepEqual(snapshot.persons, [{ full_name: 'ZBIGNIEW TEST-ZIELIŃSKI', role: 'WŁAŚCICIEL' }]);
  });

  test("other-activity and deleted-before-2014 business reports; PKD list variant b; a natural person's local unit", () => {
    const other = readActivityDates(rowsOf('gus-official-sample-11-BIR11OsFizycznaDzialalnoscPozostala.xml')[0]);
    assert.equal(other.start, '1978-03-21');
    assert.ok(isActiveByUwaga4(other));
    const deleted = readActivityDates(rowsOf('gus-official-sample-12-BIR11OsFizycznaDzialalnoscSkreslonaDo20141108.xml')[0]);
    assert.equal(birStatus(deleted, 'APTEKA ANNA XXXXXXXX'), 'zakończony');
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-sample-14-BIR11OsFizycznaPkd-b.xml')).map((p) => p.code),
      ['4773Z', '4774Z', '4775Z'],
    );
    const unit = readLocalUnit(rowsOf('gus-official-sample-16-BIR11JednLokalnaOsFizycznej.xml')[0]!);
    assert.equal(unit.name, 'MEBLE MIKOŁAJ XXXXXXXX');
    assert.deepEqual(unit.dates, [{ type: 'activity_start', date: '2011-12-21' }]);
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-sample-17-BIR11JednLokalnaOsFizycznejPkd.xml')).map((p) => [p.code, p.is_primary]),
      [
        ['5610A', true],
        ['5610B', false],
      ],
    );
  });

  test('search rows: one business, and two businesses of one person in silos 1 and 2', () => {
    assert.deepEqual(readSearchHits(rowsOf('gus-official-sample-00-DaneSzukajPodmioty-P-jedna-dzialalnosc.xml')), [
      { regon: '000331501', nip: '5261040828', name: 'GŁÓWNY URZĄD STATYSTYCZNY', type: 'P', silo: 6, endDate: '' },
    ]);
    const two = readSearchHits(rowsOf('gus-official-sample-01-DaneSzukajPodmioty-F-dwie-dzialalnosci-silos-1-i-2.xml'));
    assert.deepEqual(
      two.map((h) => [h.type, h.silo, h.name]),
      [
        ['F', 1, 'AAAAAAAA'],
        ['F', 2, 'GOSPODARSTWO ROLNE'],
      ],
    );
    const multi = readSearchHits(rowsOf('bir11-inner-DaneSzukajPodmioty-multiple-test-anonymised.xml'));
    assert.deepEqual(
      multi.map((h) => [h.regon, h.type, h.silo]),
      [
        ['02092251199990', 'P', 6],
        ['02092251199990', 'F', 2],
      ],
    );
  });

  test('the whole official examples file: every root parses; suspended and resumed businesses by Uwaga 4', () => {
    const file = readFixtureText('bir/gus-official-BIR11-PrzykladoweDane.xml');
    const roots = [...file.matchAll(/<root>[\s\S]*?<\/root>/g)].map((m) => m[0]);
    const parsed = roots.map((root) => {
      try {
        return parseBirRows(root).length;
      } catch {
        return -1;
      }
    });
    // One example (the second BIR11OsFizycznaPkd) has a stray <dane> before </root> in the official file.
    assert.equal(parsed.filter((n) => n < 0).length, 1);
    assert.ok(parsed.filter((n) => n > 0).length >= 17, `parsed: ${parsed.join(',')}`);
    const tail = file.slice(file.indexOf('zawieszona / wznowiona działalność'));
    const blocks = [...tail.matchAll(/<dane>[\s\S]*?<\/dane>/g)].map((m) => parseBirRows(`<root>${m[0]}</root>`)[0]!);
    const suspended = blocks.find((r) => r.regon9 === '002300137')!;
    const resumed = blocks.find((r) => r.regon9 === '356352625')!;
    assert.equal(birStatus(readActivityDates(suspended), ''), 'zawieszony');
    assert.equal(birStatus(readActivityDates(resumed), ''), 'aktywny');
    assert.ok(!isActiveByUwaga4(readActivityDates(suspended)));
  });

  test('inner documents kept by other projects and the PKD 2025 examples', () => {
    const ceidg = mapNaturalPerson({
      general: null,
      businesses: [{ silo: 1, row: rowsOf('bir11-inner-BIR11OsFizycznaDzialalnoscCeidg-472925442-jdg.xml')[0]! }],
      pkd: [],
      units: [],
    });
    assert.deepEqual(ceidg.identity.identifiers, [{ type: 'REGON9', value: '472925442' }]);
    assert.equal(ceidg.profiles[0]!.name, 'Mikołaj Gauer');
    assert.deepEqual(
      ceidg.profiles[0]!.dates.find((d) => d.type === 'activity_start'),
      { type: 'activity_start', date: '2019-09-16' },
    );
    const other = mapNaturalPerson({
      general: null,
      businesses: [{ silo: 3, row: rowsOf('bir11-inner-OsFizycznaDzialalnoscPozostala-test-anonymised.xml')[0]! }],
      pkd: [],
      units: [],
    });
    assert.deepEqual(other.profiles[0]!.contacts, [{ type: 'fax', value: '9999999999' }]);
    assert.deepEqual(other.identity.identifiers, [], '666666666 fails the REGON checksum');
    const withVersion = readPkdRows(rowsOf('bir12-inner-OsPrawnaPkd-with-pkdWersja.xml'));
    assert.deepEqual(
      withVersion.map((p) => [p.code, p.version, p.is_primary]),
      [
        ['7430Z', '2007', false],
        ['7420Z', '2007', false],
        ['7410Z', '2007', true],
      ],
    );
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-doc-BIR12OsPrawnaPkd-142396858-pkd2025-only-codes.xml')).map((p) => [p.code, p.version]),
      [
        ['6310D', '2025'],
        ['6220A', '2025'],
      ],
    );
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-doc-BIR12OsPrawnaPkd-010418973-pkd2025-renamed-code.xml')).map((p) => p.code),
      ['6020Z'],
    );
    // A code given only to the group level stays as GUS wrote it.
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-doc-BIR12JednLokalnaOsPrawnejPkd-14726216300027-pkd2025.xml')).map((p) => p.code),
      ['6210B', '6220'],
    );
    const fizPkd = readPkdRows(rowsOf('gus-official-doc-BIR12OsFizycznaPkd-999999990-pkd2025.xml'));
    assert.deepEqual(
      fizPkd.map((p) => [p.code, p.silo, p.is_primary]),
      [
        ['6220B', 1, false],
        ['6210A', 1, true],
      ],
    );
    assert.deepEqual(
      readPkdRows(rowsOf('gus-official-doc-BIR12JednLokalnaOsFizycznejPkd-99999999000026-pkd2025.xml')).map((p) => [p.code, p.silo]),
      [
        ['6210B', 1],
        ['6290Z', 1],
      ],
    );
  });
});

describe('BIR GUS error codes (official error-message examples)', () => {
  test('full-report codes 4, 5, 11, 21 and 22 (BIR1.1 and BIR1.2 files) become BirServiceError', async () => {
    const cases = [
      ...splitOfficialEnvelopes('bir/gus-official-BIR11-DanePobierzPelnyRaport-KomunikatyOBledach.xml'),
      ...splitOfficialEnvelopes('bir/gus-official-BIR12-DanePobierzPelnyRaport-KomunikatyOBledach.xml'),
    ];
    let i = 0;
    const server = await new BirServer({
      report: Object.fromEntries(
        cases.map((c, n) => [
          `${n}|report`,
          // The last example of each file lacks its opening <s:Envelope> tag; its payload is served properly wrapped.
          c.envelope ? soapXmlReply(c.envelope) : birInnerReply('DanePobierzPelnyRaport', c.inner),
        ]),
      ),
    }).start();
    const source = server.source();
    const codes: number[] = [];
    for (; i < cases.length; i++) {
      await assert.rejects(source.client.fullReport(String(i), 'report'), (error: unknown) => {
        assert.ok(error instanceof BirServiceError);
        codes.push(error.code);
        return true;
      });
    }
    assert.deepEqual(codes, [4, 5, 11, 21, 22, 4, 5, 11, 21, 22]);
    await source.close();
    await server.close();
  });

  test('optional reports: no PKD (11) or no partners (21/22) do not fail the entity', async () => {
    const [, , noPkd, notCivil, noPartners] = splitOfficialEnvelopes(
      'bir/gus-official-BIR11-DanePobierzPelnyRaport-KomunikatyOBledach.xml',
    );
    const general = readFixtureText('bir/gus-official-sample-02-BIR11OsPrawna.xml')
      .replace(/<praw_szczegolnaFormaPrawna_Symbol>\d+</, '<praw_szczegolnaFormaPrawna_Symbol>019<')
      .replace('<praw_liczbaJednLokalnych>2</praw_liczbaJednLokalnych>', '<praw_liczbaJednLokalnych>0</praw_liczbaJednLokalnych>');
    const server = await new BirServer({
      search: { 'Regon=276592498': inner('DaneSzukajPodmioty', 'gus-official-sample-00-DaneSzukajPodmioty-P-jedna-dzialalnosc.xml') },
      report: {
        '000331501|BIR12OsPrawna': birInnerReply('DanePobierzPelnyRaport', general),
        '000331501|BIR12OsPrawnaPkd': soapXmlReply(noPkd!.envelope!),
        '000331501|BIR12OsPrawnaSpCywilnaWspolnicy': birInnerReply('DanePobierzPelnyRaport', noPartners!.inner),
      },
    }).start();
    const source = server.source();
    const snapshot = await source.lookup!({ type: 'REGON9', value: '276592498' });
    assert.deepEqual(snapshot!.profiles[0]!.activities, []);
    assert.deepEqual(snapshot!.persons, []);
    assert.ok(server.calls.some((c) => c.params.pNazwaRaportu === 'BIR12OsPrawnaSpCywilnaWspolnicy'));
    assert.ok(notCivil);
    await source.close();
    await server.close();
  });

  test('summary-report codes: 4 no data, 101 busy (retried), 102/103 not yet, 104 too old, 105 bad name', async () => {
    const [noData, weekend, busy, today, future, tooOld, badName] = splitOfficialEnvelopes(
      'bir/gus-official-BIR11-RaportyZbiorcze-KomunikatyOBledach.xml',
    );
    const name = SUMMARY_REPORTS.newEntities;
    const server = await new BirServer({
      summary: {
        [`2026-09-21|${name}`]: soapXmlReply(noData!.envelope!),
        [`2026-09-20|${name}`]: soapXmlReply(weekend!.envelope!),
        [`2026-09-19|${name}`]: soapXmlReply(busy!.envelope!),
        [`2026-09-22|${name}`]: soapXmlReply(today!.envelope!),
        [`2026-09-30|${name}`]: soapXmlReply(future!.envelope!),
        [`2026-08-01|${name}`]: soapXmlReply(tooOld!.envelope!),
        [`2026-09-18|${name}`]: soapXmlReply(badName!.envelope!),
      },
    }).start();
    const source = server.source({ busyDelayMs: 1 });
    assert.deepEqual(await source.client.summaryReport('2026-09-21', name), []);
    assert.deepEqual(await source.client.summaryReport('2026-09-20', name), []);
    await assert.rejects(
      source.client.summaryReport('2026-09-19', name),
      (e: unknown) => e instanceof SourceUnavailableError && e.reason === 'rate_limited',
    );
    assert.equal(server.calls.filter((c) => c.params.pDataRaportu === '2026-09-19').length, 4);
    await assert.rejects(source.client.summaryReport('2026-09-22', name), SourceUnavailableError);
    await assert.rejects(source.client.summaryReport('2026-09-30', name), SourceUnavailableError);
    await assert.rejects(source.client.summaryReport('2026-08-01', name), SourceDateOutOfRangeError);
    await assert.rejects(source.client.summaryReport('2026-09-18', name), SourceConfigError);
    // A day that cannot be served makes the whole run fail with a typed error.
    await assert.rejects(
      collect(source.snapshotsForDate('2026-09-22')),
      (e: unknown) => e instanceof SourceUnavailableError && e.source === 'bir',
    );
    await source.close();
    await server.close();
  });
});

describe('BIR daily run from the summary reports', () => {
  test('new, updated and deleted lists (local units map to their parent); bad entities reported, run continues', async () => {
    const date = '2026-09-21';
    const updatedList =
      '<root>\r\n  <dane>\r\n    <regon>430036025</regon>\r\n  </dane>\r\n  <dane>\r\n    <regon>276566762</regon>\r\n  </dane>\r\n  <dane>\r\n    <regon>430036025</regon>\r\n  </dane>\r\n</root>';
    const server = await new BirServer({
      ...LEGAL_MOCK,
      search: {
        ...LEGAL_MOCK.search,
        'Regon=430036025': inner('DaneSzukajPodmioty', 'bir12-test-2026-DaneSzukajPodmioty-krs-0000163893-spzoo-inner.xml'),
        'Regon=276566762': inner(
          'DaneSzukajPodmioty',
          'bir12-test-2026-DaneSzukajPodmioty-krs-0000040289-sa-w-upadlosci-ukladowej-inner.xml',
        ),
      },
      report: {
        ...LEGAL_MOCK.report,
        // This entity's report arrives cut off mid-document.
        '276566762|BIR12OsPrawna': birInnerReply(
          'DanePobierzPelnyRaport',
          '<root>\r\n  <dane>\r\n    <praw_regon9>276566762</praw_regon9>\r\n    <praw_nazwa>UNISERV',
        ),
      },
      summary: {
        [`${date}|${SUMMARY_REPORTS.newEntities}`]: inner(
          'DanePobierzRaportZbiorczy',
          'bir11-inner-DanePobierzRaportZbiorczy-regon-list.xml',
        ),
        [`${date}|${SUMMARY_REPORTS.updatedEntities}`]: birInnerReply('DanePobierzRaportZbiorczy', updatedList),
        [`${date}|${SUMMARY_REPORTS.deletedEntities}`]: inner(
          'DanePobierzRaportZbiorczy',
          'gus-official-sample-18-RaportZbiorczy-podmioty-regon-list.xml',
        ),
        [`${date}|${SUMMARY_REPORTS.newUnits}`]: inner(
          'DanePobierzRaportZbiorczy',
          'gus-official-sample-19-RaportZbiorczy-jednostki-lokalne-regon-list.xml',
        ),
      },
    }).start();
    const errors: Array<[string, string]> = [];
    const source = server.source({ onEntityError: (id, e) => errors.push([id, e.constructor.name]) });
    const regons = await source.changedRegons(date);
    assert.deepEqual(regons, [
      '022399999',
      '147210456',
      '243544401',
      '341568222',
      '430036025',
      '276566762',
      '020811272',
      '123032192',
      '200270615',
    ]);
    assert.deepEqual(
      server.calls.filter((c) => c.method === 'DanePobierzRaportZbiorczy').map((c) => c.params.pNazwaRaportu),
      Object.values(SUMMARY_REPORTS),
    );
    const snapshots = await collect(source.snapshotsForDate(date));
    assert.deepEqual(
      snapshots.map((s) => s.profiles[0]!.name),
      ['PRZEDSIĘBIORSTWO BUDOWLANE MARBUD SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ'],
    );
    assert.deepEqual(errors, [
      ['022399999', EntityNotFoundError.name],
      ['147210456', EntityNotFoundError.name],
      ['243544401', EntityNotFoundError.name],
      ['341568222', EntityNotFoundError.name],
      ['276566762', MalformedPayloadError.name],
      ['020811272', EntityNotFoundError.name],
      ['123032192', EntityNotFoundError.name],
      ['200270615', EntityNotFoundError.name],
    ]);
    await source.close();
    await server.close();
  });
});
