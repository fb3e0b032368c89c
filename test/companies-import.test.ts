import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { importCompany, ImportUnavailableError } from '../src/registry/import.ts';
import { createKrsSource } from '../src/registry/sources/krs/krs-source.ts';
import { createLiveSources } from '../src/registry/sources/index.ts';
import { findCompanyByIdentifier } from '../src/registry/store.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { testConfig } from './helpers/app.ts';
import { startFixtureServer, type FixtureServer } from './helpers/fixture-server.ts';
import { krsApi } from './companies-dataset.test.ts';
import { createManualClock } from '../src/lib/clock.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

const logger = pino({ level: 'silent' });
describe('importCompany', () => {
  let server: FixtureServer;
  let db: TestDatabase;
  before(async () => {
    server = await startFixtureServer(krsApi);
    db = await createTestDatabase();
  });
  after(() => server.close());

  const deps = (env: Record<string, string> = {}) => ({
    db: db.db,
    sources: createLiveSources(testConfig({ REGISTRY_SOURCES: 'krs', KRS_API_URL: server.url, ...env })),
    logger,
    clock: createManualClock('2026-11-20T10:00:00Z'),
  });

  test('a KRS number no one knows is fetched from KRS, stored with every identifier, and found again without a request', async () => {
    const d = deps();
    const r = await importCompany(d, { type: 'KRS', value: '28860' });
    assert.equal(r.found, true);
    assert.match(r.companyId!, /^\d+$/);
    const stored = await findCompanyByIdentifier(db.db, { type: 'NIP', value: '7740001454' });
    assert.equal(stored?.id, r.companyId);
    assert.equal(stored?.name, 'ORLEN SPÓŁKA AKCYJNA');
    assert.equal(stored?.first_seen_date, '2026-11-20');
    assert.deepEqual(
      stored?.snapshot.profiles.map((p) => p.source),
      ['krs'],
    );

    const requests = server.requests.length;
    const again = await importCompany(d, { type: 'REGON9', value: '610188201' });
    assert.deepEqual(again, { found: true, companyId: r.companyId });
    assert.equal(server.requests.length, requests, 'a known company costs no registry request');

    const run = await db.db.selectFrom('daily_runs').selectAll().where('source_key', 'like', 'import:%').execute();
    assert.equal(run.length, 1);
    assert.equal(run[0]!.source_key, 'import:krs:KRS:0000028860');
    assert.equal(run[0]!.status, 'completed');
    assert.equal(run[0]!.new_count, 1);
  });

  test('an association of register S is imported too (P answers 404 first)', async () => {
    const r = await importCompany(deps(), { type: 'KRS', value: '0000030897' });
    assert.equal(r.found, true);
  });

  test('a valid KRS number neither register knows: not found, nothing stored', async () => {
    const before = await db.db
      .selectFrom('companies')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const r = await importCompany(deps(), { type: 'KRS', value: '0000999999' });
    assert.deepEqual(r, { found: false });
    const afterCount = await db.db
      .selectFrom('companies')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(afterCount.n), Number(before.n));
  });

  test('KRS is asked only about KRS numbers: a NIP nobody knows is not found', async () => {
    const requests = server.requests.length;
    const r = await importCompany(deps(), { type: 'NIP', value: '5261040828' });
    assert.deepEqual(r, { found: false });
    assert.equal(server.requests.length, requests);
  });

  test('no live source configured (synthetic only, or none): not found without a request', async () => {
    const requests = server.requests.length;
    assert.deepEqual(await importCompany(deps({ REGISTRY_SOURCES: 'synthetic' }), { type: 'KRS', value: '0000121862' }), { found: false });
    assert.deepEqual(await importCompany(deps({ REGISTRY_SOURCES: '' }), { type: 'KRS', value: '0000121862' }), { found: false });
    assert.equal(server.requests.length, requests);
  });

  test('an invalid identifier is not found (callers validate first)', async () => {
    assert.deepEqual(await importCompany(deps(), { type: 'NIP', value: '1234567890' }), { found: false });
  });

  test('a source that fails while no other knows the company: ImportUnavailableError, not "not found"', async () => {
    const down = await startFixtureServer(() => ({ status: 503, body: 'maintenance' }));
    try {
      const krs = createKrsSource({ baseUrl: down.url, retry: { retries: 1, backoffBaseMs: 1, backoffMaxMs: 2 }, timeoutMs: 1000 });
      await assert.rejects(importCompany({ ...deps(), sources: [krs] }, { type: 'KRS', value: '0000121862' }), ImportUnavailableError);
      await krs.close();
    } finally {
      await down.close();
    }
  });

  test('injected sources replace the configured ones; concurrent imports of one identifier store one company', async () => {
    let lookups = 0;
    const snapshot = {
      identity: { identifiers: [{ type: 'KRS' as const, value: '0000405063' }], company_type: 'SPÓŁKA Z O.O.', country_code: 'PL' },
      profiles: [
        {
          source: 'krs' as const,
          name: 'EASYSOLAR SP. Z O.O.',
          status: 'aktywny',
          legal_form: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
          address: null,
          units: [],
          contacts: [],
          activities: [],
          dates: [],
          websites: [],
          vat_status: null,
          bank_accounts: [],
        },
      ],
      persons: [],
    };
    const slow = {
      name: 'krs' as const,
      async *snapshotsForDate() {},
      async lookup() {
        lookups++;
        await new Promise((r) => setTimeout(r, 50));
        return snapshot;
      },
    };
    const d = { ...deps({ REGISTRY_SOURCES: '' }), sources: [slow] };
    const results = await Promise.all([1, 2, 3].map(() => importCompany(d, { type: 'KRS', value: '405063' })));
    assert.ok(results.every((r) => r.found && r.companyId === results[0]!.companyId));
    const rows = await db.db
      .selectFrom('company_identifiers')
      .selectAll()
      .where('key', '=', storedIdentifierKey('KRS', '0000405063'))
      .execute();
    assert.equal(rows.length, 1);
    assert.ok(lookups >= 1);
  });
});
