import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompanySnapshot } from '../src/registry/model.ts';
import {
  createVatSource,
  VatQuotaExceededError,
  type VatRequestRecord,
  type VatSourceOptions,
} from '../src/registry/sources/vat/vat-source.ts';
import { parseWhiteListAddress } from '../src/registry/sources/vat/vat-mapper.ts';
import { SourceDateOutOfRangeError, SourceUnavailableError, type UpstreamResponseError } from '../src/registry/sources/errors.ts';
import { jsonFixtureReply, jsonReply, readFixtureJson, type FixtureServer, withServer } from './helpers/fixture-server.ts';

const DIR = 'vat-whitelist/';
const FAST_RETRY = { retries: 2, backoffBaseMs: 5, backoffMaxMs: 20 };
// 2026-09-24 02:40 in Warsaw: the day the fixtures were recorded.
const clock = { now: () => new Date('2026-09-24T00:40:00Z') };

function source(server: FixtureServer, extra: Partial<VatSourceOptions> = {}) {
  return createVatSource({ baseUrl: `${server.url}/`, retry: FAST_RETRY, rateLimits: [], timeoutMs: 2_000, clock, ...extra });
}

async function collect(iterable: AsyncIterable<CompanySnapshot>): Promise<CompanySnapshot[]> {
  const out: CompanySnapshot[] = [];
  for await (const s of iterable) out.push(s);
  return out;
}

const ORLEN_ACCOUNTS = (
  readFixtureJson(`${DIR}search-nip-7740001454-orlen-czynny.json`) as { result: { subject: { accountNumbers: string[] } } }
).result.subject.accountNumbers;

