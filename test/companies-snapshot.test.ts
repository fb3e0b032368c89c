import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { runDaily } from '../src/registry/daily.ts';
import { createKrsSource } from '../src/registry/sources/krs/krs-source.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { startFixtureServer, type FixtureServer } from './helpers/fixture-server.ts';
import { ALFA, COMPANIES, IOTA_REGON, THETA_KRS, krsApi, sourceOf } from './companies-dataset.test.ts';

const ORLEN_NIP = '7740001454';

describe('POST /companies/snapshot', () => {
  let t: TestApp;
  let krs: FixtureServer;
  let engine: CompanySearchEngine;
  let account: TestAccount;
  let auth: { authorization: string };

  before(async () => {
    krs = await startFixtureServer(krsApi);
    const db = await createTestDatabase();
    await runDaily(db.db, { date: '2026-11-20', source: sourceOf(COMPANIES), sourceKey: 'file:snapshot-test' });
    engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }) });
    const source = createKrsSource({ baseUrl: krs.url, retry: { retries: 0 }, timeoutMs: 2000 });
    t = await createTestApp({
      db,
      overrides: { companySearch: engine, registrySources: [source] },
      env: { RATE_LIMIT_PER_MINUTE: '100000' },
    });
    await engine.refresh();
    account = await createAccount(t);
    auth = bearer(account.master);
    const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow();
    await applyLedgerEntry(t.db.db, { accountId: id, type: 'deposit', amount: 1000, description: 'test top-up' });
  });
  after(() => krs.close());

  const snapshot = (payload: unknown, headers = auth) =>
    t.app.inject({ method: 'POST', url: '/api/v1/companies/snapshot', headers, payload: payload as object });

  test('200: the stored snapshot with its model additions, and meta.fetched_at', async () => {
    const res = await snapshot({ identifier_type: 'NIP', identifier_value: ALFA });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'success');
    assert.deepEqual(body.data.identity, {
      identifiers: [
        { type: 'NIP', value: ALFA },
        { type: 'KRS', value: '0000000101' },
      ],
      company_type: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      country_code: 'PL',
    });
    assert.equal(body.data.profiles.length, 1);
    const p = body.data.profiles[0];
    assert.equal(p.source, 'file');
    assert.equal(p.vat_status, null);
    assert.deepEqual(p.bank_accounts, []);
    assert.equal(p.name, 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    assert.deepEqual(p.address, {
      street: 'Prosta',
      building: '1',
      apartment: '',
      city: 'Łódź',
      postal_code: '90-001',
      voivodeship: 'łódzkie',
      country_code: 'PL',
    });
    assert.deepEqual(
      p.activities.map((a: { code: string; is_primary: boolean }) => [a.code, a.is_primary]),
      [
        ['49.41.Z', true],
        ['52.29.C', false],
      ],
    );
    assert.deepEqual(p.dates, [{ type: 'activity_start', date: '2020-05-01' }]);
    assert.deepEqual(p.units, []);
    assert.deepEqual(body.data.persons, []);
    assert.ok(Math.abs(Date.parse(body.meta.fetched_at) - Date.now()) < 60_000);
    assert.equal(body.meta.first_seen_date, '2026-11-20');
    assert.equal(body.meta.last_changed_date, null);
    assert.equal(body.meta.data_as_of, '2026-11-20', 'the latest completed daily run');
  });

  test('formatting variants the identifiers accept: NIP with spaces, dashes, a PL prefix; KRS with or without zeros; REGON9', async () => {
    const dashed = `${ALFA.slice(0, 3)}-${ALFA.slice(3, 6)}-${ALFA.slice(6, 8)}-${ALFA.slice(8)}`;
    const spaced = `${ALFA.slice(0, 3)} ${ALFA.slice(3, 6)} ${ALFA.slice(6, 8)} ${ALFA.slice(8)}`;
    for (const value of [ALFA, dashed, spaced, `PL${ALFA}`, `pl ${dashed}`, `  ${ALFA}  `]) {
      const res = await snapshot({ identifier_type: 'NIP', identifier_value: value });
      assert.equal(res.statusCode, 200, `${value}: ${res.body}`);
      assert.equal(res.json().data.identity.identifiers[0].value, ALFA);
    }
    for (const value of ['101', '0000000101', '000101']) {
      const res = await snapshot({ identifier_type: 'KRS', identifier_value: value });
      assert.equal(res.statusCode, 200, value);
      assert.equal(res.json().data.identity.identifiers[0].value, ALFA, 'the KRS belongs to the same company');
    }
    const byRegon = await snapshot({ identifier_type: 'REGON9', identifier_value: IOTA_REGON });
    assert.equal(byRegon.statusCode, 200);
    assert.equal(byRegon.json().data.profiles[0].name, 'Piekarnia Iota Anna Nowak');
    const byKrs = await snapshot({ identifier_type: 'KRS', identifier_value: THETA_KRS.replace(/^0+/, '') });
    assert.equal(byKrs.json().data.profiles[0].name, 'Stowarzyszenie Theta');
  });

  test('422: type outside the enum, value over 50 characters, bad checksums naming the type, missing or non-string fields', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ identifier_type: 'VAT', identifier_value: ALFA }, 'identifier_type', /invalid/],
      [{ identifier_type: 'NIP', identifier_value: '1'.repeat(51) }, 'identifier_value', /50 characters/],
      [
        { identifier_type: 'NIP', identifier_value: '1234567890' },
        'identifier_value',
        /^The NIP must be 10 digits with a valid checksum\.$/,
      ],
      [{ identifier_type: 'NIP', identifier_value: `${ALFA}1` }, 'identifier_value', /NIP/],
      [
        { identifier_type: 'REGON9', identifier_value: '123456789' },
        'identifier_value',
        /^The REGON9 must be 9 digits with a valid checksum\.$/,
      ],
      [{ identifier_type: 'KRS', identifier_value: '12345678901' }, 'identifier_value', /^The KRS must be/],
      [{ identifier_type: 'KRS', identifier_value: '0000000000' }, 'identifier_value', /KRS/],
      [{ identifier_type: 'KRS', identifier_value: "1' OR '1'='1" }, 'identifier_value', /KRS/],
      [{ identifier_type: 'NIP' }, 'identifier_value', /required/],
      [{ identifier_value: ALFA }, 'identifier_type', /required/],
      [{ identifier_type: 'NIP', identifier_value: Number(ALFA) }, 'identifier_value', /string/],
    ];
    for (const [payload, field, message] of cases) {
      const res = await snapshot(payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      const body = res.json();
      assert.ok(body.errors[field], `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(body.errors[field][0], message);
      assert.equal(body.message, body.errors[field][0]);
    }
  });

  test('404 {message: "Company not found"} for a valid identifier no source knows, and nothing is charged', async () => {
    const before = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth })).json().data.balance;
    const requests = krs.requests.length;
    const res = await snapshot({ identifier_type: 'KRS', identifier_value: '999999' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: 'Company not found' });
    assert.ok(krs.requests.length > requests, 'the live source was asked first');
    const nip = await snapshot({ identifier_type: 'NIP', identifier_value: '5261040828' });
    assert.equal(nip.statusCode, 404, 'KRS cannot look up a NIP; no other source is configured');
    const afterBalance = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: auth })).json().data.balance;
    assert.equal(afterBalance, before);
  });

  test('on-demand import: an unknown KRS number is fetched from KRS, stored, returned, then found by search at once', async () => {
    const res = await snapshot({ identifier_type: 'KRS', identifier_value: '28860' });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.deepEqual(data.identity.identifiers, [
      { type: 'NIP', value: ORLEN_NIP },
      { type: 'REGON9', value: '610188201' },
      { type: 'KRS', value: '0000028860' },
    ]);
    assert.equal(data.profiles[0].source, 'krs');
    assert.equal(data.profiles[0].name, 'ORLEN SPÓŁKA AKCYJNA');
    assert.equal(data.persons.length, 24);

    const requests = krs.requests.length;
    const byNip = await snapshot({ identifier_type: 'NIP', identifier_value: `PL ${ORLEN_NIP}` });
    assert.equal(byNip.statusCode, 200);
    assert.equal(krs.requests.length, requests, 'stored now: no second registry request');

    // No refresh: an import is applied to the in-memory index by the next search itself.
    const found = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search?q=orlen&city=plock', headers: auth });
    assert.equal(found.statusCode, 200);
    assert.equal(engine.status().engine, 'memory');
    assert.equal(found.json().data.total, 1);
    assert.deepEqual(found.json().data.results[0].identifiers[0], { type: 'NIP', value: ORLEN_NIP });
  });

  test('503 when the only source that could know the company cannot be reached; not charged', async () => {
    const down = await startFixtureServer(() => ({ status: 503, body: 'maintenance' }));
    const db = t.db;
    const source = createKrsSource({ baseUrl: down.url, retry: { retries: 0 }, timeoutMs: 1000 });
    const t2 = await createTestApp({
      db,
      overrides: { companySearch: engine, registrySources: [source] },
      env: { RATE_LIMIT_PER_MINUTE: '100000' },
    });
    try {
      const res = await t2.app.inject({
        method: 'POST',
        url: '/api/v1/companies/snapshot',
        headers: auth,
        payload: { identifier_type: 'KRS', identifier_value: '121862' },
      });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), { message: 'The company registry could not be reached. Try again later.' });
      assert.equal(res.headers['x-credits-charged'], undefined);
    } finally {
      await down.close();
    }
  });

  test('401 without a token; 402 on an empty wallet; exactly 1 credit per snapshot and none for 404 or 422', async () => {
    const anon = await t.app.inject({
      method: 'POST',
      url: '/api/v1/companies/snapshot',
      payload: { identifier_type: 'NIP', identifier_value: ALFA },
    });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });
    const malformed = await snapshot({ identifier_type: 'NIP', identifier_value: ALFA }, { authorization: 'Bearer nope' });
    assert.equal(malformed.statusCode, 401);

    const other = await createAccount(t);
    const headers = bearer(other.master);
    const balance = async () => (await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers })).json().data.balance as number;
    assert.equal((await snapshot({ identifier_type: 'NIP', identifier_value: ALFA }, headers)).statusCode, 200);
    assert.equal(await balance(), 99);
    assert.equal((await snapshot({ identifier_type: 'NIP', identifier_value: '1234567890' }, headers)).statusCode, 422);
    assert.equal((await snapshot({ identifier_type: 'NIP', identifier_value: '5261040828' }, headers)).statusCode, 404);
    assert.equal(await balance(), 99);

    const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', other.userRef).executeTakeFirstOrThrow();
    await applyLedgerEntry(t.db.db, { accountId: id, type: 'usage', amount: -99, description: 'drain' });
    const broke = await snapshot({ identifier_type: 'NIP', identifier_value: ALFA }, headers);
    assert.equal(broke.statusCode, 402);
    assert.deepEqual(broke.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
    const usage = await t.db.db
      .selectFrom('wallet_transactions')
      .select(['amount', 'description'])
      .where('account_id', '=', id)
      .where('type', '=', 'usage')
      .execute();
    assert.deepEqual(
      usage.map((u) => [Number(u.amount), u.description]),
      [
        [-1, 'companies.snapshot'],
        [-99, 'drain'],
      ],
    );
  });
});
