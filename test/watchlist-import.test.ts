import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defer } from './helpers/cleanup.ts';
import { bearer, createAccount, createManualClock, createTestApp, startTestWorker } from './helpers/app.ts';
import { jsonFixtureReply, problemReply, startFixtureServer, type Handler } from './helpers/fixture-server.ts';
import { krsFor, nipFor } from './helpers/registry.ts';
import { startSmtp } from './helpers/smtp.ts';
import { accountIdOf, balance, ledger, runDay } from './watchlist-support.ts';

/**
 * An add with identifiers the database does not know: the on-demand import asks the live
 * registries (KRS here, a local server replaying real payloads); what no registry knows is not
 * watched, refunded, and listed in the confirmation mail a real SMTP server receives.
 */

const krsApi: Handler = (req) => {
  const m = /^\/api\/krs\/OdpisAktualny\/(\d{10})$/.exec(req.path);
  if (m?.[1] === '0000028860' && req.query.get('rejestr') === 'P') return jsonFixtureReply('krs/odpis-aktualny-P-0000028860-sa-orlen.json');
  return problemReply('krs/odpis-aktualny-not-found-404.json');
};

const smtp = await startSmtp();
const krs = await startFixtureServer(krsApi);
defer(() => krs.close());
const clock = createManualClock('2026-11-21T09:00:00Z');
const t = await createTestApp({
  clock,
  env: { SMTP_URL: smtp.url, REGISTRY_SOURCES: 'krs', KRS_API_URL: krs.url, MAIL_FROM: 'regwatch <watch@regwatch.test>' },
});
// The account first: once a worker has sent the registration mail, its token is struck from the outbox.
const acct = await createAccount(t);
await startTestWorker(t);
const accountId = await accountIdOf(t, acct.userRef);

test('known, importable and unknown KRS numbers: watched, imported then watched, not found and refunded; one mail says which', async () => {
  await runDay(t.db.db, '2026-11-20', [{ n: 42 }]);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: bearer(acct.master),
    payload: { identifier_type: 'KRS', identifier_value: [krsFor(42), '28860', '0000999999', '999998'] },
  });
  assert.equal(res.statusCode, 202, res.body);
  const body = res.json();
  assert.deepEqual({ queued: body.queued, credits_charged: body.credits_charged }, { queued: 4, credits_charged: 4 });

  const mail = await smtp.waitFor(
    (m) => m.to !== undefined && JSON.stringify(m.to).includes(acct.email) && /watchlist/i.test(m.subject ?? ''),
  );
  const text = mail.text ?? '';
  assert.match(mail.subject ?? '', /2 watched, 2 not found/);
  const watchedSection = text.slice(text.indexOf('Now watched'), text.indexOf('Could not be found'));
  const missingSection = text.slice(text.indexOf('Could not be found'));
  assert.match(watchedSection, /Now watched \(2\):/);
  assert.match(watchedSection, new RegExp(`KRS ${krsFor(42)}`));
  assert.match(watchedSection, /KRS 0000028860 - ORLEN SPÓŁKA AKCYJNA/);
  assert.match(missingSection, /Could not be found \(2\):\n {2}KRS 0000999999\n {2}KRS 0000999998/);
  assert.match(missingSection, /2 credits have been refunded/);
  assert.equal(smtp.messages.filter((m) => /watchlist/i.test(m.subject ?? '')).length, 1, 'one confirmation mail');

  const adds = (await ledger(t, accountId)).filter((r) => r.description.startsWith('companies.add'));
  assert.deepEqual(
    adds.map((r) => [r.type, r.amount, r.reference]),
    [
      ['usage', -4, `companies.add:${body.request_id}`],
      ['refund', 2, `companies.add.refund:${body.request_id}`],
    ],
  );
  assert.equal(await balance(t, acct.master), 98);

  const watched = (await t.app.inject({ method: 'GET', url: '/api/v1/companies/watched', headers: bearer(acct.master) })).json();
  assert.deepEqual(watched.data.map((w: { primary_identifier: string }) => w.primary_identifier).sort(), [nipFor(42), '7740001454'].sort());
  const status = (
    await t.app.inject({ method: 'GET', url: `/api/v1/watchlist/requests/${body.request_id}`, headers: bearer(acct.master) })
  ).json().data;
  assert.equal(status.status, 'completed');
  assert.deepEqual(
    status.items.map((i: { identifier_value: string; status: string }) => [i.identifier_value, i.status]),
    [
      [krsFor(42), 'watched'],
      ['0000028860', 'watched'],
      ['0000999999', 'not_found'],
      ['0000999998', 'not_found'],
    ],
  );
  assert.deepEqual({ charged: status.credits_charged, refunded: status.credits_refunded }, { charged: 4, refunded: 2 });
});

test('the per-company endpoint imports an unknown company too, and answers 404 only when no registry knows it', async () => {
  const missing = await t.app.inject({
    method: 'GET',
    url: '/api/v1/companies/events?identifier_type=KRS&identifier_value=123',
    headers: bearer(acct.master),
  });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { message: 'Company not found' });
  const known = await t.app.inject({
    method: 'GET',
    url: '/api/v1/companies/events?identifier_type=NIP&identifier_value=7740001454',
    headers: bearer(acct.master),
  });
  assert.equal(known.statusCode, 200);
  assert.deepEqual(known.json().data, {
    company: { primary_identifier: '7740001454', identifier_type: 'NIP', name: 'ORLEN SPÓŁKA AKCYJNA' },
    events: [],
  });
});