describe('VAT white list lookup', () => {
  test('by NIP: status, sorted accounts, parsed address, identifiers; the request id is kept', async () => {
    const ids: VatRequestRecord[] = [];
    await withServer(
      (req) =>
        req.path === '/api/search/nip/7740001454' ? jsonFixtureReply(`${DIR}search-nip-7740001454-orlen-czynny.json`) : { status: 404 },
      async (server) => {
        const vat = source(server, { onRequestId: (r) => ids.push(r) });
        const snapshot = await vat.lookup!({ type: 'NIP', value: 'PL 774-000-14-54' });
        await vat.close();
        assert.equal(server.requests[0]!.query.get('date'), '2026-09-24');
        assert.deepEqual(snapshot!.identity, {
          identifiers: [
            { type: 'NIP', value: '7740001454' },
            { type: 'REGON9', value: '610188201' },
            { type: 'KRS', value: '0000028860' },
          ],
          company_type: '',
          country_code: 'PL',
        });
        const profile = snapshot!.profiles[0]!;
        assert.equal(profile.source, 'vat');
        assert.equal(profile.name, 'ORLEN SPÓŁKA AKCYJNA');
        assert.equal(profile.vat_status, 'Czynny');
        assert.equal(profile.status, 'Czynny');
        assert.deepEqual(profile.address, {
          street: 'CHEMIKÓW',
          building: '7',
          apartment: '',
          city: 'PŁOCK',
          postal_code: '09-411',
          voivodeship: '',
          country_code: 'PL',
        });
        assert.equal(profile.bank_accounts.length, 236);
        assert.deepEqual(profile.bank_accounts, [...ORLEN_ACCOUNTS].sort());
        assert.deepEqual(profile.dates, []);
        assert.deepEqual(snapshot!.persons, []);
        assert.deepEqual(ids, [
          {
            requestId: 'MVRqg-98jk3i1',
            requestDateTime: '24-09-2026 02:36:01',
            date: '2026-09-24',
            identifiers: ['7740001454'],
            kind: 'search',
          },
        ]);
      },
    );
  });

  test('by REGON; an unknown subject (null) and KRS give null', async () => {
    await withServer(
      (req) => {
        if (req.path === '/api/search/regon/610188201') return jsonFixtureReply(`${DIR}search-regon-610188201-orlen-czynny.json`);
        if (req.path.startsWith('/api/search/nip/')) return jsonFixtureReply(`${DIR}search-nip-not-found-subject-null.json`);
        return { status: 404 };
      },
      async (server) => {
        const vat = source(server);
        const snapshot = await vat.lookup!({ type: 'REGON9', value: '610188201' });
        assert.equal(snapshot!.profiles[0]!.vat_status, 'Czynny');
        assert.equal(await vat.lookup!({ type: 'NIP', value: '5260251049' }), null);
        assert.equal(await vat.lookup!({ type: 'KRS', value: '28860' }), null);
        await vat.close();
        assert.equal(server.requests.length, 2);
      },
    );
  });

  test('account checks (TAK/NIE, by NIP and REGON) and search by account', async () => {
    await withServer(
      (req) => {
        const m = /^\/api\/check\/(nip|regon)\/(\d+)\/bank-account\/(\d+)$/.exec(req.path);
        if (m && m[1] === 'nip' && m[2] === '7740001454') {
          return jsonFixtureReply(
            m[3] === ORLEN_ACCOUNTS[0] ? `${DIR}check-nip-account-assigned-tak.json` : `${DIR}check-nip-account-assigned-nie.json`,
          );
        }
        if (m && m[1] === 'nip' && m[2] === '5260251049') return jsonFixtureReply(`${DIR}check-nip-unregistered-account-assigned-nie.json`);
        if (m && m[1] === 'regon') return jsonFixtureReply(`${DIR}check-regon-account-assigned-tak.json`);
        if (req.path === `/api/search/bank-account/${ORLEN_ACCOUNTS[0]}`)
          return jsonFixtureReply(`${DIR}search-bank-account-orlen-subjects.json`);
        return { status: 404 };
      },
      async (server) => {
        const vat = source(server);
        assert.deepEqual(await vat.checkAccount({ type: 'NIP', value: '7740001454' }, `PL${ORLEN_ACCOUNTS[0]}`), {
          assigned: true,
          requestId: 'NiR01-98jk3mi',
          requestDateTime: '24-09-2026 02:37:54',
        });
        assert.equal((await vat.checkAccount({ type: 'NIP', value: '7740001454' }, '11 1111 1111 1111 1111 1111 1111')).assigned, false);
        assert.equal((await vat.checkAccount({ type: 'NIP', value: '5260251049' }, ORLEN_ACCOUNTS[0]!)).requestId, 'O88vp-98jk3n7');
        assert.equal((await vat.checkAccount({ type: 'REGON9', value: '610188201' }, ORLEN_ACCOUNTS[0]!)).assigned, true);
        const holders = await vat.findByBankAccount(ORLEN_ACCOUNTS[0]!);
        assert.deepEqual(
          holders.map((h) => h.identity.identifiers[0]!.value),
          ['7740001454'],
        );
        // Searches and checks are counted apart, as MF counts them.
        assert.equal(vat.remainingSearchRequests(), 99);
        await vat.close();
      },
    );
  });

  test('white-list error bodies: future date, date before the register, unknown route', async () => {
    await withServer(
      (req) => {
        if (req.path.startsWith('/api/search/nip/')) return jsonFixtureReply(`${DIR}error-400-WL-103-future-date.json`, 400);
        if (req.path.startsWith('/api/search/nips/'))
          return jsonFixtureReply(`${DIR}error-400-WL-118-date-before-register-range.json`, 400);
        if (req.path.startsWith('/api/check/')) return jsonFixtureReply(`${DIR}error-404-WL-190-unknown-route.json`, 404);
        return { status: 404 };
      },
      async (server) => {
        const vat = source(server, { nipsToRefresh: () => ['7740001454'] });
        await assert.rejects(
          vat.lookup!({ type: 'NIP', value: '7740001454' }),
          (e: unknown) => e instanceof SourceDateOutOfRangeError && /WL-103/.test(e.message),
        );
        await assert.rejects(
          collect(vat.snapshotsForDate('1990-01-01')),
          (e: unknown) => e instanceof SourceDateOutOfRangeError && /WL-118/.test(e.message),
        );
        await assert.rejects(
          vat.checkAccount({ type: 'NIP', value: '7740001454' }, ORLEN_ACCOUNTS[0]!),
          (e: unknown) => e instanceof SourceUnavailableError && /WL-190/.test(e.message),
        );
        await vat.close();
      },
    );
  });
});

