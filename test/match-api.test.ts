import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { runDaily } from '../src/registry/daily.ts';
import { importCompany } from '../src/registry/import.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { regon14CheckDigit } from '../src/lib/identifiers.ts';
import { createMatchEngine, type MatchEngine } from '../src/modules/match/engine.ts';
import { bearer, createAccount, createTestApp, type TestApp } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, krsFor, nipFor, regonFor, type CompanySpec } from './helpers/registry.ts';

/** POST /companies/match over a small registry whose every answer is known (docs/match.md). */

const SPECS: CompanySpec[] = [
  {
    n: 1,
    name: 'ŁÓDZKIE ZAKŁADY MIĘSNE „KOŁO" SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    city: 'Łódź',
    postalCode: '90-001',
    street: 'ul. Piotrkowska',
  },
  { n: 2, name: 'NOWAK BUDOWNICTWO SPÓŁKA AKCYJNA', city: 'Kraków', postalCode: '30-001', street: 'ul. Długa' },
  // The same name three times: active in Gdańsk, active in Poznań, deleted in Gdańsk.
  { n: 3, name: 'JAN KOWALSKI USŁUGI REMONTOWE', city: 'Gdańsk', postalCode: '80-001', street: 'ul. Morska' },
  { n: 4, name: 'JAN KOWALSKI USŁUGI REMONTOWE', city: 'Poznań', postalCode: '60-001', street: 'ul. Polna' },
  { n: 5, name: 'JAN KOWALSKI USŁUGI REMONTOWE', city: 'Warszawa', postalCode: '00-001', street: 'ul. Polna', status: 'wykreślony' },
  { n: 6, name: 'PRZEDSIĘBIORSTWO HANDLOWO-USŁUGOWE MAXIMUS SPÓŁKA JAWNA', city: 'Wrocław', postalCode: '50-001' },
  { n: 7, name: 'ZIELONA DOLINA FUNDACJA', city: 'Lublin', postalCode: '20-001' },
];

async function seed(db: TestDatabase, specs: CompanySpec[], date: string) {
  await runDaily(db.db, { date, source: arraySource(specs.map(companySnapshot)), sourceKey: 'file:match-test' });
}

