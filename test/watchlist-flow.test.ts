import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createManualClock, createTestApp, drainJobs, latestMail } from './helpers/app.ts';
import { krsFor, nipFor, regonFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, ledger, runDay, feedCountMismatches } from './watchlist-support.ts';

/**
 * The whole flow on the real app, worker tasks and registry: add, the add job, the watched list,
 * daily runs with changes, both feeds with exact values, removal, and nothing more in the feed.
 */

const clock = createManualClock('2026-11-21T10:00:00Z');
const t = await createTestApp({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);
const auth = bearer(acct.master);

const alfa: CompanySpec = { n: 101, name: 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' };
const beta: CompanySpec = { n: 102, name: 'BETA SPÓŁKA AKCYJNA' };
const gamma: CompanySpec = { n: 103, name: 'GAMMA SPÓŁKA JAWNA' };

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: auth });

test('setup: the registry knows three companies; one changed the day before the watch', async () => {
  await runDay(t.db.db, '2026-11-19', [alfa, beta, gamma]);
  const s = await runDay(t.db.db, '2026-11-20', [{ ...alfa, name: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' }]);
  assert.equal(s.events, 1);
});

test('add: 202 at once with the counts; duplicates collapse; nothing is watched before the job runs', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: auth,
    payload: {
      identifier_type: 'NIP',
      identifier_value: [nipFor(101), `PL ${nipFor(102).slice(0, 3)}-${nipFor(102).slice(3)}`, nipFor(102)],
    },
  });
  assert.equal(res.statusCode, 202, res.body);
  const body = res.json();
  assert.equal(body.success, true);
  assert.match(body.message, /2 identifiers queued/);
  assert.match(body.request_id, /^[A-Z0-9]{12}$/);
  assert.deepEqual(
    {
      submitted: body.submitted,
      duplicates: body.duplicates,
      queued: body.queued,
      already_watched: body.already_watched,
      credits_charged: body.credits_charged,
    },
    { submitted: 3, duplicates: 1, queued: 2, already_watched: 0, credits_charged: 2 },
  );
  // A charged add tells its cost in the headers every charged success carries (docs/credits.md).
  const balance = (await get('/api/v1/wallet')).json().data.balance;
  assert.deepEqual([res.headers['x-credits-charged'], res.headers['x-credits-remaining']], ['2', String(balance)]);
  const watched = (await get('/api/v1/companies/watched')).json();
  assert.deepEqual(watched, { success: true, data: [], meta: { total: 0, per_page: 20, current_page: 1, last_page: 1 } });
  const status = (await get(`/api/v1/watchlist/requests/${body.request_id}`)).json().data;
  assert.equal(status.status, 'queued');
  assert.deepEqual(
    status.items.map((i: { status: string }) => i.status),
    ['queued', 'queued'],
  );
});

test('the add job watches both; one mail lists them; the watched list shows them newest first', async () => {
  await drainJobs(t);
  const res = await get('/api/v1/companies/watched');
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.equal(body.meta.total, 2);
  const byId = new Map(body.data.map((w: { primary_identifier: string }) => [w.primary_identifier, w]));
  assert.deepEqual(byId.get(nipFor(101)), {
    primary_identifier: nipFor(101),
    name: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    watched_since: '2026-11-21',
    last_event_at: null,
    events_count: 0,
  });
  assert.deepEqual(byId.get(nipFor(102)), {
    primary_identifier: nipFor(102),
    name: 'BETA SPÓŁKA AKCYJNA',
    watched_since: '2026-11-21',
    last_event_at: null,
    events_count: 0,
  });
  const mail = await latestMail(t, acct.email, 'watchlist');
  assert.ok(mail, 'a confirmation mail is queued');
  assert.match(mail.text_body, new RegExp(`Now watched \\(2\\):\\n  NIP ${nipFor(101)}.*\\n  NIP ${nipFor(102)}`));
  assert.match(mail.text_body, /Could not be found \(0\):\n {2}none/);
  // Watched later is listed first.
  clock.set('2026-11-21T11:00:00Z');
  const add = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: auth,
    payload: { name: 'KRS', value: [krsFor(103).replace(/^0+/, '')] },
  });
  assert.equal(add.statusCode, 202, add.body);
  assert.equal(add.json().queued, 1);
  await drainJobs(t);
  const list = (await get('/api/v1/companies/watched')).json();
  assert.deepEqual(list.data.map((w: { primary_identifier: string }) => w.primary_identifier)[0], nipFor(103));
  assert.equal(list.meta.total, 3);
});

