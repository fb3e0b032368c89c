import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { bearer, createAccount, createApiToken, createManualClock, createTestApp, drainJobs } from './helpers/app.ts';
import { nipFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, balance, ledger, runDay, setBalance, feedCountMismatches } from './watchlist-support.ts';

/** Errors, security and the query surface of the watchlist routes. */

const clock = createManualClock('2026-11-21T10:00:00Z');
const t = await createTestApp({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const alice = await createAccount(t);
const bob = await createAccount(t);
const aliceId = await accountIdOf(t, alice.userRef);
const bobId = await accountIdOf(t, bob.userRef);
const specs: CompanySpec[] = Array.from({ length: 30 }, (_, i) => ({ n: 400 + i }));
await runDay(t.db.db, '2026-11-20', specs);

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string | null, payload?: unknown) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: token ? bearer(token) : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

async function requestCount(accountId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM watch_requests WHERE account_id = ${accountId}`.execute(t.db.db);
  return rows[0]!.n;
}

test('422: every invalid value named by its index, the first message plus a count, and nothing queued or charged', async () => {
  const before = await balance(t, alice.master);
  const res = await inject('POST', '/companies/add', alice.master, {
    identifier_type: 'NIP',
    identifier_value: [nipFor(400), '1234567890', nipFor(401), 'abc', 42, 'x'.repeat(51)],
  });
  assert.equal(res.statusCode, 422);
  const body = res.json();
  assert.deepEqual(Object.keys(body.errors), ['identifier_value.1', 'identifier_value.3', 'identifier_value.4', 'identifier_value.5']);
  assert.deepEqual(body.errors['identifier_value.1'], ['The NIP must be 10 digits with a valid checksum.']);
  assert.equal(body.message, 'The NIP must be 10 digits with a valid checksum. (and 3 more errors)');
  assert.equal(await requestCount(aliceId), 0);
  assert.equal(await balance(t, alice.master), before);
});

test('422 on the shape: type missing or unknown, values missing, not a list, empty, over 100, body not an object', async () => {
  const cases: [unknown, string[]][] = [
    [{ identifier_value: [nipFor(400)] }, ['identifier_type']],
    [{ identifier_type: 'PESEL', identifier_value: [nipFor(400)] }, ['identifier_type']],
    [{ identifier_type: 'NIP' }, ['identifier_value']],
    [{ identifier_type: 'NIP', identifier_value: nipFor(400) }, ['identifier_value']],
    [{ identifier_type: 'NIP', identifier_value: [] }, ['identifier_value']],
    [{ identifier_type: 'NIP', identifier_value: Array.from({ length: 101 }, (_, i) => nipFor(400 + (i % 30))) }, ['identifier_value']],
    [{}, ['identifier_type', 'identifier_value']],
    [[nipFor(400)], ['body']],
  ];
  for (const [payload, keys] of cases) {
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await inject(method, method === 'POST' ? '/companies/add' : '/companies/watched', alice.master, payload);
      assert.equal(res.statusCode, 422, `${method} ${JSON.stringify(payload).slice(0, 80)}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json().errors), keys, JSON.stringify(payload).slice(0, 80));
    }
  }
  const hundred = await inject('POST', '/companies/add', alice.master, {
    identifier_type: 'NIP',
    identifier_value: Array.from({ length: 100 }, (_, i) => nipFor(400 + (i % 30))),
  });
  assert.equal(hundred.statusCode, 202, 'exactly 100 values are accepted');
  assert.deepEqual(
    { submitted: hundred.json().submitted, duplicates: hundred.json().duplicates, queued: hundred.json().queued },
    { submitted: 100, duplicates: 70, queued: 30 },
  );
  await drainJobs(t);
});

test('aliases: name / value for add and remove; errors keyed by the name the client used', async () => {
  const bad = await inject('POST', '/companies/add', bob.master, { name: 'NIP', value: [nipFor(400), 'nope'] });
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(Object.keys(bad.json().errors), ['value.1']);
  const add = await inject('POST', '/companies/add', bob.master, { name: 'nip', value: [nipFor(400)] });
  assert.equal(add.statusCode, 202, add.body);
  assert.equal(add.json().identifier_type, 'NIP');
  await drainJobs(t);
  const remove = await inject('DELETE', '/companies/watched', bob.master, { name: 'NIP', value: [nipFor(400)] });
  assert.deepEqual(remove.json().data, { removed: [nipFor(400)], not_found: [], not_watched: [] });
});

