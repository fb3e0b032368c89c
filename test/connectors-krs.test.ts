import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompanySnapshot } from '../src/registry/model.ts';
import { createKrsSource, type KrsSourceOptions } from '../src/registry/sources/krs/krs-source.ts';
import { countryCode, mapKrsExtract, parseBulletin } from '../src/registry/sources/krs/krs-extract.ts';
import { dateInText } from '../src/registry/sources/krs/krs-values.ts';
import { MalformedPayloadError, EntityNotFoundError, SourceUnavailableError } from '../src/registry/sources/errors.ts';
import {
  jsonFixtureReply,
  jsonReply,
  problemReply,
  readFixtureJson,
  startFixtureServer,
  type FixtureServer,
  type Handler,
  type Reply,
  withServer,
} from './helpers/fixture-server.ts';

const CURRENT: Record<string, { register: 'P' | 'S'; file: string }> = {
  '0000028860': { register: 'P', file: 'krs/odpis-aktualny-P-0000028860-sa-orlen.json' },
  '0000121862': { register: 'P', file: 'krs/odpis-aktualny-P-0000121862-spzoo-wspolnik-prokurent-2024.json' },
  '0000405063': { register: 'P', file: 'krs/odpis-aktualny-P-0000405063-spzoo-easysolar-2022.json' },
  '0000413516': { register: 'P', file: 'krs/odpis-aktualny-P-0000413516-spzoo-swlex-2022.json' },
  '0001268296': { register: 'P', file: 'krs/odpis-aktualny-P-0001268296-spzoo-nowa.json' },
  '0000030897': { register: 'S', file: 'krs/odpis-aktualny-S-0000030897-fundacja-wosp.json' },
};

// Full extracts: deleted entities answer 204 on OdpisAktualny; the others are served to a
// source configured with `extract: 'full'`.
const FULL: Record<string, { file: string; deleted: boolean }> = {
  '0001268296': { file: 'krs/odpis-pelny-P-0001268296-spzoo-nowa.json', deleted: false },
  '0000106150': { file: 'krs/odpis-pelny-P-0000106150-wykreslony-trimmed.json', deleted: true },
  '0000109411': { file: 'krs/odpis-pelny-P-0000109411-spoldzielnia-w-likwidacji-wykreslona-keys-sorted.json', deleted: true },
  '0000440028': { file: 'krs/odpis-pelny-P-0000440028-spzoo-likwidacja-zakonczona-wykreslona.json', deleted: true },
  '0000181328': { file: 'krs/odpis-pelny-P-0000181328-spzoo-w-upadlosci-likwidacja-uchylona-oddzial-zagraniczny.json', deleted: false },
  '0000507997': { file: 'krs/odpis-pelny-P-0000507997-spzoo-w-upadlosci-zaleglosci-podatkowe-dzial4.json', deleted: false },
  '0000277937': { file: 'krs/odpis-pelny-P-0000277937-spzoo-w-restrukturyzacji-sanacja-EXCERPT-bez-dzial3.json', deleted: false },
};

const NOT_FOUND = 'krs/odpis-aktualny-not-found-404.json';
const FAST_RETRY = { retries: 2, backoffBaseMs: 5, backoffMaxMs: 20 };

/** Routes requests the way api-krs.ms.gov.pl does; `overrides` can replace any answer. */
function krsApi(overrides: (path: string, register: string | null) => Reply | undefined = () => undefined): Handler {
  return (req) => {
    const register = req.query.get('rejestr');
    const override = overrides(req.path, register);
    if (override) return override;
    const m = /^\/api\/krs\/(OdpisAktualny|OdpisPelny)\/(\d{10})$/.exec(req.path);
    if (!m) return problemReply(NOT_FOUND);
    const [, kind, krs] = m as unknown as [string, string, string];
    if (kind === 'OdpisAktualny') {
      const current = CURRENT[krs!];
      if (current) return current.register === register ? jsonFixtureReply(current.file) : problemReply(NOT_FOUND);
      const full = FULL[krs!];
      if (full?.deleted && register === 'P') return { status: 204 };
      return problemReply(NOT_FOUND);
    }
    const full = FULL[krs!];
    return full && register === 'P' ? jsonFixtureReply(full.file) : problemReply(NOT_FOUND);
  };
}