test('a value already watched is a free no-op', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: auth,
    payload: { identifier_type: 'REGON9', identifier_value: [regonFor(101)] },
  });
  assert.equal(res.statusCode, 202);
  assert.deepEqual(
    { queued: res.json().queued, already_watched: res.json().already_watched, credits_charged: res.json().credits_charged },
    { queued: 0, already_watched: 1, credits_charged: 0 },
  );
  assert.equal(res.headers['x-credits-charged'], undefined); // free: no credit headers
  await drainJobs(t);
  const adds = (await ledger(t, accountId)).filter((r) => r.description.startsWith('companies.add'));
  assert.deepEqual(
    adds.map((r) => r.amount),
    [-2, -1],
    'two credits for the first add, one for the KRS, none for the no-op',
  );
});

let dayEvents: { alfa: number; beta: number; gamma: number };

test("a daily run with changes: the feed shows the watched companies' events with their values, newest first", async () => {
  const s = await runDay(t.db.db, '2026-11-22', [
    {
      ...alfa,
      name: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      contacts: [
        { type: 'email', value: 'biuro101@example.pl' },
        { type: 'phone', value: '+48 42 100 00 01' },
      ],
    },
    {
      ...beta,
      status: 'zawieszony',
      dates: [
        { type: 'registration', date: '2015-03-02' },
        { type: 'activity_start', date: '2015-03-10' },
        { type: 'suspension', date: '2026-11-22' },
      ],
    },
  ]);
  assert.ok(s.events >= 3, `events: ${s.events}`);
  const res = await get('/api/v1/watchlist/events');
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.status, 'success');
  assert.equal(body.meta.total, s.events);
  assert.deepEqual(Object.keys(body.meta).sort(), ['current_page', 'fetched_at', 'last_page', 'per_page', 'total']);
  const phone = body.data.find((e: { event_type: string }) => e.event_type === 'COMPANY_PHONE_CHANGED');
  assert.deepEqual(
    { ...phone, id: typeof phone.id },
    {
      id: 'number',
      event_type: 'COMPANY_PHONE_CHANGED',
      old_value: null,
      new_value: '+48 42 100 00 01',
      event_date: '2026-11-22',
      severity: 'info',
      primary_identifier: nipFor(101),
      identifier_type: 'NIP',
      company_name: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    },
  );
  const suspended = body.data.find((e: { event_type: string }) => e.event_type === 'COMPANY_SUSPENDED_DATE');
  assert.deepEqual(
    { new_value: suspended.new_value, severity: suspended.severity, primary_identifier: suspended.primary_identifier },
    { new_value: '2026-11-22', severity: 'warning', primary_identifier: nipFor(102) },
  );
  // Newest first: event_date, then id.
  const order = body.data.map((e: { event_date: string; id: number }) => [e.event_date, e.id]);
  assert.deepEqual(
    order,
    [...order].sort((a, b) => (a[0] === b[0] ? b[1] - a[1] : a[0] < b[0] ? 1 : -1)),
  );
  // The name change of 2026-11-20 predates the watch: not in the feed.
  assert.ok(!body.data.some((e: { event_date: string }) => e.event_date < '2026-11-21'));
  dayEvents = {
    alfa: body.data.filter((e: { primary_identifier: string }) => e.primary_identifier === nipFor(101)).length,
    beta: body.data.filter((e: { primary_identifier: string }) => e.primary_identifier === nipFor(102)).length,
    gamma: 0,
  };
  assert.ok(dayEvents.alfa >= 1 && dayEvents.beta >= 1);
});

