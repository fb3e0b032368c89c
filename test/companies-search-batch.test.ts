import { before, after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { sql, type KyselyPlugin, type RawNode } from 'kysely';
import { runDaily } from '../src/registry/daily.ts';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { findResultPagesCharging, type ChargedPage } from '../src/modules/companies/repo.ts';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { planFollowStep, runsOf, unionOfAsked, type IndexCursor } from '../src/modules/companies/index-follower.ts';
import type { RunProgress } from '../src/modules/companies/repo.ts';
import { testConfig, bearer, createApiToken, createTestApp, type TestApp } from './helpers/app.ts';
import { accountWithBalance, balanceOf as balanceOfAccount } from './helpers/wallet.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { ALFA, COMPANIES, lodzCompany, sourceOf } from './companies-dataset.test.ts';

/**
 * Searches charged in the statement that reads their pages, batched per event-loop turn
 * (findResultPagesCharging): per search, exactly once, never below zero, the ledger summing to the
 * balance; a company's data sent only when its revision is not the one held; and the follow check
 * shared by concurrent searches without losing a run finished before any of them arrived.
 */

/** A Kysely plugin calling `onFollow` with each follow-check query (findRunProgress's) before it runs. */
const onFollowQuery = (onFollow: (queryId: string) => void): KyselyPlugin => ({
  transformQuery({ node, queryId }) {
    if (node.kind === 'RawNode' && (node as RawNode).sqlFragments.join('').includes('FROM daily_runs r')) onFollow(queryId.queryId);
    return node;
  },
  transformResult: async ({ result }) => result,
});

describe('search pages and charges in one statement', () => {
  let db: TestDatabase;
  let t: TestApp;
  let engine: CompanySearchEngine;
  const prices = testConfig().prices;

  before(async () => {
    db = await createTestDatabase();
    await runDaily(db.db, { date: '2026-11-20', source: sourceOf(COMPANIES), sourceKey: 'file:search-batch-test' });
    engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), followEveryMs: 0 });
    t = await createTestApp({ db, overrides: { companySearch: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    await engine.refresh();
  });
  after(() => engine.stop());

  const account = (balance: number) => accountWithBalance(t, balance);
  const balanceOf = (id: string) => balanceOfAccount(t, id);
  const idOf = async (value: string) =>
    String((await t.db.db.selectFrom('companies').select('id').where('primary_identifier', '=', value).executeTakeFirstOrThrow()).id);
  const page = (who: { id: string; tokenId: string }, ids: string[], known: number[] = ids.map(() => 0)): ChargedPage => ({
    ids,
    known,
    charge: { accountId: who.id, operation: 'companies.search', prices, ifTokenActive: { tokenId: who.tokenId, now: new Date() } },
  });

  test('one batch: a prefix of an account’s charges fits its balance, the rest refused; a revoked token takes nothing; an empty page is charged', async () => {
    assert.equal(prices['companies.search'], 1);
    const a = await account(2);
    const b = await account(5);
    const revoked = await account(5);
    await sql`UPDATE api_tokens SET revoked_at = now() WHERE id = ${revoked.tokenId}::bigint`.execute(t.db.db);
    const alfa = await idOf(ALFA);
    const second = await idOf(COMPANIES[1]!.ids.NIP!);
    const { pages: out } = await findResultPagesCharging(t.db.db, [
      page(a, [alfa, second]),
      page(b, []),
      page(a, [second, alfa, '999999999']), // a company that is not there has no entry
      page(revoked, [alfa]),
      page(a, [alfa]),
      page(b, [alfa]),
    ]);
    assert.deepEqual(
      out.map((o) => ({ names: o.entries.map((e) => e.row?.name), attempt: o.attempt })),
      [
        { names: [COMPANIES[0]!.name, COMPANIES[1]!.name], attempt: { taken: true, charged: 1, balanceAfter: 1 } },
        { names: [], attempt: { taken: true, charged: 1, balanceAfter: 4 } },
        { names: [COMPANIES[1]!.name, COMPANIES[0]!.name], attempt: { taken: true, charged: 1, balanceAfter: 0 } },
        { names: [COMPANIES[0]!.name], attempt: { taken: false, reason: 'inactive-token' } },
        { names: [COMPANIES[0]!.name], attempt: { taken: false, reason: 'insufficient', balance: 0, required: 1 } },
        { names: [COMPANIES[0]!.name], attempt: { taken: true, charged: 1, balanceAfter: 3 } },
      ],
    );
    assert.equal(out[0]!.entries[0]!.row?.snapshot.identity?.identifiers[0]?.value, ALFA);
    assert.deepEqual([await balanceOf(a.id), await balanceOf(b.id), await balanceOf(revoked.id)], [0, 3, 5]);
    assert.deepEqual((await auditWallets(t.db.db)).findings, []);
  });

  test('a company’s data comes only when its revision is not the one held, and again once it changed', async () => {
    const a = await account(10);
    const alfa = await idOf(ALFA);
    const {
      pages: [first],
    } = await findResultPagesCharging(t.db.db, [page(a, [alfa])]);
    const revision = first!.entries[0]!.revision;
    assert.ok(first!.entries[0]!.row !== null);
    const {
      pages: [held],
    } = await findResultPagesCharging(t.db.db, [page(a, [alfa], [revision])]);
    assert.deepEqual(held!.entries, [{ id: alfa, revision, row: null }]);
    // What a daily run's update does (src/registry/store/companies-repo.ts): the data with revision + 1.
    await sql`UPDATE companies SET name = 'ALFA RENAMED', revision = revision + 1 WHERE id = ${alfa}::bigint`.execute(t.db.db);
    const {
      pages: [changed],
    } = await findResultPagesCharging(t.db.db, [page(a, [alfa], [revision])]);
    assert.deepEqual([changed!.entries[0]!.revision, changed!.entries[0]!.row?.name], [revision + 1, 'ALFA RENAMED']);
    await sql`UPDATE companies SET name = ${COMPANIES[0]!.name}, revision = revision + 1 WHERE id = ${alfa}::bigint`.execute(t.db.db);
    assert.equal(await balanceOf(a.id), 7);
  });

  test('over HTTP: concurrent searches of one account with too few credits; results held across searches stay exact', async () => {
    const a = await account(7);
    const api = await createApiToken(t, a.master);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.app.inject({
          method: 'GET',
          url: `/api/v1/companies/search?${i % 3 === 0 ? 'city=lodz' : 'page=1'}`,
          headers: bearer(i % 2 === 0 ? a.master : api.plaintext),
        }),
      ),
    );
    const ok = responses.filter((r) => r.statusCode === 200);
    assert.equal(ok.length, 7);
    const refused = responses.filter((r) => r.statusCode === 402);
    assert.equal(refused.length, 23);
    for (const r of refused)
      assert.deepEqual(r.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
    assert.deepEqual(ok.map((r) => Number(r.headers['x-credits-remaining'])).sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(await balanceOf(a.id), 0);
    assert.deepEqual((await auditWallets(t.db.db)).findings, []);
    // The same page answered from new rows and from held ones is the same page.
    const b = await account(10);
    const ask = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/companies/search', headers: bearer(b.master) });
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      return res.json();
    };
    const once = await ask();
    assert.deepEqual(await ask(), once);
    assert.equal(once.data.results.length, 20);
  });

  test('concurrent searches share the follow check, and still each sees a run that finished before it arrived', async () => {
    // Count the follow queries (on daily_runs) and hold the first one's answer until told.
    const follows: string[] = [];
    let hold: Promise<void> | null = null;
    const plugin: KyselyPlugin = {
      transformQuery({ node, queryId }) {
        if (node.kind === 'RawNode' && (node as RawNode).sqlFragments.join('').includes('FROM daily_runs r')) follows.push(queryId.queryId);
        return node;
      },
      async transformResult({ result, queryId }) {
        if (hold && follows.includes(queryId.queryId)) await hold;
        return result;
      },
    };
    const followed = createCompanySearchEngine({ db: db.db.withPlugin(plugin), logger: pino({ level: 'silent' }), followEveryMs: 0 });
    try {
      await followed.refresh();
      const { filters } = parseSearchQuery({ city: 'lodz' });
      const before = await followed.search(filters, 0, 20);
      follows.length = 0;
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      // A arrives: its check starts (and is held) before the run.
      const first = followed.search(filters, 0, 20);
      while (follows.length === 0) await new Promise((r) => setImmediate(r));
      const added = lodzCompany(600, 'Omega Batch Firma', '2026-11-02');
      await runDaily(t.db.db, { date: '2026-11-21', source: sourceOf([added]), sourceKey: 'file:search-batch-test-2' });
      // B, C, D arrive after the run finished, while A's check is still in flight.
      const later = [followed.search(filters, 0, 20), followed.search(filters, 20, 20), followed.search(filters, 0, 20)];
      release();
      hold = null;
      await first;
      const answers = await Promise.all(later);
      for (const a of answers) assert.deepEqual([a.total, a.dataAsOf], [before.total + 1, '2026-11-21']);
      assert.equal(follows.length, 2, 'A’s check, and one check for B, C and D together');
    } finally {
      await followed.stop();
    }
  });

  test('a paid search makes its follow check in its page statement: no query of its own while no run finished, and a run finished before it arrived is in its answer, charged once', async () => {
    const follows: string[] = [];
    const followed = createCompanySearchEngine({
      db: db.db.withPlugin(onFollowQuery((id) => follows.push(id))),
      logger: pino({ level: 'silent' }),
      followEveryMs: 0,
    });
    const t2 = await createTestApp({ db, overrides: { companySearch: followed }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    try {
      await followed.refresh();
      const a = await accountWithBalance(t2, 20);
      const ask = async (query: string) => {
        const res = await t2.app.inject({ method: 'GET', url: `/api/v1/companies/search?${query}`, headers: bearer(a.master) });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as { total: number; data_as_of: string; results: { name: string }[] };
      };
      const before = await ask('city=lodz');
      follows.length = 0;
      const same = await Promise.all([ask('city=lodz'), ask('city=lodz&page=2'), ask('city=lodz')]);
      assert.deepEqual(
        same.map((d) => [d.total, d.data_as_of]),
        same.map(() => [before.total, before.data_as_of]),
      );
      assert.equal(follows.length, 0, 'no follow query of their own: the page statements made the check');

      const added = lodzCompany(601, 'Psi Batch Firma', '2026-11-05');
      await runDaily(t.db.db, { date: '2026-11-22', source: sourceOf([added]), sourceKey: 'file:search-batch-test-3' });
      // Arrives after the run finished; the index has not looked since.
      const after = await ask('city=lodz');
      assert.deepEqual([after.total, after.data_as_of, after.results[0]?.name], [before.total + 1, '2026-11-22', 'Psi Batch Firma']);
      assert.equal(follows.length, 1, 'one sync, once the statement had seen the run');
      const again = await ask('city=lodz');
      assert.deepEqual([again.total, again.data_as_of, again.results[0]?.name], [before.total + 1, '2026-11-22', 'Psi Batch Firma']);
      assert.equal(follows.length, 1, 'the index is current again: no query of its own');
      assert.equal(await balanceOf(a.id), 20 - 6, 'one credit a search, the one answered again included');
      assert.deepEqual((await auditWallets(t.db.db)).findings, []);
    } finally {
      await t2.app.close();
      await followed.stop();
    }
  });

  test('a search whose index cannot follow after its charge (the database failing) answers 500 and gets its credit back', async () => {
    let failFollow = false;
    const plugin = onFollowQuery(() => {
      if (failFollow) throw new Error('connection lost');
    });
    const failing = createCompanySearchEngine({ db: db.db.withPlugin(plugin), logger: pino({ level: 'silent' }), followEveryMs: 0 });
    const t2 = await createTestApp({ db, overrides: { companySearch: failing }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    try {
      await failing.refresh();
      const a = await accountWithBalance(t2, 5);
      const ask = () => t2.app.inject({ method: 'GET', url: '/api/v1/companies/search?city=lodz', headers: bearer(a.master) });
      assert.equal((await ask()).statusCode, 200);
      await runDaily(t.db.db, {
        date: '2026-11-23',
        source: sourceOf([lodzCompany(602, 'Rho Batch Firma', '2026-11-06')]),
        sourceKey: 'file:search-batch-test-4',
      });
      failFollow = true;
      const res = await ask();
      assert.equal(res.statusCode, 500, res.body);
      assert.equal(res.headers['x-credits-charged'], undefined);
      assert.equal(await balanceOf(a.id), 4, 'the failed search’s credit given back');
      const { rows } = await sql<{ type: string; amount: string }>`
        SELECT type, amount::text FROM wallet_transactions WHERE account_id = ${a.id}::bigint AND type IN ('usage', 'refund') ORDER BY id`.execute(
        t.db.db,
      );
      assert.deepEqual(
        rows.slice(-3).map((r) => [r.type, Number(r.amount)]),
        [
          ['usage', -1],
          ['usage', -1],
          ['refund', 1],
        ],
      );
      assert.deepEqual((await auditWallets(t.db.db)).findings, []);
    } finally {
      await t2.app.close();
      await failing.stop();
    }
  });

  test('one follow check for the cursors of several indexes: each takes the runs its own check would have read', () => {
    const run = (id: number, status: RunProgress['status'], changed = 1): RunProgress => ({
      id,
      status,
      attempts: 1,
      import_identifier_type: null,
      import_identifier_value: null,
      kind: 'daily',
      run_date: `2026-11-${10 + id}`,
      changed,
      changes_expired: false,
    });
    const older: IndexCursor = { nextRunId: 5, watch: new Map([[3, 'running']]), dataAsOf: '2026-11-14' };
    const newer: IndexCursor = { nextRunId: 7, watch: new Map(), dataAsOf: '2026-11-16' };
    assert.deepEqual(unionOfAsked([]), { fromId: Number.MAX_SAFE_INTEGER, watch: [] });
    assert.deepEqual(
      unionOfAsked([
        { fromId: 5, watch: [3] },
        { fromId: 7, watch: [] },
      ]),
      { fromId: 5, watch: [3] },
    );
    // What findRunProgress(5, [3]) reads: 3 (still running), 5 and 6 (completed since `older`).
    const runs = [run(3, 'running', 0), run(5, 'completed'), run(6, 'completed')];
    assert.deepEqual(
      runsOf(newer, runs).map((r) => r.id),
      [3],
    );
    // The newer index has seen 5 and 6: the completed runs before its cursor are not new to it.
    assert.equal(planFollowStep({ ...newer, watch: new Map([[3, 'running']]) }, runsOf(newer, runs), { maxDelta: 10 }).kind, 'current');
    assert.equal(planFollowStep(newer, runs, { maxDelta: 10 }).kind, 'changes', 'all of them would look new');
    const step = planFollowStep(older, runsOf(older, runs), { maxDelta: 10 });
    assert.deepEqual(step.kind === 'changes' && [step.runIds, step.next.dataAsOf], [[5, 6], '2026-11-16']);
  });
});