describe('POST /companies/match', () => {
  let t: TestApp;
  let engine: MatchEngine;
  let auth: { authorization: string };
  let accountId: string;

  before(async () => {
    const db = await createTestDatabase();
    await seed(db, SPECS, '2026-11-20');
    engine = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }) });
    t = await createTestApp({ db, overrides: { matchEngine: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    await engine.refresh();
    const account = await createAccount(t);
    auth = bearer(account.master);
    accountId = String(
      (await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow()).id,
    );
    await applyLedgerEntry(t.db.db, { accountId, type: 'deposit', amount: 1_000, description: 'test top-up' });
  });

  const post = (payload: unknown, headers: Record<string, string> = auth) =>
    t.app.inject({ method: 'POST', url: '/api/v1/companies/match', headers, payload: payload as object });
  type Candidate = {
    identifiers: { type: string; value: string }[];
    name: string;
    city: string | null;
    postal_code: string | null;
    status: string;
    score: number;
    match: boolean;
    features: string[];
  };
  const results = async (queries: object[]) => {
    const res = await post({ queries });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { status: string; data: { query_index: number; candidates: Candidate[] }[] };
    assert.equal(body.status, 'success');
    assert.deepEqual(
      body.data.map((d) => d.query_index),
      queries.map((_, i) => i),
    );
    return body.data.map((d) => d.candidates);
  };
  const nipOf = (c: Candidate | undefined) => c?.identifiers.find((i) => i.type === 'NIP')?.value;
  const matched = (cs: Candidate[]) => cs.filter((c) => c.match);

  test('messy names find their company: diacritics, case, quotes, legal forms, word order, a typo', async () => {
    const data = await results([
      { name: 'lodzkie zaklady miesne kolo sp. z o.o.', city: 'LODZ' },
      { name: 'Nowak Budownictwo S.A.' },
      { name: 'budownictwo nowak spolka akcyjna', city: 'Krakow' },
      { name: 'P.H.U. Maximus sp.j.', city: 'Wroclaw' },
      { name: 'Łódzkie Zakłady Mięsne Kołoo Spółka z o.o.' },
      { name: 'Przedsiębiorstwo Handlowo-Usługowe Maximos spółka jawna' },
    ]);
    assert.equal(nipOf(matched(data[0]!)[0]), nipFor(1));
    assert.equal(nipOf(matched(data[1]!)[0]), nipFor(2));
    assert.equal(nipOf(matched(data[2]!)[0]), nipFor(2));
    assert.equal(nipOf(data[3]![0]), nipFor(6), JSON.stringify(data[3]));
    assert.equal(nipOf(matched(data[4]!)[0]), nipFor(1));
    assert.equal(nipOf(matched(data[5]!)[0]), nipFor(6));
    const first = data[0]![0]!;
    assert.deepEqual(first.features, ['name', 'city']);
    assert.equal(first.score, 1);
    assert.equal(first.name, 'ŁÓDZKIE ZAKŁADY MIĘSNE „KOŁO" SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
    assert.equal(first.city, 'Łódź');
    assert.equal(first.postal_code, '90-001');
    assert.equal(first.status, 'ACTIVE');
    for (const cs of data) {
      assert.ok(cs.length <= 5);
      assert.ok(matched(cs).length <= 1);
      for (let i = 1; i < cs.length; i++) assert.ok(cs[i - 1]!.score >= cs[i]!.score, 'best first');
      for (const c of cs) assert.ok(c.score >= 0 && c.score <= 1);
    }
  });

  test('an identifier wins outright, written with dashes or a PL prefix; an invalid one matches nothing', async () => {
    const nip = nipFor(7);
    const dashed = `PL ${nip.slice(0, 3)}-${nip.slice(3, 6)}-${nip.slice(6, 8)}-${nip.slice(8)}`;
    const data = await results([{ nip: dashed }, { name: 'Nowak Budownictwo S.A.', nip: `PL${nip}` }, { nip: '1234567890' }]);
    assert.equal(nipOf(data[0]![0]), nip);
    assert.deepEqual(data[0]![0]!.features, ['identifier']);
    assert.equal(data[0]![0]!.match, true);
    assert.equal(data[0]![0]!.score, 1);
    // The identifier beats a better name.
    assert.equal(nipOf(matched(data[1]!)[0]), nip);
    assert.equal(nipOf(data[1]![0]), nip);
    assert.deepEqual(data[2], []);
  });

  test('an identifier cell as lists hold it: its label, quotes, the spreadsheet text mark, full-width digits', async () => {
    const nip = nipFor(7);
    const queries = [
      { nip: `NIP: ${nip.slice(0, 3)}-${nip.slice(3, 6)}-${nip.slice(6, 8)}-${nip.slice(8)}` },
      { nip: `NIP PL${nip}` },
      { krs: `KRS nr ${krsFor(7)}` },
      { krs: `Nr KRS: ${krsFor(7)}` },
      { regon: `REGON: ${regonFor(7)}` },
      { nip: `'${nip}` },
      { nip: `"${nip}"` },
      // A 14-digit REGON: a local unit's, or the entity's as systems storing every REGON in 14 digits write it.
      { regon: `${regonFor(7)}0000${regon14CheckDigit(`${regonFor(7)}0000`)}` },
      { nip: nip.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d))) },
    ];
    const data = await results(queries);
    data.forEach((cs, i) => {
      assert.equal(nipOf(matched(cs)[0]), nip, `${JSON.stringify(queries[i])}: ${JSON.stringify(cs)}`);
      assert.deepEqual(cs[0]!.features, ['identifier']);
    });
    // A 14-digit number whose REGON14 checksum fails names nothing, whatever its first nine digits.
    const unit = `${regonFor(7)}0000`;
    const [bad] = await results([{ regon: `${unit}${(regon14CheckDigit(unit) + 1) % 10}` }]);
    assert.deepEqual(bad, []);
  });

  test('a shared name: the address decides; deleted companies rank below active ones; no address, no bet', async () => {
    const data = await results([
      { name: 'Jan Kowalski Usługi Remontowe', city: 'Poznan' },
      { name: 'Jan Kowalski Usługi Remontowe', postal_code: '80001' },
      { name: 'Jan Kowalski Usługi Remontowe' },
      { name: 'Jan Kowalski Usługi Remontowe', street: 'Polna 5' },
    ]);
    assert.equal(nipOf(matched(data[0]!)[0]), nipFor(4));
    assert.deepEqual(data[0]![0]!.features, ['name', 'city']);
    assert.equal(nipOf(matched(data[1]!)[0]), nipFor(3));
    assert.deepEqual(matched(data[2]!), []);
    assert.equal(data[2]!.length, 3);
    assert.equal(data[2]![2]!.status, 'DELETED');
    assert.ok(data[2]![2]!.score < data[2]![1]!.score);
    // Street agrees with two (one deleted): the active one first, no bet between them… or on it alone.
    assert.equal(nipOf(data[3]![0]), nipFor(4));
    assert.deepEqual(data[3]![0]!.features, ['name', 'street']);
  });

  test("a city written with its postal code, as a list's address column holds it, still agrees on the city", async () => {
    const data = await results([
      { name: 'Nowak Budownictwo S.A.', city: '30-001 Kraków' },
      { name: 'Jan Kowalski Usługi Remontowe', city: 'Poznań, 60-001' },
    ]);
    assert.deepEqual(data[0]![0]!.features, ['name', 'city'], JSON.stringify(data[0]));
    assert.equal(data[0]![0]!.score, 1);
    // The name three companies share: the city tells them apart.
    assert.equal(nipOf(matched(data[1]!)[0]), nipFor(4), JSON.stringify(data[1]));
  });

  test('nothing alike: no candidates, or none bet on', async () => {
    const data = await results([{ name: 'Zupełnie Inna Nazwa Firmy Xyzzy' }, { name: 'sp. z o.o.', city: 'Łódź' }]);
    assert.deepEqual(matched(data[0]!), []);
    assert.deepEqual(data[1], []);
  });

  test('422: empty batch, over 100 queries, a query with neither name nor identifier, strings over their bounds', async () => {
    const cases: [unknown, string][] = [
      [{ queries: [] }, 'queries'],
      [{ queries: Array.from({ length: 101 }, () => ({ name: 'x' })) }, 'queries'],
      [{ queries: [{ name: 'Nowak' }, { city: 'Łódź' }] }, 'queries.1'],
      [{ queries: [{ name: '   ', postal_code: '90-001' }] }, 'queries.0'],
      [{ queries: [{ name: 'x'.repeat(301) }] }, 'queries.0.name'],
      [{ queries: [{ name: 'Nowak', city: 'x'.repeat(101) }] }, 'queries.0.city'],
      [{ queries: [{ nip: '1'.repeat(31) }] }, 'queries.0.nip'],
      [{ queries: [{ name: 'Nowak', street: 'x'.repeat(201) }] }, 'queries.0.street'],
      [{}, 'queries'],
    ];
    const before = await balance();
    for (const [payload, field] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`);
      const body = res.json() as { message: string; errors: Record<string, string[]> };
      assert.ok(body.errors[field], `expected an error on ${field}: ${res.body}`);
      assert.equal(body.message, Object.values(body.errors).flat()[0]);
    }
    assert.equal(await balance(), before, 'a refused batch costs nothing');
  });

  test("422 says every problem at once: a field the schema refuses and a query with neither name nor identifier, in the items' order", async () => {
    const mixed = await post({ queries: [{ name: 5 }, {}] });
    assert.equal(mixed.statusCode, 422);
    assert.deepEqual(Object.keys(mixed.json().errors), ['queries.0.name', 'queries.1']);
    assert.match(mixed.json().message, /^The queries\.0\.name field must be a string\. \(and 1 more error\)$/);
    const three = await post({ queries: [{}, { city: 'x' }, { name: 5 }] });
    assert.deepEqual(Object.keys(three.json().errors), ['queries.0', 'queries.1', 'queries.2.name']);
    assert.match(three.json().message, /^The queries item 0 must have a name or an identifier .*\(and 2 more errors\)$/);
  });

  test('401 without a token', async () => {
    const res = await post({ queries: [{ name: 'Nowak' }] }, {});
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'UNAUTHORIZED');
  });

  async function balance(): Promise<number> {
    const w = await t.db.db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return Number(w.balance);
  }
  const usageRows = () =>
    t.db.db
      .selectFrom('wallet_transactions')
      .select(['amount', 'description'])
      .where('account_id', '=', accountId)
      .where('type', '=', 'usage')
      .orderBy('id')
      .execute();

  test('one credit a query, charged once for the batch (balance and ledger)', async () => {
    const b0 = await balance();
    const rows0 = (await usageRows()).length;
    const res = await post({ queries: [{ name: 'Nowak Budownictwo' }, { name: 'Maximus' }, { nip: nipFor(7) }] });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-credits-charged'], '3');
    assert.equal(await balance(), b0 - 3);
    const rows = await usageRows();
    assert.equal(rows.length, rows0 + 1);
    assert.deepEqual(rows.at(-1), { amount: '-3', description: 'companies.match' });
  });

  test('402 when the wallet cannot pay for the whole batch; nothing is charged', async () => {
    const b0 = await balance();
    await applyLedgerEntry(t.db.db, { accountId, type: 'usage', amount: -(b0 - 2), description: 'test drain' });
    const rows0 = (await usageRows()).length;
    const res = await post({ queries: [{ name: 'Nowak' }, { name: 'Maximus' }, { name: 'Kowalski' }] });
    assert.equal(res.statusCode, 402, res.body);
    assert.deepEqual(res.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 2, required: 3 });
    assert.equal(await balance(), 2);
    assert.equal((await usageRows()).length, rows0);
    // Two queries it can pay for.
    const ok = await post({ queries: [{ name: 'Nowak' }, { name: 'Maximus' }] });
    assert.equal(ok.statusCode, 200);
    assert.equal(await balance(), 0);
    await applyLedgerEntry(t.db.db, { accountId, type: 'deposit', amount: 1_000, description: 'test top-up' });
  });

  test('the index follows the registry: a later run adds a company (a small run: a delta, no rebuild)', async () => {
    const builtBefore = engine.status().buildMs;
    await seed(t.db, [...SPECS, { n: 8, name: 'NOWOPOWSTAŁA SPÓŁKA TESTOWA SP. Z O.O.', city: 'Opole' }], '2026-11-21');
    await engine.refresh();
    const data = await results([{ name: 'Nowopowstała Spółka Testowa sp. z o.o.' }]);
    assert.equal(nipOf(matched(data[0]!)[0]), nipFor(8));
    assert.equal(engine.status().buildMs, builtBefore);
    assert.equal(engine.status().rebuilding, false);
  });

  test('an on-demand import is matched from the next batch on, without a rebuild', async () => {
    const builtBefore = engine.status().buildMs;
    const snapshot = companySnapshot({ n: 900, name: 'STOCZNIA IMPORTOWANA SPÓŁKA AKCYJNA', city: 'Gdańsk', postalCode: '80-958' });
    snapshot.profiles[0]!.source = 'krs';
    const lookup = {
      name: 'krs' as const,
      async *snapshotsForDate() {},
      async lookup() {
        return snapshot;
      },
    };
    const imported = await importCompany(
      { db: t.db.db, logger: pino({ level: 'silent' }), sources: [lookup] },
      { type: 'NIP', value: nipFor(900) },
    );
    assert.equal(imported.found, true);
    const data = await results([{ name: 'Stocznia Importowana S.A.', city: 'Gdansk' }, { nip: nipFor(900) }]);
    assert.equal(nipOf(matched(data[0]!)[0]), nipFor(900));
    assert.equal(nipOf(matched(data[1]!)[0]), nipFor(900));
    assert.equal(engine.status().buildMs, builtBefore);
    assert.equal(engine.status().rebuilding, false);
  });

  test('OpenAPI documents the route with its examples and price', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/companies/match'].post;
    assert.match(op.description, /1 credit/);
    assert.ok(JSON.stringify(op.requestBody).includes('orlen sa'));
    assert.ok(op.responses['200'] && op.responses['402'] && op.responses['422'] && op.responses['503']);
  });
});

describe('POST /companies/match: rate limits and a cold index', () => {
  test("the account's rate limit applies", async () => {
    const db = await createTestDatabase();
    await seed(db, SPECS, '2026-11-20');
    const t = await createTestApp({ db, env: { RATE_LIMIT_PER_MINUTE: '2' } });
    const account = await createAccount(t);
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/companies/match',
        headers: bearer(account.master),
        payload: { queries: [{ name: 'Nowak' }] },
      });
      codes.push(res.statusCode);
      assert.ok(res.headers['x-ratelimit-limit']);
    }
    assert.equal(codes.at(-1), 429);
  });

  test('an index built before the registry was loaded waits for its rebuild rather than answer nothing', async () => {
    const db = await createTestDatabase();
    // Built in this thread: a worker thread's build runs at nice 19, which on a loaded machine can
    // outlast the 5 s a batch waits; where the build runs is not what this test is about.
    const fresh = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }), maxDelta: 2, buildIn: 'thread' });
    await fresh.refresh();
    assert.equal(fresh.status().companies, 0);
    const app = await createTestApp({ db, overrides: { matchEngine: fresh }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    const account = await createAccount(app);
    // A load larger than the index takes as a delta: it is rebuilt, in the background.
    await seed(db, SPECS, '2026-11-21');
    const res = await app.app.inject({
      method: 'POST',
      url: '/api/v1/companies/match',
      headers: bearer(account.master),
      payload: { queries: [{ nip: nipFor(2) }] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [only] = res.json().data as { candidates: { match: boolean; name: string }[] }[];
    assert.equal(only!.candidates[0]?.match, true, res.body);
    assert.equal(only!.candidates[0]?.name, 'NOWAK BUDOWNICTWO SPÓŁKA AKCYJNA');
    await fresh.stop();
  });

  test('503 while the index is not built yet; nothing charged', async () => {
    const db = await createTestDatabase();
    const never: MatchEngine = {
      start() {},
      current: async () => null,
      refresh: async () => {},
      status: () => ({ ready: false, companies: null, bytes: null, buildMs: null, rebuilding: true }),
      stop: async () => {},
    };
    const t = await createTestApp({ db, overrides: { matchEngine: never }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    const account = await createAccount(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/companies/match',
      headers: bearer(account.master),
      payload: { queries: [{ name: 'Nowak' }] },
    });
    assert.equal(res.statusCode, 503);
    assert.match(res.json().message, /match index is being built/);
    const w = await t.db.db
      .selectFrom('wallets')
      .innerJoin('accounts', 'accounts.id', 'wallets.account_id')
      .select('balance')
      .where('user_ref', '=', account.userRef)
      .executeTakeFirstOrThrow();
    assert.equal(Number(w.balance), 100);
  });
});