test('401 on every route without a valid token; an API token works like the Master Token', async () => {
  const routes: ['GET' | 'POST' | 'DELETE', string][] = [
    ['POST', '/companies/add'],
    ['GET', '/companies/watched'],
    ['DELETE', '/companies/watched'],
    ['GET', `/companies/events?identifier_type=NIP&identifier_value=${nipFor(400)}`],
    ['GET', '/watchlist/events'],
    ['GET', '/watchlist/requests/ABC'],
  ];
  for (const [method, url] of routes) {
    const none = await inject(
      method,
      url,
      null,
      method === 'GET' ? undefined : { identifier_type: 'NIP', identifier_value: [nipFor(400)] },
    );
    assert.equal(none.statusCode, 401, `${method} ${url}`);
    assert.deepEqual(none.json(), { error: 'Missing API token', code: 'UNAUTHORIZED' });
    const bad = await inject(method, url, 'sk_live_' + 'x'.repeat(40));
    assert.deepEqual(bad.json(), { error: 'Invalid API token', code: 'UNAUTHORIZED' });
  }
  const api = await createApiToken(t, alice.master);
  assert.equal((await inject('GET', '/companies/watched', api.plaintext)).statusCode, 200);
  assert.equal((await inject('GET', '/watchlist/events', api.plaintext)).statusCode, 200);
});