function source(server: FixtureServer, extra: Partial<KrsSourceOptions> = {}) {
  return createKrsSource({ baseUrl: `${server.url}/`, retry: FAST_RETRY, timeoutMs: 2_000, requestsPerSecond: 1_000, ...extra });
}

async function collect(iterable: AsyncIterable<CompanySnapshot>): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) out.push(s);
  return out;
}

describe('KRS current extracts over HTTP', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(krsApi());
  });
  after(() => server.close());

  test('ORLEN S.A.: identity, address, branches, contacts, activities and persons field by field', async () => {
    const krs = source(server);
    const snapshot = await krs.lookup!({ type: 'KRS', value: '28860' });
    await krs.close();
    assert.ok(snapshot);
    assert.deepEqual(snapshot.identity, {
      identifiers: [
        { type: 'KRS', value: '0000028860' },
        { type: 'NIP', value: '7740001454' },
        { type: 'REGON9', value: '610188201' },
      ],
      company_type: 'SPÓŁKA AKCYJNA',
      country_code: 'PL',
    });
    const [profile] = snapshot.profiles;
    assert.equal(snapshot.profiles.length, 1);
    assert.equal(profile!.source, 'krs');
    assert.equal(profile!.name, 'ORLEN SPÓŁKA AKCYJNA');
    assert.equal(profile!.status, 'aktywny');
    assert.equal(profile!.legal_form, 'SPÓŁKA AKCYJNA');
    assert.deepEqual(profile!.address, {
      street: 'CHEMIKÓW',
      building: '7',
      apartment: '',
      city: 'PŁOCK',
      postal_code: '09-411',
      voivodeship: 'MAZOWIECKIE',
      country_code: 'PL',
    });
    assert.equal(profile!.units.length, 9);
    // Branches abroad: KRS names their countries in Polish; the profile says their ISO codes.
    assert.deepEqual([...new Set(profile!.units.map((u) => u.address?.country_code))].sort(), ['AE', 'PK', 'PL']);
    assert.deepEqual(profile!.units[0], {
      identifier: 'ORLEN SPÓŁKA AKCYJNA - ODDZIAŁ CENTRALNY UPSTREAM POLSKA W WARSZAWIE',
      name: 'ORLEN SPÓŁKA AKCYJNA - ODDZIAŁ CENTRALNY UPSTREAM POLSKA W WARSZAWIE',
      address: {
        street: 'UL. MARCINA KASPRZAKA',
        building: '25',
        apartment: '',
        city: 'WARSZAWA',
        postal_code: '01-224',
        voivodeship: 'MAZOWIECKIE',
        country_code: 'PL',
      },
      dates: [],
    });
    assert.deepEqual(profile!.contacts, [{ type: 'email', value: 'zarzad@orlen.pl' }]);
    assert.deepEqual(profile!.websites, ['www.orlen.pl']);
    assert.deepEqual(profile!.dates, [{ type: 'registration', date: '2001-07-19' }]);
    assert.equal(profile!.vat_status, null);
    assert.deepEqual(profile!.bank_accounts, []);
    // Partial (group-level) codes are kept as far as the register gives them: 20.1 → 201.
    assert.deepEqual(
      profile!.activities.map((a) => `${a.code}${a.is_primary ? '*' : ''}`),
      ['1920Z*', '201', '521', '0620Z', '0610Z', '351', '352', '468', '4730Z', '4725Z'],
    );
    assert.equal(
      profile!.activities[0]!.name,
      'WYTWARZANIE I PRZETWARZANIE PRODUKTÓW RAFINACJI ROPY NAFTOWEJ ORAZ PRODUKTÓW Z PALIW KOPALNYCH',
    );
    const roles = snapshot.persons.map((p) => p.role);
    assert.deepEqual(snapshot.persons[0], { full_name: 'I******* F*****', role: 'PREZES ZARZĄDU' });
    assert.equal(roles.filter((r) => r === 'RADA NADZORCZA').length, 10);
    assert.equal(roles.filter((r) => r === 'PROKURENT').length, 5);
    assert.equal(snapshot.persons.length, 9 + 10 + 5);
  });

  test('KPMG sp. z o.o.: legal-person shareholder and proxy; ASCII-only legal form kept as written', async () => {
    const krs = source(server);
    const snapshot = await krs.lookup!({ type: 'KRS', value: '0000121862' });
    await krs.close();
    assert.ok(snapshot);
    assert.deepEqual(snapshot.identity.identifiers, [
      { type: 'KRS', value: '0000121862' },
      { type: 'NIP', value: '5260202393' },
      { type: 'REGON9', value: '002003764' },
    ]);
    assert.equal(snapshot.profiles[0]!.legal_form, 'SPOLKA Z OGRANICZONA ODPOWIEDZIALNOSCIA');
    assert.deepEqual(snapshot.persons, [
      { full_name: 'S**** L****', role: 'PREZES ZARZĄDU' },
      { full_name: 'M********* S*****', role: 'PROKURENT' },
      { full_name: 'KPMG CEE HOLDING, A.S.', role: 'WSPÓLNIK' },
    ]);
    assert.equal(
      snapshot.profiles[0]!.activities.filter((a) => a.is_primary)
        .map((a) => a.code)
        .join(),
      '7010Z',
    );
  });

  test('SWLEX and EASYSOLAR: natural-person shareholders with second names, supervisory board', async () => {
    const krs = source(server);
    const swlex = await krs.lookup!({ type: 'KRS', value: '413516' });
    const easysolar = await krs.lookup!({ type: 'KRS', value: '405063' });
    await krs.close();
    assert.deepEqual(swlex!.persons, [
      { full_name: 'S******** W*********', role: 'CZŁONEK ZARZĄDU' },
      { full_name: 'S******** W*********', role: 'WSPÓLNIK' },
      { full_name: 'M****** W*********', role: 'WSPÓLNIK' },
    ]);
    assert.deepEqual(swlex!.profiles[0]!.address, {
      street: 'UL. SZELĄGOWSKA',
      building: '49',
      apartment: '',
      city: 'POZNAŃ',
      postal_code: '61-626',
      voivodeship: 'WIELKOPOLSKIE',
      country_code: 'PL',
    });
    assert.deepEqual(
      easysolar!.persons.filter((p) => p.role !== 'RADA NADZORCZA'),
      [
        { full_name: 'M***** J** D*****', role: 'PREZES ZARZĄDU' },
        { full_name: 'SPEEDUP IQBATOR SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', role: 'WSPÓLNIK' },
        { full_name: 'M***** J** D*****', role: 'WSPÓLNIK' },
        { full_name: 'KIC INNOENERGY SE', role: 'WSPÓLNIK' },
      ],
    );
    assert.equal(easysolar!.persons.filter((p) => p.role === 'RADA NADZORCZA').length, 4);
    assert.equal(easysolar!.profiles[0]!.dates[0]!.date, '2011-12-13');
  });

  test('WOŚP foundation: register P answers 404 problem+json, register S holds it; OPP activities', async () => {
    const krs = source(server);
    const before = server.requests.length;
    const snapshot = await krs.lookup!({ type: 'KRS', value: '0000030897' });
    const calls = server.requests.slice(before).map((r) => `${r.path}?${r.query.toString()}`);
    await krs.close();
    assert.deepEqual(calls, [
      '/api/krs/OdpisAktualny/0000030897?rejestr=P&format=json',
      '/api/krs/OdpisAktualny/0000030897?rejestr=S&format=json',
    ]);
    assert.ok(snapshot);
    assert.deepEqual(snapshot.identity.identifiers, [
      { type: 'KRS', value: '0000030897' },
      { type: 'NIP', value: '5213003700' },
    ]);
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.legal_form, 'FUNDACJA');
    assert.deepEqual(profile.websites, ['www.wosp.org.pl']);
    assert.equal(profile.units.length, 1);
    assert.equal(profile.activities.length, 16);
    assert.ok(profile.activities.every((a) => !a.is_primary));
    assert.ok(profile.activities.some((a) => a.code === '8690E'));
    assert.ok(snapshot.persons.some((p) => p.role === 'RADA FUNDACJI'));
  });

  test('a number neither register knows gives null', async () => {
    const krs = source(server);
    assert.equal(await krs.lookup!({ type: 'KRS', value: '0000999999' }), null);
    assert.equal(await krs.lookup!({ type: 'NIP', value: '7740001454' }), null);
    await krs.close();
  });
});