test('the per-company endpoint shows every event of a known company, watched or not, in its envelope', async () => {
  const res = await get(`/api/v1/companies/events?identifier_type=NIP&identifier_value=${nipFor(101)}`);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.status, 'success');
  assert.deepEqual(body.data.company, {
    primary_identifier: nipFor(101),
    identifier_type: 'NIP',
    name: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
  });
  assert.equal(body.data.events.length, dayEvents.alfa + 1, "the feed's events plus the one before the watch");
  const first = body.data.events.at(-1);
  assert.deepEqual(
    { ...first, id: typeof first.id },
    {
      id: 'number',
      event_type: 'COMPANY_NAME_CHANGED',
      old_value: 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      new_value: 'ALFA BIS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      event_date: '2026-11-20',
      severity: 'info',
    },
  );
  assert.deepEqual(Object.keys(body.meta).sort(), ['current_page', 'fetched_at', 'last_page', 'per_page', 'total']);
  assert.equal(body.meta.total, dayEvents.alfa + 1);
  const unknown = await get(`/api/v1/companies/events?identifier_type=NIP&identifier_value=${nipFor(999)}`);
  assert.equal(unknown.statusCode, 404);
  assert.deepEqual(unknown.json(), { message: 'Company not found' });
  const bad = await get('/api/v1/companies/events?identifier_type=NIP&identifier_value=1234567890');
  assert.equal(bad.statusCode, 422);
  assert.deepEqual(bad.json().errors, { identifier_value: ['The NIP must be 10 digits with a valid checksum.'] });
});

test('the watched list counts what the feed shows', async () => {
  const data = (await get('/api/v1/companies/watched')).json().data as {
    primary_identifier: string;
    events_count: number;
    last_event_at: string | null;
  }[];
  const of = (nip: string) => data.find((w) => w.primary_identifier === nip)!;
  assert.deepEqual(
    { count: of(nipFor(101)).events_count, last: of(nipFor(101)).last_event_at },
    { count: dayEvents.alfa, last: '2026-11-22' },
  );
  assert.deepEqual(
    { count: of(nipFor(102)).events_count, last: of(nipFor(102)).last_event_at },
    { count: dayEvents.beta, last: '2026-11-22' },
  );
  assert.deepEqual({ count: of(nipFor(103)).events_count, last: of(nipFor(103)).last_event_at }, { count: 0, last: null });
});

