import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createManualClock, createTestApp, drainJobs, latestMail } from './helpers/app.ts';
import { krsFor, nipFor, type CompanySpec } from './helpers/registry.ts';
import { accountIdOf, balance, ledger, runDay } from './watchlist-support.ts';
import pino from 'pino';
import { settleWatchRequest } from '../src/modules/watchlist/jobs.ts';
import { claimQueuedItems, findCompanyIds, findRequestByRef, settleItems, watchCompanies } from '../src/modules/watchlist/repo.ts';

/**
 * A value removed while its add request is still queued is cancelled: never watched, refunded,
 * listed in the confirmation; and a removal that meets the job watching the value wins too.
 */

const clock = createManualClock('2026-11-21T10:00:00Z');
const t = await createTestApp({ clock, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);
const auth = bearer(acct.master);

const known: CompanySpec = { n: 501, name: 'ZNANA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' };
const other: CompanySpec = { n: 502, name: 'INNA SPÓŁKA AKCYJNA' };
const unknownNip = nipFor(599);

const add = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/companies/add', headers: auth, payload });
const remove = (payload: Record<string, unknown>) =>
  t.app.inject({ method: 'DELETE', url: '/api/v1/companies/watched', headers: auth, payload });
const watchedNips = async () =>
  (await t.app.inject({ method: 'GET', url: '/api/v1/companies/watched', headers: auth }))
    .json()
    .data.map((w: { primary_identifier: string }) => w.primary_identifier);
const requestView = async (ref: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/requests/${ref}`, headers: auth })).json().data;

test('setup: the registry knows two companies', async () => {
  await runDay(t.db.db, '2026-11-20', [known, other]);
});

test('removing queued values cancels them: removed at once, refunded, the request completes and mails; the job then watches nothing', async () => {
  const before = await balance(t, acct.master);
  const added = await add({ identifier_type: 'NIP', identifier_value: [nipFor(501), unknownNip] });
  assert.equal(added.statusCode, 202, added.body);
  const ref = added.json().request_id;
  assert.equal(await balance(t, acct.master), before - 2);

  const res = await remove({ identifier_type: 'NIP', identifier_value: [nipFor(501), unknownNip, nipFor(502)] });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().data, { removed: [nipFor(501), unknownNip], not_found: [], not_watched: [nipFor(502)] });

  const view = await requestView(ref);
  assert.equal(view.status, 'completed');
  assert.deepEqual(
    view.items.map((i: { identifier_value: string; status: string }) => [i.identifier_value, i.status]),
    [
      [nipFor(501), 'removed'],
      [unknownNip, 'removed'],
    ],
  );
  assert.equal(view.credits_refunded, 2);
  assert.equal(await balance(t, acct.master), before);
  const refunds = (await ledger(t, accountId)).filter((r) => r.reference === `companies.add.refund:${ref}`);
  assert.deepEqual(
    refunds.map((r) => r.amount),
    [2],
  );
  const mail = await latestMail(t, acct.email, 'watchlist');
  assert.ok(mail);
  assert.match(
    mail.text_body,
    new RegExp(
      `Removed before they were watched \\(2; not watched, refunded\\):\\n  NIP ${nipFor(501)} - ZNANA.*\\n  NIP ${unknownNip}\\n`,
    ),
  );
  assert.match(mail.text_body, /Now watched \(0\):\n {2}none/);

  await drainJobs(t);
  assert.deepEqual(await watchedNips(), []);
  assert.equal((await requestView(ref)).credits_refunded, 2, 'the job refunds nothing twice');
  assert.equal((await ledger(t, accountId)).filter((r) => r.reference === `companies.add.refund:${ref}`).length, 1);
});

test('a removal by another identifier of the company cancels the queued value; other values of the request still get watched', async () => {
  const added = await add({ identifier_type: 'KRS', identifier_value: [krsFor(501), krsFor(502)] });
  const ref = added.json().request_id;
  const res = await remove({ identifier_type: 'NIP', identifier_value: [nipFor(501)] });
  assert.deepEqual(res.json().data, { removed: [nipFor(501)], not_found: [], not_watched: [] });
  assert.equal((await requestView(ref)).status, 'queued', 'one value is still queued');
  await drainJobs(t);
  const view = await requestView(ref);
  assert.deepEqual(
    view.items.map((i: { status: string }) => i.status),
    ['removed', 'watched'],
  );
  assert.equal(view.credits_refunded, 1);
  assert.deepEqual(await watchedNips(), [nipFor(502)]);
  const mail = await latestMail(t, acct.email, 'watchlist');
  assert.match(mail!.text_body, new RegExp(`Now watched \\(1\\):\\n  KRS ${krsFor(502)}`));
  assert.match(mail!.text_body, new RegExp(`Removed before they were watched \\(1; not watched, refunded\\):\\n  KRS ${krsFor(501)}`));
});

test('a removal that meets the job watching the value waits for it and then removes the company', async () => {
  clock.set('2026-11-22T10:00:00Z');
  const added = await add({ identifier_type: 'NIP', identifier_value: [nipFor(501)] });
  const request = (await findRequestByRef(t.db.db, accountId, added.json().request_id))!;
  const companyId = (await findCompanyIds(t.db.db, 'NIP', [nipFor(501)])).get(nipFor(501))!;

  // The job's transaction, held open after it locked the item (jobs.ts settleWatched).
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let claimed!: () => void;
  const claimedNow = new Promise<void>((r) => {
    claimed = r;
  });
  const job = t.db.db.transaction().execute(async (trx) => {
    const open = await claimQueuedItems(trx, request.id, [0]);
    assert.deepEqual([...open], [0]);
    claimed();
    await held;
    await watchCompanies(trx, accountId, [companyId], clock.now());
    await settleItems(trx, request.id, [{ position: 0, status: 'watched', companyId }], clock.now());
  });
  await claimedNow;
  let removedResponse: { statusCode: number; json(): { data: unknown } } | null = null;
  const removal = remove({ identifier_type: 'NIP', identifier_value: [nipFor(501)] }).then((r) => {
    removedResponse = r;
  });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(removedResponse, null, 'the removal waits for the job');
  release();
  await job;
  await removal;
  assert.equal(removedResponse!.statusCode, 200);
  assert.deepEqual(removedResponse!.json().data, { removed: [nipFor(501)], not_found: [], not_watched: [] });
  assert.deepEqual(await watchedNips(), [nipFor(502)], 'watched by the job, then removed');
  await drainJobs(t);
  const view = await requestView(added.json().request_id);
  assert.deepEqual([view.status, view.items[0].status, view.credits_refunded], ['completed', 'watched', 0]);
});

test('the job watches nothing a removal cancelled while it was importing the value', async () => {
  const nip = nipFor(598);
  const added = await add({ identifier_type: 'NIP', identifier_value: [nip] });
  const request = (await findRequestByRef(t.db.db, accountId, added.json().request_id))!;
  let removal: unknown = null;
  const outcome = await settleWatchRequest(
    {
      config: t.config,
      db: t.db.db,
      logger: pino({ level: 'silent' }),
      clock,
      // The import stores the company, and the client removes the value before the job settles it.
      importCompany: async () => {
        await runDay(t.db.db, '2026-11-22', [{ n: 598, name: 'NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' }]);
        removal = (await remove({ identifier_type: 'NIP', identifier_value: [nip] })).json().data;
        return { found: true };
      },
    },
    request.id,
  );
  assert.deepEqual(removal, { removed: [nip], not_found: [], not_watched: [] });
  assert.equal(outcome, 'already_completed', 'the removal completed the request');
  assert.ok(!(await watchedNips()).includes(nip));
  const view = await requestView(added.json().request_id);
  assert.deepEqual([view.status, view.items[0].status, view.credits_refunded], ['completed', 'removed', 1]);
});