describe('KRS full extracts', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer(krsApi());
  });
  after(() => server.close());

  test('the full extract of a new company maps exactly like its current extract', () => {
    const current = mapKrsExtract(readFixtureJson(CURRENT['0001268296']!.file), '0001268296');
    const full = mapKrsExtract(readFixtureJson(FULL['0001268296']!.file), '0001268296');
    assert.deepEqual(full, current);
    assert.deepEqual(current.persons, [
      { full_name: 'D***** K******** M****', role: 'PREZES ZARZĄDU' },
      { full_name: 'MAJKA GROUP SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', role: 'WSPÓLNIK' },
      { full_name: 'M****** C*****', role: 'WSPÓLNIK' },
    ]);
    assert.deepEqual(current.profiles[0]!.activities[0], { code: '9313Z', name: 'DZIAŁALNOŚĆ KLUBÓW FITNESS', is_primary: true });
  });

  test('deleted after liquidation: 204 on the current extract, the full extract gives the last state', async () => {
    const krs = source(server);
    const before = server.requests.length;
    const snapshot = await krs.lookup!({ type: 'KRS', value: '440028' });
    assert.deepEqual(
      server.requests.slice(before).map((r) => r.path),
      ['/api/krs/OdpisAktualny/0000440028', '/api/krs/OdpisPelny/0000440028'],
    );
    await krs.close();
    assert.ok(snapshot);
    const profile = snapshot.profiles[0]!;
    assert.equal(profile.status, 'wykreślony');
    // Every version was closed by the deletion entry; the state just before it is kept.
    assert.equal(profile.name, 'BUDOWNICTWO DROGOWE "KASPRZAK" SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ W LIKWIDACJI');
    assert.deepEqual(
      snapshot.identity.identifiers.map((i) => i.value),
      ['0000440028', '6981835930', '302278641'],
    );
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2012-11-15' },
      { type: 'liquidation_start', date: '2023-08-18' },
      { type: 'liquidation_end', date: '2025-09-10' },
      { type: 'deletion', date: '2025-09-10' },
    ]);
    assert.ok(snapshot.persons.some((p) => p.role === 'LIKWIDATOR'));
  });

  test('deleted cooperative in liquidation: dates read from the resolutions in the prose', async () => {
    const krs = source(server);
    const snapshot = await krs.lookup!({ type: 'KRS', value: '0000109411' });
    await krs.close();
    const profile = snapshot!.profiles[0]!;
    assert.equal(profile.name, 'ROLNICZA SPÓŁDZIELNIA PRODUKCYJNA W MIELNIE W LIKWIDACJI');
    assert.equal(profile.status, 'wykreślony');
    assert.equal(profile.legal_form, 'SPÓŁDZIELNIA');
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2002-04-24' },
      { type: 'liquidation_start', date: '2005-12-01' },
      { type: 'liquidation_end', date: '2012-09-30' },
      { type: 'deletion', date: '2012-10-26' },
    ]);
    assert.deepEqual(snapshot!.identity.identifiers, [
      { type: 'KRS', value: '0000109411' },
      { type: 'REGON9', value: '000844703' },
    ]);
    assert.equal(snapshot!.persons.filter((p) => p.role === 'LIKWIDATOR').length, 3);
  });

  test('deleted, trimmed upstream (empty dane): deletion and registration from the entries alone', async () => {
    const krs = source(server);
    const snapshot = await krs.lookup!({ type: 'KRS', value: '106150' });
    await krs.close();
    assert.deepEqual(snapshot!.profiles[0]!.dates, [
      { type: 'registration', date: '2002-04-10' },
      { type: 'deletion', date: '2022-08-12' },
    ]);
    assert.equal(snapshot!.profiles[0]!.status, 'wykreślony');
    assert.deepEqual(snapshot!.identity.identifiers, [{ type: 'KRS', value: '0000106150' }]);
  });

  test('bankrupt after a reversed liquidation, with a foreign branch', async () => {
    const krs = source(server, { extract: 'full' });
    const snapshot = await krs.lookup!({ type: 'KRS', value: '181328' });
    await krs.close();
    const profile = snapshot!.profiles[0]!;
    // The 2010 liquidation was opened and closed: it must not make the company "w likwidacji".
    assert.equal(profile.status, 'w upadłości');
    assert.deepEqual(profile.dates, [
      { type: 'registration', date: '2003-11-27' },
      { type: 'liquidation_start', date: '2010-02-01' },
      { type: 'liquidation_end', date: '2010-05-18' },
      { type: 'bankruptcy_start', date: '2025-05-20' },
    ]);
    assert.deepEqual(profile.units, [
      {
        identifier: 'PROJECT BS FILIAL',
        name: 'PROJECT BS FILIAL',
        address: {
          street: 'UPPLAGSVÄGEN',
          building: '1',
          apartment: '4',
          city: 'STOCKHOLM',
          postal_code: '117 43',
          voivodeship: '',
          country_code: 'SE',
        },
        dates: [],
      },
    ]);
    assert.equal(snapshot!.persons.filter((p) => p.role === 'SYNDYK').length, 1);
    assert.equal(snapshot!.persons.filter((p) => p.role === 'LIKWIDATOR').length, 0);
  });

  test('bankruptcy entry without a date field: the date is read from the court text', async () => {
    const krs = source(server, { extract: 'full' });
    const snapshot = await krs.lookup!({ type: 'KRS', value: '0000507997' });
    await krs.close();
    const profile = snapshot!.profiles[0]!;
    assert.equal(profile.status, 'w upadłości');
    assert.deepEqual(
      profile.dates.find((d) => d.type === 'bankruptcy_start'),
      { type: 'bankruptcy_start', date: '2025-08-05' },
    );
    assert.ok(
      profile.activities.some((a) => a.code === '431'),
      'group-level code 43.1 kept as 431',
    );
    assert.deepEqual(
      snapshot!.identity.identifiers.map((i) => i.type),
      ['KRS', 'NIP', 'REGON9'],
    );
  });

  test('remedial restructuring (sanacja) with a company as court administrator', async () => {
    const krs = source(server, { extract: 'full' });
    const snapshot = await krs.lookup!({ type: 'KRS', value: '0000277937' });
    await krs.close();
    const profile = snapshot!.profiles[0]!;
    assert.equal(profile.status, 'w restrukturyzacji');
    assert.deepEqual(
      profile.dates.find((d) => d.type === 'restructuring_start'),
      { type: 'restructuring_start', date: '2021-07-02' },
    );
    assert.deepEqual(
      snapshot!.persons.find((p) => p.role === 'ZARZĄDCA'),
      {
        full_name: 'KANCELARIA RESTRUKTURYZACYJNA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
        role: 'ZARZĄDCA',
      },
    );
    assert.deepEqual(profile.activities, []);
  });

  test('dates written in prose', () => {
    assert.equal(dateInText('SĄD REJONOWY … 5 SIERPNIA 2025 R.,  SYGN.'), '2025-08-05');
    assert.equal(dateInText('01.12.2005 R. - UCHWAŁA … Z DNIA 15.12.2005'), '2005-12-01');
    assert.equal(dateInText('[REDACTED]'), null);
    assert.equal(dateInText('31.02.2020'), null);
  });
});