test('remove: removed, not_watched and not_found; the feed stops showing the company at once and after the next run', async () => {
  const res = await t.app.inject({
    method: 'DELETE',
    url: '/api/v1/companies/watched',
    headers: auth,
    payload: { identifier_type: 'NIP', identifier_value: [nipFor(102), nipFor(104), nipFor(102)] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.success, true);
  assert.deepEqual(body.data, { removed: [nipFor(102)], not_found: [nipFor(104)], not_watched: [] });
  assert.equal(body.meta.total, 2);
  assert.deepEqual(
    { removed: body.meta.removed, not_found: body.meta.not_found, not_watched: body.meta.not_watched },
    { removed: 1, not_found: 1, not_watched: 0 },
  );
  assert.ok(!Number.isNaN(Date.parse(body.meta.removed_at)));
  const again = await t.app.inject({
    method: 'DELETE',
    url: '/api/v1/companies/watched',
    headers: auth,
    payload: { identifier_type: 'NIP', identifier_value: [nipFor(102)] },
  });
  assert.deepEqual(again.json().data, { removed: [], not_found: [], not_watched: [nipFor(102)] });

  const feed = (await get('/api/v1/watchlist/events')).json();
  assert.equal(feed.meta.total, dayEvents.alfa);
  assert.ok(feed.data.every((e: { primary_identifier: string }) => e.primary_identifier === nipFor(101)));
  assert.equal((await get('/api/v1/companies/watched')).json().meta.total, 2);

  await runDay(t.db.db, '2026-11-23', [
    { ...beta, name: 'BETA NOWA SPÓŁKA AKCYJNA' },
    { ...gamma, name: 'GAMMA NOWA SPÓŁKA JAWNA' },
  ]);
  const after = (await get('/api/v1/watchlist/events')).json();
  assert.ok(
    !after.data.some((e: { primary_identifier: string }) => e.primary_identifier === nipFor(102)),
    'no event of the removed company',
  );
  const gammaEvents = after.data.filter((e: { primary_identifier: string }) => e.primary_identifier === nipFor(103));
  assert.deepEqual(
    gammaEvents.map((e: { event_type: string; new_value: string; identifier_type: string }) => [
      e.event_type,
      e.new_value,
      e.identifier_type,
    ]),
    [['COMPANY_NAME_CHANGED', 'GAMMA NOWA SPÓŁKA JAWNA', 'NIP']],
  );
  // The per-company endpoint still shows the removed company's events.
  const betaAll = (await get(`/api/v1/companies/events?identifier_type=NIP&identifier_value=${nipFor(102)}`)).json();
  assert.ok(
    betaAll.data.events.some(
      (e: { event_type: string; new_value: string; event_date: string }) =>
        e.event_type === 'COMPANY_NAME_CHANGED' && e.new_value === 'BETA NOWA SPÓŁKA AKCYJNA' && e.event_date === '2026-11-23',
    ),
  );
});

test('watching a removed company again watches it from the day it was first watched (DECISIONS 5), its gap included', async () => {
  clock.set('2026-11-24T08:00:00Z');
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: auth,
    payload: { identifier_type: 'NIP', identifier_value: [nipFor(102)] },
  });
  assert.equal(res.json().queued, 1);
  await drainJobs(t);
  const feed = (await get('/api/v1/watchlist/events')).json();
  const beta = feed.data.filter((e: { primary_identifier: string }) => e.primary_identifier === nipFor(102));
  // The run of 2026-11-22 (watched) and that of 2026-11-23 (while it was off the list).
  assert.equal(beta.filter((e: { event_date: string }) => e.event_date === '2026-11-22').length, dayEvents.beta);
  assert.ok(
    beta.some(
      (e: { event_type: string; new_value: string; event_date: string }) =>
        e.event_date === '2026-11-23' && e.new_value === 'BETA NOWA SPÓŁKA AKCYJNA',
    ),
  );
  const w = (await get('/api/v1/companies/watched'))
    .json()
    .data.find((x: { primary_identifier: string }) => x.primary_identifier === nipFor(102));
  assert.deepEqual(w, {
    primary_identifier: nipFor(102),
    name: 'BETA NOWA SPÓŁKA AKCYJNA',
    watched_since: '2026-11-21',
    last_event_at: w.last_event_at,
    events_count: beta.length,
  });
  assert.match(w.last_event_at, /^2026-11-23/);
});

test('each feed read is charged one credit; the watched list is free', async () => {
  const before = (await ledger(t, accountId)).length;
  await get('/api/v1/companies/watched');
  assert.equal((await ledger(t, accountId)).length, before);
  const r = await get('/api/v1/watchlist/events');
  assert.equal(r.headers['x-credits-charged'], '1');
  const rows = await ledger(t, accountId);
  assert.deepEqual(
    rows.slice(before).map((x) => [x.type, x.amount, x.description]),
    [['usage', -1, 'watchlist.events']],
  );
  const c = await get(`/api/v1/companies/events?identifier_type=NIP&identifier_value=${nipFor(101)}`);
  assert.equal(c.headers['x-credits-charged'], '1');
  assert.deepEqual((await ledger(t, accountId)).at(-1)!.description, 'companies.events');
  const missing = await get(`/api/v1/companies/events?identifier_type=NIP&identifier_value=${nipFor(999)}`);
  assert.equal(missing.statusCode, 404);
  assert.equal((await ledger(t, accountId)).at(-1)!.description, 'companies.events', 'a 404 is not charged');
});

test("the feed's per-day counters match its rows", async () => {
  assert.deepEqual(await feedCountMismatches(t.db.db), []);
});
