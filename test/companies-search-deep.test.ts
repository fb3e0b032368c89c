import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { seedSyntheticCompanies } from '../src/registry/demo.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createCompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { bearer, createAccount, createTestApp, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * Pages beyond 500 (docs/search.md, "Pages") over a registry where a search has more than
 * 10,000 results: such a page is refused while it would hold results, and empty (200, charged as
 * any search) past the last page; both engines answer alike.
 */

for (const mode of ['memory', 'sql'] as const) {
  describe(`search pages beyond 500 (${mode} engine)`, () => {
    let t: TestApp;
    let auth: { authorization: string };
    let accountId: string;

    before(async () => {
      const db = await createTestDatabase();
      await seedSyntheticCompanies(db.db, { count: 11_200, seed: 3, date: '2026-11-01' });
      const engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), mode });
      t = await createTestApp({ db, overrides: { companySearch: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
      await engine.refresh();
      const account = await createAccount(t);
      auth = bearer(account.master);
      ({ id: accountId } = await t.db.db
        .selectFrom('accounts')
        .select('id')
        .where('user_ref', '=', account.userRef)
        .executeTakeFirstOrThrow());
      await applyLedgerEntry(t.db.db, { accountId, type: 'deposit', amount: 1_000, description: 'test top-up' });
    });

    const search = (query: string) => t.app.inject({ method: 'GET', url: `/api/v1/companies/search?${query}`, headers: auth });
    const balance = async () =>
      Number((await t.db.db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow()).balance);

    test('a page beyond 500 that would hold results is a 422 on page, charging nothing; past the last page it is empty', async () => {
      const wide = (await search('status=ACTIVE')).json().data as { total: number; last_page: number };
      assert.ok(wide.total > 10_020, `the test needs more than 10,020 active companies, has ${wide.total}`);
      assert.equal(wide.last_page, Math.ceil(wide.total / 20), 'last_page stays the arithmetic one');

      const before = await balance();
      const deep = await search('status=ACTIVE&page=501');
      assert.equal(deep.statusCode, 422, deep.body);
      assert.deepEqual(Object.keys(deep.json().errors), ['page']);
      assert.match(deep.json().message, /^The page field must not be greater than 500 while there are results beyond it/);
      assert.equal(await balance(), before, 'a refused page is not charged');

      const last = await search('status=ACTIVE&page=500');
      assert.equal(last.statusCode, 200);
      assert.equal(last.json().data.results.length, 20);

      const past = await search(`status=ACTIVE&page=${wide.last_page + 1}`);
      assert.equal(past.statusCode, 200, past.body);
      assert.deepEqual(
        { ...past.json().data, results: past.json().data.results.length },
        { ...wide, results: 0, current_page: wide.last_page + 1, per_page: 20, data_as_of: past.json().data.data_as_of },
      );
      // A narrow search has no page 501: it is past the last one, empty.
      const narrow = await search('status=SUSPENDED&page=501');
      assert.equal(narrow.statusCode, 200, narrow.body);
      assert.equal(narrow.json().data.results.length, 0);
      assert.equal(narrow.json().data.current_page, 501);
    });
  });
}