test('402: too few credits for the values newly queued answers the balance and what is required, and queues nothing', async () => {
  const carol = await createAccount(t);
  const carolId = await accountIdOf(t, carol.userRef);
  await setBalance(t, carolId, 2);
  const res = await inject('POST', '/companies/add', carol.master, {
    identifier_type: 'NIP',
    identifier_value: [nipFor(401), nipFor(402), nipFor(403)],
  });
  assert.equal(res.statusCode, 402);
  assert.deepEqual(res.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 2, required: 3 });
  assert.equal(await requestCount(carolId), 0);
  const two = await inject('POST', '/companies/add', carol.master, {
    identifier_type: 'NIP',
    identifier_value: [nipFor(401), nipFor(402)],
  });
  assert.equal(two.statusCode, 202);
  await drainJobs(t);
  // At zero: the feeds are refused, the watched list stays free, an add of watched values is free.
  assert.equal(await balance(t, carol.master), 0);
  const feed = await inject('GET', '/watchlist/events', carol.master);
  assert.equal(feed.statusCode, 402);
  assert.deepEqual(feed.json(), { message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS', balance: 0, required: 1 });
  assert.equal(
    (await inject('GET', `/companies/events?identifier_type=NIP&identifier_value=${nipFor(401)}`, carol.master)).statusCode,
    402,
  );
  assert.equal((await inject('GET', '/companies/watched', carol.master)).statusCode, 200);
  const again = await inject('POST', '/companies/add', carol.master, { identifier_type: 'NIP', identifier_value: [nipFor(401)] });
  assert.equal(again.statusCode, 202);
  assert.equal(again.json().already_watched, 1);
});

test("tenant isolation: another account's watchlist, requests and feed are never visible or changed", async () => {
  const dave = await createAccount(t);
  const add = await inject('POST', '/companies/add', dave.master, { identifier_type: 'NIP', identifier_value: [nipFor(410), nipFor(411)] });
  const daveRequest = add.json().request_id;
  await drainJobs(t);
  clock.set('2026-11-22T10:00:00Z');
  await runDay(t.db.db, '2026-11-22', [
    { n: 410, name: 'ZMIENIONA 410' },
    { n: 411, name: 'ZMIENIONA 411' },
  ]);
  const daveFeed = (await inject('GET', '/watchlist/events', dave.master)).json();
  assert.equal(daveFeed.meta.total, 2);

  const eve = await createAccount(t);
  assert.deepEqual((await inject('GET', '/companies/watched', eve.master)).json().data, []);
  assert.deepEqual((await inject('GET', '/watchlist/events', eve.master)).json().data, []);
  const other = await inject('GET', `/watchlist/requests/${daveRequest}`, eve.master);
  assert.equal(other.statusCode, 404);
  assert.deepEqual(other.json(), { message: 'Watchlist request not found' });
  const remove = await inject('DELETE', '/companies/watched', eve.master, { identifier_type: 'NIP', identifier_value: [nipFor(410)] });
  assert.deepEqual(remove.json().data, { removed: [], not_found: [], not_watched: [nipFor(410)] });
  // Eve watching the same company is her own watch, from her own day.
  await inject('POST', '/companies/add', eve.master, { identifier_type: 'NIP', identifier_value: [nipFor(410)] });
  await drainJobs(t);
  assert.equal((await inject('GET', '/watchlist/events', eve.master)).json().meta.total, 1);
  assert.equal((await inject('GET', '/watchlist/events', dave.master)).json().meta.total, 2, "dave's feed is untouched");
  assert.equal((await inject('GET', '/companies/watched', dave.master)).json().meta.total, 2);
  void bobId;
});

test('page and per_page: bounds, defaults, the last page', async () => {
  for (const q of ['per_page=0', 'per_page=101', 'page=0', 'per_page=abc']) {
    for (const url of [
      '/companies/watched',
      '/watchlist/events',
      `/companies/events?identifier_type=NIP&identifier_value=${nipFor(400)}`,
    ]) {
      const res = await inject('GET', `${url}${url.includes('?') ? '&' : '?'}${q}`, alice.master);
      assert.equal(res.statusCode, 422, `${url} ${q}`);
      assert.deepEqual(Object.keys(res.json().errors), [q.split('=')[0]]);
    }
  }
  const all = (await inject('GET', '/companies/watched?per_page=100', alice.master)).json();
  assert.equal(all.meta.total, 30);
  assert.equal(all.data.length, 30);
  const page = (await inject('GET', '/companies/watched?per_page=7&page=5', alice.master)).json();
  assert.deepEqual(page.meta, { total: 30, per_page: 7, current_page: 5, last_page: 5 });
  assert.equal(page.data.length, 2);
  const past = (await inject('GET', '/companies/watched?page=9', alice.master)).json();
  assert.deepEqual(past.data, []);
  assert.equal((await inject('GET', '/companies/watched', alice.master)).json().meta.per_page, 20);
});

test('filters on both feeds: event_type (one or a comma list), scope, from_date / to_date; bad values are 422', async () => {
  clock.set('2026-11-23T10:00:00Z');
  await runDay(t.db.db, '2026-11-23', [
    {
      n: 420,
      name: 'NOWA NAZWA 420',
      contacts: [
        { type: 'email', value: 'biuro420@example.pl' },
        { type: 'phone', value: '+48 1' },
      ],
    },
    { n: 421, city: 'Kraków', postalCode: '30-001' },
  ]);
  await runDay(t.db.db, '2026-11-24', [
    {
      n: 420,
      name: 'JESZCZE NOWSZA 420',
      contacts: [
        { type: 'email', value: 'biuro420@example.pl' },
        { type: 'phone', value: '+48 1' },
      ],
    },
  ]);
  const types = async (q: string, url = '/watchlist/events') => {
    const res = await inject('GET', `${url}${url.includes('?') ? '&' : '?'}${q}`, alice.master);
    assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
    const body = res.json();
    const events = (Array.isArray(body.data) ? body.data : body.data.events) as { event_type: string; event_date: string }[];
    assert.equal(body.meta.total, events.length);
    return events.map((e) => `${e.event_date} ${e.event_type}`);
  };
  // (The 2026-11-22 run changed two other watched companies' names.)
  assert.deepEqual(await types('event_type=COMPANY_NAME_CHANGED&from_date=2026-11-23'), [
    '2026-11-24 COMPANY_NAME_CHANGED',
    '2026-11-23 COMPANY_NAME_CHANGED',
  ]);
  assert.deepEqual(await types('event_type=COMPANY_NAME_CHANGED'), [
    '2026-11-24 COMPANY_NAME_CHANGED',
    '2026-11-23 COMPANY_NAME_CHANGED',
    '2026-11-22 COMPANY_NAME_CHANGED',
    '2026-11-22 COMPANY_NAME_CHANGED',
  ]);
  assert.deepEqual(await types('event_type=COMPANY_NAME_CHANGED,COMPANY_PHONE_CHANGED&from_date=2026-11-23&to_date=2026-11-23'), [
    '2026-11-23 COMPANY_PHONE_CHANGED',
    '2026-11-23 COMPANY_NAME_CHANGED',
  ]);
  assert.deepEqual(await types('scope=address'), ['2026-11-23 COMPANY_REGISTERED_ADDRESS_CHANGED']);
  assert.deepEqual(await types('scope=contact&from_date=2026-11-24'), []);
  assert.deepEqual(await types('scope=identity&event_type=COMPANY_PHONE_CHANGED'), [], 'both must match');
  assert.deepEqual(await types('from_date=2026-11-24&to_date=2026-11-24'), ['2026-11-24 COMPANY_NAME_CHANGED']);
  const perCompany = `/companies/events?identifier_type=NIP&identifier_value=${nipFor(420)}`;
  assert.deepEqual(await types('event_type=COMPANY_NAME_CHANGED&from_date=2026-11-24', perCompany), ['2026-11-24 COMPANY_NAME_CHANGED']);
  assert.deepEqual(await types('scope=contact', perCompany), ['2026-11-23 COMPANY_PHONE_CHANGED']);

  // An empty filter (a form's empty field) is the same as none.
  const all = await types('');
  for (const q of ['from_date=', 'to_date=', 'from_date=&to_date=', 'event_type=', 'scope=']) {
    assert.deepEqual(await types(q), all, q);
    assert.deepEqual(await types(q, perCompany), await types('', perCompany), `${q} (per company)`);
  }

  const bad: [string, string][] = [
    ['event_type=COMPANY_EXPLODED', 'event_type'],
    ['scope=weather', 'scope'],
    ['from_date=2026-13-01', 'from_date'],
    ['to_date=yesterday', 'to_date'],
    ['from_date=2026-11-24&to_date=2026-11-23', 'to_date'],
  ];
  for (const [q, key] of bad) {
    for (const url of ['/watchlist/events', perCompany]) {
      const res = await inject('GET', `${url}${url.includes('?') ? '&' : '?'}${q}`, alice.master);
      assert.equal(res.statusCode, 422, `${url} ${q}`);
      assert.ok(res.json().errors[key], `${q}: ${res.body}`);
    }
  }
  // A value over its limit is one error on its field (not also one on a list element `scope.0`).
  const long = await inject('GET', `/watchlist/events?scope=${'x'.repeat(201)}`, alice.master);
  assert.deepEqual(long.json(), {
    message: 'The scope field must not be greater than 200 characters.',
    errors: { scope: ['The scope field must not be greater than 200 characters.'] },
  });
  const missing = await inject('GET', '/companies/events?identifier_type=NIP', alice.master);
  assert.equal(missing.statusCode, 422);
  assert.ok(missing.json().errors.identifier_value);
  const wrongType = await inject('GET', `/companies/events?identifier_type=PESEL&identifier_value=${nipFor(420)}`, alice.master);
  assert.ok(wrongType.json().errors.identifier_type);
  // A 422 is never charged.
  const usage = (await ledger(t, aliceId)).filter((r) => r.type === 'usage' && r.description !== 'companies.add');
  const feedReads = usage.length;
  await inject('GET', '/watchlist/events?scope=weather', alice.master);
  assert.equal((await ledger(t, aliceId)).filter((r) => r.type === 'usage' && r.description !== 'companies.add').length, feedReads);
});

test('the OpenAPI document describes every watchlist route with its responses', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const [path, method, codes] of [
    ['/api/v1/companies/add', 'post', ['202', '401', '402', '422']],
    ['/api/v1/companies/watched', 'get', ['200', '401', '422']],
    ['/api/v1/companies/watched', 'delete', ['200', '401', '422']],
    ['/api/v1/companies/events', 'get', ['200', '401', '402', '404', '422']],
    ['/api/v1/watchlist/events', 'get', ['200', '401', '402', '422']],
  ] as const) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path}`);
    for (const c of codes) assert.ok(op.responses[c], `${method} ${path} ${c}`);
  }
});

test("the feed's per-day counters match its rows", async () => {
  assert.deepEqual(await feedCountMismatches(t.db.db), []);
});

test('an add accepted at 23:59:59 whose job runs after midnight watches from the day it was accepted', async () => {
  const carol = await createAccount(t);
  clock.set('2026-11-25T23:59:59Z');
  const add = await inject('POST', '/companies/add', carol.master, { identifier_type: 'NIP', identifier_value: [nipFor(429)] });
  assert.equal(add.statusCode, 202);
  clock.set('2026-11-26T00:00:05Z');
  await drainJobs(t);
  const watched = (await inject('GET', '/companies/watched', carol.master, undefined)).json();
  assert.equal(watched.data[0].watched_since, '2026-11-25');
});

test('identifier_type in any case, as add and remove take it: the snapshot and a company events answer, not 422', async () => {
  const snap = await inject('POST', '/companies/snapshot', alice.master, { identifier_type: ' nip ', identifier_value: nipFor(401) });
  assert.equal(snap.statusCode, 200, snap.body);
  const events = await inject('GET', `/companies/events?identifier_type=Nip&identifier_value=${nipFor(401)}`, alice.master);
  assert.equal(events.statusCode, 200, events.body);
  const bad = await inject('POST', '/companies/snapshot', alice.master, { identifier_type: 'nipp', identifier_value: nipFor(401) });
  assert.equal(bad.statusCode, 422);
  assert.ok(bad.json().errors.identifier_type, bad.body);
});