describe('VAT white list daily refresh', () => {
  test('the NIPs to refresh are asked 30 at a time; per-entry errors reported, the others mapped', async () => {
    const nips = [
      '7740001454',
      '5260251049',
      '9999999982',
      'not-a-nip',
      '7740001454',
      ...Array.from({ length: 40 }, (_, i) => validNip(i)),
    ];
    const errors: Array<[string, string]> = [];
    const ids: string[] = [];
    await withServer(
      (req) => {
        if (!req.path.startsWith('/api/search/nips/')) return { status: 404 };
        const asked = req.path.slice('/api/search/nips/'.length).split(',');
        if (asked.includes('7740001454')) return jsonFixtureReply(`${DIR}search-nips-mixed-notfound-invalid-czynny-niezarejestrowany.json`);
        return jsonReply({
          result: {
            entries: asked.map((identifier) => ({ identifier, subjects: [] })),
            requestId: 'rest-1',
            requestDateTime: '24-09-2026 02:40:00',
          },
        });
      },
      async (server) => {
        const vat = source(server, {
          nipsToRefresh: async function* () {
            yield* nips;
          },
          onEntityError: (id, e) => errors.push([id, `${e.constructor.name}:${(e as UpstreamResponseError).code ?? ''}`]),
          onRequestId: (r) => ids.push(r.requestId),
        });
        // A run dated ahead of today reads today's state (the list refuses future dates).
        const snapshots = await collect(vat.snapshotsForDate('2026-12-31'));
        await vat.close();
        const asked = server.requests.map((r) => r.path.slice('/api/search/nips/'.length).split(','));
        assert.deepEqual(
          asked.map((a) => a.length),
          [30, 13],
        );
        assert.equal(asked.flat().filter((n) => n === '7740001454').length, 1, 'duplicates asked once');
        assert.ok(!asked.flat().includes('not-a-nip'));
        assert.ok(server.requests.every((r) => r.query.get('date') === '2026-09-24'));
        assert.deepEqual(
          snapshots.map((s) => [s.profiles[0]!.name, s.profiles[0]!.vat_status]),
          [
            ['ORLEN SPÓŁKA AKCYJNA', 'Czynny'],
            ['POWSZECHNY ZAKŁAD UBEZPIECZEŃ SPÓŁKA AKCYJNA', 'Niezarejestrowany'],
          ],
        );
        const pzu = snapshots[1]!;
        assert.deepEqual(pzu.profiles[0]!.bank_accounts, []);
        assert.deepEqual(pzu.profiles[0]!.address, {
          street: 'RONDO IGNACEGO DASZYŃSKIEGO',
          building: '4',
          apartment: '',
          city: 'WARSZAWA',
          postal_code: '00-843',
          voivodeship: '',
          country_code: 'PL',
        });
        assert.equal(pzu.persons.length, 7);
        assert.deepEqual(pzu.persons[0], { full_name: 'JAN KOWALSKI', role: 'REPREZENTANT' });
        assert.deepEqual(errors, [['7740001455', 'UpstreamResponseError:WL-115']]);
        assert.deepEqual(ids, ['MgWii-98jk3j7', 'rest-1']);
      },
    );
  });

  test('the daily search budget is respected; NIPs beyond it are reported, not asked', async () => {
    const nips = Array.from({ length: 70 }, (_, i) => validNip(i));
    const errors: Array<[string, Error]> = [];
    await withServer(
      (req) =>
        jsonReply({
          result: {
            entries: req.path
              .slice('/api/search/nips/'.length)
              .split(',')
              .map((identifier) => ({ identifier, subjects: [] })),
            requestId: 'x',
            requestDateTime: '',
          },
        }),
      async (server) => {
        const vat = source(server, { nipsToRefresh: () => nips, searchRequestsPerDay: 2, onEntityError: (id, e) => errors.push([id, e]) });
        await collect(vat.snapshotsForDate('2026-09-23'));
        assert.equal(server.requests.length, 2);
        assert.equal(errors.length, 10);
        assert.ok(errors.every(([, e]) => e instanceof VatQuotaExceededError));
        assert.deepEqual(
          errors.map(([id]) => id),
          nips.slice(60),
        );
        await assert.rejects(
          vat.lookup!({ type: 'NIP', value: '7740001454' }),
          (e: unknown) => e instanceof SourceUnavailableError && e.reason === 'rate_limited',
        );
        await vat.close();
      },
    );
  });

  test('WL-191 (daily limit reached upstream) fails the run; WL-196 (database update) is retried', async () => {
    let updating = 1;
    await withServer(
      (req) => {
        if (req.query.get('date') === '2026-09-22') return jsonReply({ code: 'WL-191', message: 'Wyczerpano dzienny limit zapytań.' }, 429);
        if (updating-- > 0) return jsonReply({ code: 'WL-196', message: 'Trwa aktualizacja bazy danych.' }, 400);
        return jsonReply({ result: { entries: [], requestId: 'ok', requestDateTime: '' } });
      },
      async (server) => {
        const vat = source(server, { nipsToRefresh: () => ['7740001454'] });
        await assert.rejects(
          collect(vat.snapshotsForDate('2026-09-22')),
          (e: unknown) => e instanceof SourceUnavailableError && e.reason === 'rate_limited',
        );
        const before = server.requests.length;
        assert.deepEqual(await collect(vat.snapshotsForDate('2026-09-23')), []);
        assert.equal(server.requests.length - before, 2);
        await vat.close();
      },
    );
  });

  test('without a list of NIPs the white list has nothing to refresh', async () => {
    await withServer(
      () => ({ status: 500 }),
      async (server) => {
        const vat = source(server);
        assert.deepEqual(await collect(vat.snapshotsForDate('2026-09-23')), []);
        await vat.close();
        assert.equal(server.requests.length, 0);
      },
    );
  });

  test('addresses as the white list writes them', () => {
    assert.deepEqual(parseWhiteListAddress('MARSZAŁKOWSKA 10/12, 00-590 WARSZAWA'), {
      street: 'MARSZAŁKOWSKA',
      building: '10',
      apartment: '12',
      city: 'WARSZAWA',
      postal_code: '00-590',
      voivodeship: '',
      country_code: 'PL',
    });
    assert.equal(parseWhiteListAddress('')?.street, undefined);
    assert.equal(parseWhiteListAddress('BEZ KODU')!.street, 'BEZ KODU');
    // A letter written apart from its number stays with it (KRS writes WOSP's seat `19 C`).
    const parts = (raw: string) => {
      const a = parseWhiteListAddress(raw)!;
      return [a.street, a.building, a.apartment];
    };
    assert.deepEqual(parts('DOMINIKAŃSKA 19 C, 02-738 WARSZAWA'), ['DOMINIKAŃSKA', '19 C', '']);
    assert.deepEqual(parts('DOMINIKAŃSKA 19 C/4, 02-738 WARSZAWA'), ['DOMINIKAŃSKA', '19 C', '4']);
    assert.deepEqual(parts('3 MAJA 5, 30-001 KRAKÓW'), ['3 MAJA', '5', '']);
    assert.deepEqual(parts('PLAC 1000-LECIA 5A, 30-001 KRAKÓW'), ['PLAC 1000-LECIA', '5A', '']);
    assert.deepEqual(parts('RYNEK, 30-001 KRAKÓW'), ['RYNEK', '', '']);
  });
});

/** The i-th valid NIP after 1000000000 (checksum computed, never all zeros). */
function validNip(i: number): string {
  const weights = [6, 5, 7, 2, 3, 4, 5, 6, 7];
  for (let n = 100_000_000 + i * 7; ; n++) {
    const first9 = String(n);
    const check = weights.reduce((sum, w, k) => sum + w * Number(first9[k]), 0) % 11;
    if (check < 10) return first9 + String(check);
  }
}
