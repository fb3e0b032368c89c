import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import {
  AuthenticationError,
  InsufficientCreditsError,
  NotFoundError,
  PermissionError,
  Regwatch,
  RegwatchError,
  ValidationError,
} from '../packages/sdk/src/index.ts';
import { createAccount, createApiToken, createTestApp, latestInitToken, startTestWorker } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { nipFor, krsFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, runDay, setBalance } from './watchlist-support.ts';
import { watchNumbers } from './webhooks-support.ts';

/**
 * @regwatch/sdk against the real service on a real port and PostgreSQL: every method of the
 * companies, watchlist, wallet, tokens, stats, dictionaries and auth groups once, the page
 * iterators across page boundaries, and each failure surfaced as its typed error.
 * test/sdk-events.test.ts covers the feed, its stream and webhooks; test/sdk-retry.test.ts a 429.
 */

const companies: CompanySpec[] = Array.from({ length: 45 }, (_, i) => ({
  n: i + 1,
  name: `PIEKARNIA ${i + 1} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`,
  city: 'Kraków',
  voivodeship: 'małopolskie',
}));
const db = await createTestDatabase();
await runDay(db.db, '2030-03-01', companies);
const t = await createTestApp({ db, listen: true, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
await startTestWorker(t);
const owner = await createAccount(t);
const ownerId = await accountIdOf(t, owner.userRef);
await applyLedgerEntry(t.db.db, { accountId: ownerId, type: 'deposit', amount: 1000, description: 'test top-up' });
const rw = new Regwatch({ token: owner.master, baseUrl: t.baseUrl });

test('auth: register, then init with the mailed token gives a Master Token the SDK can use', async () => {
  const anonymous = new Regwatch({ baseUrl: `${t.baseUrl}/` });
  const email = `sdk-${Date.now()}@example.com`;
  const reg = await anonymous.auth.register({ email, name: 'SDK Test' });
  assert.equal(typeof reg.message, 'string');
  const init = await anonymous.auth.init(await latestInitToken(t, email));
  assert.match(init.master_token, /^sk_live_/);
  const verified = await new Regwatch({ baseUrl: t.baseUrl, token: init.master_token }).tokens.verify();
  assert.equal(verified.data.user_ref, init.user_ref);
  assert.equal(typeof (await anonymous.auth.recover(email)).message, 'string');
  assert.equal((await anonymous.health()).status, 'ok');
  const sources = await anonymous.sources();
  assert.deepEqual(
    sources.data.slice(0, 4).map((s) => s.source),
    ['krs', 'bir', 'ceidg', 'vat'],
  );
});

test('tokens: create, list, get, rename, rotate, revoke', async () => {
  const created = await rw.tokens.create({ name: 'sdk', expires_in_days: 30 });
  assert.match(created.data.plaintext, /^sk_api_/);
  const ref = created.data.token_ref;
  assert.ok((await rw.tokens.list()).data.some((x) => x.token_ref === ref));
  assert.equal((await rw.tokens.get(ref)).data.name, 'sdk');
  assert.equal((await rw.tokens.rename(ref, 'sdk renamed')).data.name, 'sdk renamed');
  const rotated = await rw.tokens.rotate(ref);
  const fresh = rotated.data.new_token as { token_ref: string; plaintext: string };
  assert.equal((await new Regwatch({ baseUrl: t.baseUrl, token: fresh.plaintext }).tokens.verify()).data.valid, true);
  const revoked = await rw.tokens.revoke(fresh.token_ref);
  assert.equal(revoked.success, true);
  await assert.rejects(
    new Regwatch({ baseUrl: t.baseUrl, token: fresh.plaintext }).tokens.verify(),
    (e: unknown) => e instanceof AuthenticationError && e.status === 401 && e.code === 'UNAUTHORIZED',
  );
});

test('companies: one search page, searchAll across three pages, a snapshot', async () => {
  const page = await rw.companies.search({ q: 'piekarnia', city: 'Kraków' });
  assert.equal(page.data.total, 45);
  assert.equal(page.data.last_page, 3);
  assert.equal(page.data.results.length, 20);
  const names: string[] = [];
  for await (const c of rw.companies.searchAll({ q: 'piekarnia' })) names.push(c.name);
  assert.equal(names.length, 45, 'every result of the three pages');
  assert.equal(new Set(names).size, 45, 'none twice across the page boundaries');
  const snapshot = await rw.companies.snapshot({ identifier_type: 'KRS', identifier_value: krsFor(7) });
  assert.ok(snapshot.data.identity.identifiers.some((i: { type: string; value: string }) => i.type === 'NIP' && i.value === nipFor(7)));
  const matched = await rw.companies.match({ queries: [{ nip: `PL ${nipFor(7)}` }, { name: 'no such company at all' }] });
  assert.equal(matched.data.length, 2);
  assert.equal(matched.data[0]!.candidates[0]!.match, true);
  assert.ok(matched.data[0]!.candidates[0]!.identifiers.some((i: { type: string; value: string }) => i.value === nipFor(7)));
});

test('watchlist: add, request, list, listAll across pages, remove', async () => {
  const add = await rw.watchlist.add({ identifier_type: 'NIP', identifier_value: [nipFor(1), nipFor(2)] });
  assert.equal(add.queued + add.already_watched + add.already_queued, 2);
  const followed = await rw.watchlist.request(add.request_id);
  assert.equal(followed.data.request_id, add.request_id);
  await watchNumbers(t.db.db, ownerId, [3, 4, 5], new Date());
  let listed = await rw.watchlist.list({ per_page: 2 });
  for (let i = 0; i < 100 && listed.meta.total < 5; i++) {
    await new Promise((r) => setTimeout(r, 100));
    listed = await rw.watchlist.list({ per_page: 2 });
  }
  assert.equal(listed.meta.total, 5);
  const all: string[] = [];
  for await (const w of rw.watchlist.listAll({ per_page: 2 })) all.push(JSON.stringify(w));
  assert.equal(all.length, 5, 'three pages of two');
  assert.equal(new Set(all).size, 5);
  const removed = await rw.watchlist.remove({ identifier_type: 'NIP', identifier_value: [nipFor(5)] });
  assert.equal(removed.meta.removed, 1);
});

test('wallet: get, transactions and transactionsAll across pages, packages, topup, payment', async () => {
  const wallet = await rw.wallet.get();
  assert.ok(wallet.data.balance > 0);
  const first = await rw.wallet.transactions({ per_page: 1 });
  assert.ok(first.meta.total >= 3, `ledger rows: ${first.meta.total}`);
  let n = 0;
  for await (const _ of rw.wallet.transactionsAll({ per_page: 1 })) n++;
  assert.equal(n, first.meta.total, 'one item a page, every page');
  const packages = await rw.wallet.packages();
  const slug = packages.data[0]!.slug;
  const topup = await rw.wallet.topup(slug);
  assert.equal((await rw.wallet.payment(topup.data.payment_ref)).data.payment_ref, topup.data.payment_ref);
});

test('stats and dictionaries', async () => {
  assert.deepEqual((await rw.stats.day('2030-03-01')).data, { new: 45, updated: 0, deleted: 0, total: 45 });
  assert.equal((await rw.stats.range('2030-03-05')).meta.to_date, '2030-03-01');
  assert.ok((await rw.dictionaries.legalForms()).data.length > 0);
  assert.equal((await rw.dictionaries.voivodeships()).data.length, 16);
  const page = await rw.dictionaries.activities({ prefix: '62', per_page: 2 });
  assert.ok(page.meta.last_page >= 2, 'several pages');
  const codes: string[] = [];
  for await (const a of rw.dictionaries.activitiesAll({ prefix: '62', per_page: 2 })) codes.push(JSON.stringify(a));
  assert.equal(codes.length, page.meta.total);
  assert.equal(new Set(codes).size, codes.length);
});

test('typed errors: 422 with its errors map, 404, 403, 401, 402 with balance and required', async () => {
  const invalid = await rw.watchlist.add({ identifier_type: 'NIP', identifier_value: [nipFor(1), '1234567890'] }).catch((e: unknown) => e);
  assert.ok(invalid instanceof ValidationError && invalid instanceof RegwatchError);
  assert.equal(invalid.status, 422);
  assert.equal(invalid.code, 'VALIDATION_FAILED');
  assert.deepEqual(invalid.errors, { 'identifier_value.1': ['The NIP must be 10 digits with a valid checksum.'] });
  assert.equal(invalid.message, 'The NIP must be 10 digits with a valid checksum.');
  assert.match(invalid.requestId ?? '', /\S/);

  const missing = await rw.webhooks.get('wh_999999').catch((e: unknown) => e);
  assert.ok(missing instanceof NotFoundError && missing.status === 404 && missing.code === 'NOT_FOUND');

  const api = await createApiToken(t, owner.master);
  const forbidden = await new Regwatch({ baseUrl: t.baseUrl, token: api.plaintext }).tokens.create({ name: 'x' }).catch((e: unknown) => e);
  assert.ok(forbidden instanceof PermissionError && forbidden.status === 403 && forbidden.code === 'FORBIDDEN');

  const unknown = await new Regwatch({ baseUrl: t.baseUrl, token: 'sk_live_nope' }).wallet.get().catch((e: unknown) => e);
  assert.ok(unknown instanceof AuthenticationError && unknown.status === 401);

  const poor = await createAccount(t);
  await setBalance(t, await accountIdOf(t, poor.userRef), 0);
  const broke = await new Regwatch({ baseUrl: t.baseUrl, token: poor.master }).companies
    .search({ q: 'piekarnia' })
    .catch((e: unknown) => e);
  assert.ok(broke instanceof InsufficientCreditsError, String(broke));
  assert.equal(broke.status, 402);
  assert.equal(broke.code, 'INSUFFICIENT_CREDITS');
  assert.equal(broke.balance, 0);
  assert.equal(broke.required, 1);
});
