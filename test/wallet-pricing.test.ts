import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { buildStandaloneApp } from '../src/app.ts';
import { NotFoundError, TemporarilyUnavailableError, UpstreamError, ValidationError } from '../src/lib/errors.ts';
import { chargeCredits, refundCredits } from '../src/modules/wallet/credits.ts';
import { systemClock } from '../src/lib/clock.ts';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { bearer, createAccount, testConfig, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * The real app with a few priced routes added before it is ready, the way a feature module
 * declares its price: the mechanism is exercised without any test branch in src/.
 */
async function pricedApp(env: Record<string, string> = {}, options: { listen?: boolean } = {}) {
  const db = await createTestDatabase();
  const config = testConfig({ RATE_LIMIT_PER_MINUTE: '100000', ...env });
  const app = await buildStandaloneApp({ config, db: db.db, logger: pino({ level: 'silent' }), clock: systemClock });
  const calls = { search: 0, fail: 0, units: 0 };
  await app.register(
    async (api: FastifyInstance) => {
      api.get('/priced', { config: { auth: 'any', price: 'companies.search' } }, async () => {
        calls.search++;
        // Real work on the database, so concurrent requests interleave between check and charge.
        await sql`SELECT pg_sleep(0.002)`.execute(db.db);
        return { status: 'success', data: { ok: true } };
      });
      api.get(
        '/fail/:code',
        {
          config: { auth: 'any', price: 'companies.snapshot' },
          schema: {
            params: Type.Object({ code: Type.Integer() }),
            querystring: Type.Object({ mode: Type.Optional(Type.String({ maxLength: 10 })) }),
          },
        },
        async (req, reply) => {
          calls.fail++;
          const { code } = req.params as { code: number };
          const mode = (req.query as { mode?: string }).mode;
          if (mode === 'reply') return reply.code(code).send({ message: 'sent' });
          if (code === 404) throw new NotFoundError('Company not found');
          if (code === 422) throw new ValidationError({ identifier_value: ['The identifier value is invalid.'] });
          if (code === 500) throw new Error('boom');
          if (code === 502) throw new UpstreamError('failed');
          if (code === 503) throw new TemporarilyUnavailableError('failed');
          throw Object.assign(new Error('failed'), { statusCode: code });
        },
      );
      api.get(
        '/units/:n',
        { config: { auth: 'any', price: 'watchlist.events' }, schema: { params: Type.Object({ n: Type.Integer({ minimum: 0 }) }) } },
        async (req) => {
          calls.units++;
          req.chargeUnits = (req.params as { n: number }).n;
          return { status: 'success', data: { units: req.chargeUnits } };
        },
      );
      api.post(
        '/service',
        {
          config: { auth: 'any', price: 'companies.add', chargedBy: 'service' },
          schema: {
            body: Type.Object({
              values: Type.Array(Type.String({ maxLength: 20 }), { maxItems: 100 }),
              fail_after_charge: Type.Optional(Type.Boolean()),
            }),
          },
        },
        async (req, reply) => {
          const body = req.body as { values: string[]; fail_after_charge?: boolean };
          const accountId = req.auth!.accountId;
          await db.db.transaction().execute(async (trx) => {
            await sql`CREATE TABLE IF NOT EXISTS test_side_effects (account_id bigint, value text)`.execute(trx);
            for (const v of body.values) await sql`INSERT INTO test_side_effects VALUES (${accountId}, ${v})`.execute(trx);
            await chargeCredits(trx, { accountId, operation: 'companies.add', units: body.values.length, prices: config.prices });
            if (body.fail_after_charge) throw new Error('failed after charging');
          });
          return reply.code(202).send({ success: true });
        },
      );
    },
    { prefix: '/api/v1/test' },
  );
  let baseUrl = '';
  if (options.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  } else {
    await app.ready();
  }
  after(() => app.close());
  const t = { app, db, config, clock: systemClock, logLines: [] } as unknown as TestApp;
  return { t, app, db, config, calls, baseUrl };
}

async function idOf(t: TestApp, userRef: string): Promise<string> {
  return (await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', userRef).executeTakeFirstOrThrow()).id;
}

async function walletOf(t: TestApp, accountId: string) {
  const w = await t.db.db
    .selectFrom('wallets')
    .select(['balance', 'total_purchased'])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const usage = await t.db.db
    .selectFrom('wallet_transactions')
    .select(['amount', 'description'])
    .where('account_id', '=', accountId)
    .where('type', '=', 'usage')
    .execute();
  const sum = await t.db.db
    .selectFrom('wallet_transactions')
    .select((eb) => eb.fn.sum<string>('amount').as('s'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { balance: Number(w.balance), usage, ledgerSum: Number(sum.s) };
}

test('200 concurrent charged requests against 50 credits: exactly 50 succeed, 150 answer 402, the balance ends at 0', async () => {
  const { t, baseUrl, calls } = await pricedApp({}, { listen: true });
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  // 100 welcome credits, 50 spent elsewhere: 50 left.
  assert.equal(
    (await applyLedgerEntry(t.db.db, { accountId: id, type: 'usage', amount: -50, description: 'companies.snapshot' })).applied,
    true,
  );

  const responses = await Promise.all(
    Array.from({ length: 200 }, async () => {
      const res = await fetch(`${baseUrl}/api/v1/test/priced`, { headers: bearer(a.master) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, charged: res.headers.get('x-credits-charged') };
    }),
  );
  const ok = responses.filter((r) => r.status === 200);
  const refused = responses.filter((r) => r.status === 402);
  assert.equal(ok.length, 50);
  assert.equal(refused.length, 150);
  for (const r of ok) {
    assert.deepEqual(r.body, { status: 'success', data: { ok: true } });
    assert.equal(r.charged, '1');
  }
  for (const r of refused)
    assert.deepEqual(r.body, { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
  // More handlers ran than were paid for: the charge, not the pre-check, decided.
  assert.ok(calls.search >= 50, `handler ran ${calls.search} times`);

  const w = await walletOf(t, id);
  assert.equal(w.balance, 0);
  assert.equal(w.usage.filter((u) => u.description === 'companies.search').length, 50);
  assert.ok(w.usage.filter((u) => u.description === 'companies.search').every((u) => u.amount === '-1'));
  assert.equal(w.ledgerSum, 0);
  const audit = await auditWallets(t.db.db);
  assert.deepEqual(audit.findings, []);
});

test('prices come from the configured table; headers report the charge; 402 names balance and price', async () => {
  const { t } = await pricedApp({ PRICES: JSON.stringify({ 'companies.search': 3 }) });
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  const statuses: number[] = [];
  for (let i = 0; i < 35; i++) {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/test/priced', headers: bearer(a.master) });
    statuses.push(res.statusCode);
    if (res.statusCode === 200) {
      assert.equal(res.headers['x-credits-charged'], '3');
      assert.equal(res.headers['x-credits-remaining'], String(100 - 3 * (i + 1)));
    }
  }
  assert.equal(statuses.filter((s) => s === 200).length, 33);
  const refused = await t.app.inject({ method: 'GET', url: '/api/v1/test/priced', headers: bearer(a.master) });
  assert.equal(refused.statusCode, 402);
  assert.deepEqual(refused.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 1, required: 3 });
  const w = await walletOf(t, id);
  assert.equal(w.balance, 1);
  assert.equal(w.usage.length, 33);
  assert.ok(w.usage.every((u) => u.amount === '-3' && u.description === 'companies.search'));

  const tx = (await t.app.inject({ method: 'GET', url: '/api/v1/wallet/transactions?per_page=1', headers: bearer(a.master) })).json();
  assert.deepEqual(
    { type: tx.data[0].type, amount: tx.data[0].amount, balance_after: tx.data[0].balance_after, description: tx.data[0].description },
    { type: 'usage', amount: '-3.00', balance_after: '1.00', description: 'companies.search' },
  );
});

test('a failing operation (any 4xx or 5xx) charges nothing', async () => {
  const { t, calls } = await pricedApp();
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  for (const code of [400, 404, 409, 422, 429, 500, 502, 503]) {
    for (const mode of ['throw', 'reply']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/test/fail/${code}?mode=${mode}`, headers: bearer(a.master) });
      assert.equal(res.statusCode, code, `${code} ${mode}: ${res.body}`);
      assert.equal(res.headers['x-credits-charged'], undefined);
    }
  }
  const ran = calls.fail;
  // Validation and authentication fail before the handler: nothing done, nothing charged.
  const invalid = await t.app.inject({ method: 'GET', url: '/api/v1/test/fail/abc', headers: bearer(a.master) });
  assert.equal(invalid.statusCode, 422);
  const unauth = await t.app.inject({ method: 'GET', url: '/api/v1/test/fail/200' });
  assert.equal(unauth.statusCode, 401);
  assert.equal(calls.fail, ran);
  const w = await walletOf(t, id);
  assert.equal(w.balance, 100);
  assert.equal(w.usage.length, 0);
  // The control: the same route succeeding is charged.
  const okay = await t.app.inject({ method: 'GET', url: '/api/v1/test/fail/200?mode=reply', headers: bearer(a.master) });
  assert.equal(okay.statusCode, 200);
  assert.equal((await walletOf(t, id)).balance, 99);
});

test('too few credits: 402 before the handler runs, nothing done', async () => {
  const { t, calls } = await pricedApp();
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  await applyLedgerEntry(t.db.db, { accountId: id, type: 'usage', amount: -100, description: 'companies.search' });
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/test/priced', headers: bearer(a.master) });
  assert.equal(res.statusCode, 402);
  assert.deepEqual(res.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
  assert.equal(calls.search, 0);
  // The wallet routes stay free with an empty wallet.
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: bearer(a.master) })).statusCode, 200);
});

test('a dynamic price: price × request.chargeUnits, 0 units free, more than the balance 402 with nothing taken', async () => {
  const { t } = await pricedApp({ PRICES: JSON.stringify({ 'watchlist.events': 2 }) });
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  const five = await t.app.inject({ method: 'GET', url: '/api/v1/test/units/5', headers: bearer(a.master) });
  assert.equal(five.statusCode, 200);
  assert.equal(five.headers['x-credits-charged'], '10');
  assert.equal((await walletOf(t, id)).balance, 90);
  const zero = await t.app.inject({ method: 'GET', url: '/api/v1/test/units/0', headers: bearer(a.master) });
  assert.equal(zero.statusCode, 200);
  assert.equal(zero.headers['x-credits-charged'], undefined);
  const tooMany = await t.app.inject({ method: 'GET', url: '/api/v1/test/units/46', headers: bearer(a.master) });
  assert.equal(tooMany.statusCode, 402);
  assert.deepEqual(tooMany.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 90, required: 92 });
  const w = await walletOf(t, id);
  assert.equal(w.balance, 90);
  assert.deepEqual(w.usage, [{ amount: '-10', description: 'watchlist.events' }]);
});

test('chargedBy service: the charge commits or rolls back with the operation; refunds are idempotent', async () => {
  const { t, config } = await pricedApp();
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  const add = (values: string[], extra: object = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/test/service', headers: bearer(a.master), payload: { values, ...extra } });
  const sideEffects = async () =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM test_side_effects`.execute(t.db.db)).rows[0].n);

  const ok = await add(['a', 'b', 'c']);
  assert.equal(ok.statusCode, 202);
  assert.equal(ok.headers['x-credits-charged'], undefined, 'the HTTP layer takes nothing more');
  assert.equal((await walletOf(t, id)).balance, 97);
  assert.equal(await sideEffects(), 3);

  const failed = await add(['d'], { fail_after_charge: true });
  assert.equal(failed.statusCode, 500);
  assert.equal(await sideEffects(), 3);
  assert.equal((await walletOf(t, id)).balance, 97);

  const short = await add(Array.from({ length: 98 }, (_, i) => `v${i}`));
  assert.equal(short.statusCode, 402);
  assert.deepEqual(short.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 97, required: 98 });
  assert.equal(await sideEffects(), 3);

  for (let i = 0; i < 2; i++) {
    const r = await refundCredits(t.db.db, {
      accountId: id,
      operation: 'companies.add',
      credits: 2,
      reference: 'refund:req-1',
      description: 'companies.add refund: 2 identifiers not found',
    });
    assert.equal(r.refunded, i === 0 ? 2 : 0);
  }
  const dup = await chargeCredits(t.db.db, { accountId: id, operation: 'companies.add', prices: config.prices, reference: 'charge:req-2' });
  assert.equal(dup.charged, 1);
  assert.deepEqual(
    await chargeCredits(t.db.db, { accountId: id, operation: 'companies.add', prices: config.prices, reference: 'charge:req-2' }),
    { charged: 0, balanceAfter: null },
  );
  const w = await walletOf(t, id);
  assert.equal(w.balance, 98);
  assert.equal(w.ledgerSum, 98);
  const refunds = await t.db.db.selectFrom('wallet_transactions').select(['amount', 'description']).where('type', '=', 'refund').execute();
  assert.deepEqual(refunds, [{ amount: '2', description: 'companies.add refund: 2 identifiers not found' }]);
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('the price is documented on the route (402 and the credits) in the OpenAPI document', async () => {
  const { app } = await pricedApp();
  const doc = app.swagger() as unknown as {
    paths: Record<string, Record<string, { description?: string; responses: Record<string, unknown> }>>;
  };
  const op = doc.paths['/api/v1/test/priced'].get;
  assert.ok(op.responses['402'], 'documents 402');
  assert.match(op.description ?? '', /1 credit per successful request \(`companies.search`\)/);
  const wallet = doc.paths['/api/v1/wallet'].get;
  assert.equal(wallet.responses['402'], undefined, 'free routes do not');
});

test('a priced route without a credential, or with an unknown price, is a programming error at start', async () => {
  const db = await createTestDatabase();
  const configs: FastifyContextConfig[] = [
    { auth: 'none', price: 'companies.search' },
    { auth: 'any', price: 'companies.nope' as never },
  ];
  for (const config of configs) {
    const app = await buildStandaloneApp({ config: testConfig(), db: db.db, logger: pino({ level: 'silent' }), clock: systemClock });
    await assert.rejects(async () => {
      app.get('/x', { config }, async () => ({}));
      await app.ready();
    }, /priced but needs no credential|unknown price key/);
    await app.close().catch(() => {});
  }
});

test('HEAD on a priced GET route is 405 with Allow: GET: it runs nothing and costs nothing', async () => {
  const { t, calls } = await pricedApp();
  const a = await createAccount(t);
  const id = await idOf(t, a.userRef);
  const head = await t.app.inject({ method: 'HEAD', url: '/api/v1/test/priced', headers: bearer(a.master) });
  assert.equal(head.statusCode, 405);
  assert.equal(head.headers.allow, 'GET');
  assert.equal(head.body, '');
  assert.equal(calls.search, 0);
  assert.equal((await walletOf(t, id)).balance, 100);
  // The real priced reads too; a free GET keeps its HEAD.
  for (const url of [
    '/api/v1/companies/search',
    '/api/v1/watchlist/events',
    '/api/v1/companies/events?identifier_type=KRS&identifier_value=0000000001',
  ]) {
    const r = await t.app.inject({ method: 'HEAD', url, headers: bearer(a.master) });
    assert.equal(r.statusCode, 405, url);
    assert.equal(r.headers.allow, 'GET', url);
  }
  assert.equal((await walletOf(t, id)).balance, 100);
  assert.equal((await t.app.inject({ method: 'HEAD', url: '/api/v1/wallet', headers: bearer(a.master) })).statusCode, 200);
});