describe('KRS bulletin and daily run', () => {
  test('the real hourly bulletin: padded, duplicates removed', async () => {
    const raw = readFixtureJson('krs/biuletyn-godzinowy-2026-09-22-godz-10-11.json') as string[];
    assert.equal(raw.length, 511);
    await withServer(
      (req) =>
        req.path === '/api/krs/Biuletyn/2026-09-22'
          ? jsonFixtureReply('krs/biuletyn-godzinowy-2026-09-22-godz-10-11.json')
          : problemReply(NOT_FOUND),
      async (server) => {
        const krs = source(server);
        const numbers = await krs.changedKrsNumbers('2026-09-22');
        await krs.close();
        assert.equal(numbers.length, 372);
        assert.ok(numbers.every((n) => /^\d{10}$/.test(n)));
        assert.equal(numbers.filter((n) => n === '0000038883').length, 1);
        assert.equal(numbers[0], '0000005204');
      },
    );
    assert.throws(() => parseBulletin({ not: 'an array' }, '2026-09-22'), MalformedPayloadError);
  });

  test('a bulletin-driven run end to end: snapshots in bulletin order, bad entities reported, run continues', async () => {
    const bulletin = ['28860', '30897', '28860', '440028', '999999', '121862', '1268296', '121862'];
    await withServer(
      krsApi((path) => {
        if (path === '/api/krs/Biuletyn/2026-09-22') return jsonReply(bulletin);
        // One entity's extract arrives truncated: its error is reported, the others go on.
        if (path === '/api/krs/OdpisAktualny/0000121862')
          return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"odpis": {"rodzaj": "Aktualny", "naglowekA": {' };
        return undefined;
      }),
      async (server) => {
        const errors: Array<[string, Error]> = [];
        const krs = source(server, { onEntityError: (id, error) => errors.push([id, error]) });
        const snapshots = await collect(krs.snapshotsForDate('2026-09-22'));
        await krs.close();
        assert.deepEqual(
          snapshots.map((s) => s.identity.identifiers[0]!.value),
          ['0000028860', '0000030897', '0000440028', '0001268296'],
        );
        assert.deepEqual(snapshots[0], mapKrsExtract(readFixtureJson(CURRENT['0000028860']!.file), '0000028860'));
        assert.equal(snapshots[2]!.profiles[0]!.status, 'wykreślony');
        assert.deepEqual(
          errors.map(([id, e]) => [id, e.constructor.name]),
          [
            ['0000999999', EntityNotFoundError.name],
            ['0000121862', MalformedPayloadError.name],
          ],
        );
        assert.match(errors[1]![1].message, /0000121862.*not valid JSON/);
      },
    );
  });

  test('a 500 is retried and the request then succeeds', async () => {
    let failures = 1;
    await withServer(
      krsApi((path) => {
        if (path === '/api/krs/OdpisAktualny/0000028860' && failures > 0) {
          failures -= 1;
          return { status: 500, body: 'Internal Server Error' };
        }
        return undefined;
      }),
      async (server) => {
        const krs = source(server);
        const snapshot = await krs.lookup!({ type: 'KRS', value: '0000028860' });
        await krs.close();
        assert.equal(snapshot!.profiles[0]!.name, 'ORLEN SPÓŁKA AKCYJNA');
        assert.equal(server.requests.filter((r) => r.path === '/api/krs/OdpisAktualny/0000028860').length, 2);
      },
    );
  });

  test('a timeout is retried and the request then succeeds', async () => {
    let slow = 1;
    await withServer(
      krsApi((path) => {
        if (path === '/api/krs/Biuletyn/2026-09-23' && slow-- > 0) return { ...jsonReply(['28860']), delayMs: 5_000 };
        if (path === '/api/krs/Biuletyn/2026-09-23') return jsonReply(['28860']);
        return undefined;
      }),
      async (server) => {
        const krs = source(server, { timeoutMs: 200 });
        const started = Date.now();
        const snapshots = await collect(krs.snapshotsForDate('2026-09-23'));
        await krs.close();
        assert.equal(snapshots.length, 1);
        assert.equal(server.requests.filter((r) => r.path === '/api/krs/Biuletyn/2026-09-23').length, 2);
        assert.ok(Date.now() - started < 4_000, 'the slow answer was not waited for');
      },
    );
  });

  test('a registry that keeps failing makes the daily run throw SourceUnavailableError', async () => {
    await withServer(
      () => ({ status: 503, body: 'Service Unavailable' }),
      async (server) => {
        const krs = source(server);
        await assert.rejects(collect(krs.snapshotsForDate('2026-09-22')), (error: unknown) => {
          assert.ok(error instanceof SourceUnavailableError);
          assert.equal(error.source, 'krs');
          assert.equal(error.status, 503);
          return true;
        });
        await krs.close();
        assert.equal(server.requests.length, FAST_RETRY.retries + 1);
      },
    );
  });

  test('extracts failing mid-run stop the run instead of being skipped', async () => {
    await withServer(
      krsApi((path) => {
        if (path === '/api/krs/Biuletyn/2026-09-22') return jsonReply(['28860', '413516']);
        if (path === '/api/krs/OdpisAktualny/0000413516') return { status: 502 };
        return undefined;
      }),
      async (server) => {
        const errors: string[] = [];
        const krs = source(server, { onEntityError: (id) => errors.push(id) });
        await assert.rejects(collect(krs.snapshotsForDate('2026-09-22')), SourceUnavailableError);
        await krs.close();
        assert.deepEqual(errors, []);
      },
    );
  });

  test('an unreachable host is a network-level SourceUnavailableError', async () => {
    const server = await startFixtureServer(() => ({ status: 200 }));
    const url = server.url;
    await server.close();
    const krs = createKrsSource({ baseUrl: url, retry: FAST_RETRY, timeoutMs: 500 });
    await assert.rejects(collect(krs.snapshotsForDate('2026-09-22')), (error: unknown) => {
      assert.ok(error instanceof SourceUnavailableError);
      assert.equal(error.reason, 'network');
      return true;
    });
    await krs.close();
  });

  test('the base URL may already end in /api/krs', async () => {
    await withServer(krsApi(), async (server) => {
      const krs = createKrsSource({ baseUrl: `${server.url}/api/krs/`, retry: FAST_RETRY });
      const snapshot = await krs.lookup!({ type: 'KRS', value: '1268296' });
      await krs.close();
      assert.equal(snapshot!.profiles[0]!.name, 'GYM CENTER 8.0 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    });
  });
});

test('countryCode: every Polish country name, in any case, and the forms KRS writes; unknown names kept', () => {
  const cases: [string, string][] = [
    ['POLSKA', 'PL'],
    ['PAKISTAN', 'PK'],
    ['ZJEDNOCZONE EMIRATY ARABSKIE', 'AE'],
    ['Niemcy', 'DE'],
    [' KOREA POŁUDNIOWA ', 'KR'],
    ['REPUBLIKA CZESKA', 'CZ'],
    ['ZJEDNOCZONE KRÓLESTWO', 'GB'],
    ['STANY ZJEDNOCZONE AMERYKI', 'US'],
    ['ATLANTYDA', 'ATLANTYDA'],
    ['', ''],
  ];
  assert.deepEqual(
    cases.map(([name]) => countryCode(name)),
    cases.map(([, code]) => code),
  );
});
