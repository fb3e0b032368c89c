import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount, createManualClock, createTestApp, latestInitToken, latestMail, bearer, drainJobs } from './helpers/app.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

test('register → mailed token → init gives a Master Token, a start transaction of 100 credits', async () => {
  const t = await createTestApp();
  const reg = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    // Surrounding spaces (a pasted address) are not part of it; case is folded.
    payload: { email: '  Ania.Kowalska@Example.COM\t', name: 'Ania' },
  });
  assert.equal(reg.statusCode, 201, reg.body);
  const body = reg.json();
  assert.match(body.user_ref, /^[A-Z0-9]{12}$/);
  assert.equal(body.email, 'ania.kowalska@example.com');
  assert.match(body.expires_at, ISO);
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(Object.keys(body).sort(), ['email', 'expires_at', 'message', 'user_ref']);

  const mail = await latestMail(t, 'ania.kowalska@example.com', 'registration');
  assert.ok(mail);
  assert.match(mail.text_body, /^Initialization token: \S+$/m);
  assert.match(mail.text_body, /Expires: \d{4}-\d{2}-\d{2}T/);

  const token = await latestInitToken(t, 'ania.kowalska@example.com');
  const init = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
  assert.equal(init.statusCode, 200);
  const i = init.json();
  assert.equal(i.user_ref, body.user_ref);
  assert.match(i.master_token, /^sk_live_[0-9A-Za-z]{32,}$/);
  assert.match(i.token_ref, /^[A-Z0-9]{12}$/);

  const wallet = await t.db.db.selectFrom('wallets').selectAll().executeTakeFirstOrThrow();
  assert.equal(Number(wallet.balance), 100);
  const txs = await t.db.db.selectFrom('wallet_transactions').selectAll().execute();
  assert.equal(txs.length, 1);
  assert.equal(txs[0].type, 'start');
  assert.equal(Number(txs[0].amount), 100);

  // The token works once.
  const again = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
  assert.equal(again.statusCode, 422);
  assert.ok(again.json().errors.token);

  // Only the hash is stored.
  const stored = await t.db.db.selectFrom('api_tokens').select('secret_hash').executeTakeFirstOrThrow();
  assert.notEqual(stored.secret_hash, i.master_token);
  assert.ok(!stored.secret_hash.includes(i.master_token.slice(8)));
  // And the Master Token is never written to the log.
  assert.ok(!t.logLines.join('\n').includes(i.master_token));
});

test('register validation: 422 with every error and the "(and N more error)" suffix', async () => {
  const t = await createTestApp();
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'not-an-email', name: 'x' } });
  assert.equal(r.statusCode, 422);
  const b = r.json();
  assert.deepEqual(Object.keys(b.errors).sort(), ['email', 'name']);
  assert.match(b.message, / \(and 1 more error\)$/);
  const missing = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: {} });
  assert.equal(missing.statusCode, 422);
  assert.deepEqual(missing.json().errors, { email: ['The email field is required.'], name: ['The name field is required.'] });
  const three = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 5, name: [] } });
  assert.equal(three.statusCode, 422);
  assert.match(three.json().message, /\(and \d+ more errors?\)$/);
  // The name is held to its limits as stored (trimmed), and a line break would start a line of the mail.
  for (const name of ['   ', ' a ', 'Bob\r\nX']) {
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'bob@example.com', name } });
    assert.equal(bad.statusCode, 422, JSON.stringify(name));
    assert.deepEqual(Object.keys(bad.json().errors), ['name']);
  }
  const count = await t.db.db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 0, 'a rejected request changes nothing');
});

test('registering an initialised e-mail is refused; re-registering before init mails a fresh token and the old one stops working', async () => {
  const t = await createTestApp();
  const acct = await createAccount(t, 'taken@example.com');
  const dup = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'TAKEN@example.com', name: 'Other' } });
  assert.equal(dup.statusCode, 422);
  assert.ok(dup.json().errors.email);
  assert.ok(acct.master);

  await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'twice@example.com', name: 'First' } });
  const first = await latestInitToken(t, 'twice@example.com');
  const second = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'twice@example.com', name: 'Second' },
  });
  assert.equal(second.statusCode, 201);
  const fresh = await latestInitToken(t, 'twice@example.com');
  assert.notEqual(first, fresh);
  const old = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token: first } });
  assert.equal(old.statusCode, 422);
  const ok = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token: fresh } });
  assert.equal(ok.statusCode, 200);
});

test('an initialization token expires after 24 hours', async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'late@example.com', name: 'Late' } });
  const token = await latestInitToken(t, 'late@example.com');
  clock.advance(24 * 3600 * 1000 + 1000);
  const r = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
  assert.equal(r.statusCode, 422);
  assert.deepEqual(Object.keys(r.json().errors), ['token']);
  const bogus = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token: 'nope' } });
  assert.equal(bogus.statusCode, 422);
});

test('recover answers identically for known and unknown e-mails; only a known account gets a link', async () => {
  const t = await createTestApp();
  await createAccount(t, 'known@example.com');
  const a = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: ' Known@Example.com ' } });
  const b = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'ghost@example.com' } });
  assert.equal(a.statusCode, 200);
  assert.equal(b.statusCode, 200);
  assert.equal(a.json().message, b.json().message);
  assert.deepEqual(Object.keys(a.json()).sort(), ['expires_at', 'message']);
  await drainJobs(t);
  const mail = await latestMail(t, 'known@example.com', 'recovery');
  assert.ok(mail);
  assert.match(mail.text_body, new RegExp(`^Confirm: ${t.config.publicBaseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/\\S+$`, 'm'));
  assert.equal(await latestMail(t, 'ghost@example.com'), undefined);

  const bad = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'nope' } });
  assert.equal(bad.statusCode, 422);
  assert.ok(Array.isArray(bad.json().errors.email));
  assert.equal(typeof bad.json().message, 'string');
});

test("the recovery link expires when the request's answer said, however late its mail job runs", async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  await createAccount(t, 'slow-worker@example.com');
  const asked = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'slow-worker@example.com' } });
  assert.equal(asked.json().expires_at, '2026-11-22T10:00:00.000Z');
  clock.advance(3 * 3600 * 1000); // the worker takes the job three hours later
  await drainJobs(t);
  const mail = await latestMail(t, 'slow-worker@example.com', 'recovery');
  assert.match(mail!.text_body, /until 2026-11-22T10:00:00\.000Z/);
  const row = await t.db.db.selectFrom('one_time_tokens').select('expires_at').where('purpose', '=', 'recover').executeTakeFirstOrThrow();
  assert.equal(row.expires_at.toISOString(), asked.json().expires_at);
  // A job run after the link's time is up mails nothing.
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'slow-worker@example.com' } });
  clock.advance(25 * 3600 * 1000);
  await drainJobs(t);
  const rows = await t.db.db.selectFrom('one_time_tokens').select('id').where('purpose', '=', 'recover').execute();
  assert.equal(rows.length, 1);
});

test('recovery confirmation: revokes every token, new Master Token works once; used or expired links fail with the specified 422', async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  const acct = await createAccount(t, 'lost@example.com');
  const api = await t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(acct.master), payload: { name: 'ci-token' } });
  const apiToken = api.json().data.plaintext;
  // Two links asked for: confirming the second ends the first.
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'lost@example.com' } });
  await drainJobs(t);
  const first = new URL(/^Confirm: (\S+)$/m.exec((await latestMail(t, 'lost@example.com', 'recovery'))!.text_body)![1]!);
  clock.advance(1000);
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'lost@example.com' } });
  await drainJobs(t);
  const mail = await latestMail(t, 'lost@example.com', 'recovery');
  const link = /^Confirm: (\S+)$/m.exec(mail!.text_body)![1];
  const url = new URL(link);
  const token = url.searchParams.get('token')!;

  const pageRes = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
  assert.equal(pageRes.statusCode, 200);
  assert.match(pageRes.headers['content-type'] as string, /text\/html/);
  assert.equal((pageRes.body.match(/<form/g) ?? []).length, 1);
  assert.equal((pageRes.body.match(/<button/g) ?? []).length, 1);

  const confirm = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/recover/confirm',
    headers: { accept: 'application/json' },
    payload: { token },
  });
  assert.equal(confirm.statusCode, 200);
  const newMaster = confirm.json().master_token;
  assert.match(newMaster, /^sk_live_/);

  for (const old of [acct.master, apiToken]) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(old) });
    assert.equal(r.statusCode, 401);
    assert.deepEqual(r.json(), { error: 'Token revoked', code: 'UNAUTHORIZED' });
  }
  const ok = await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(newMaster) });
  assert.equal(ok.statusCode, 200);
  assert.notEqual(first.searchParams.get('token'), token);
  const firstAfter = await t.app.inject({ method: 'GET', url: first.pathname + first.search, headers: { accept: 'application/json' } });
  assert.equal(firstAfter.statusCode, 422, 'the other link ended with the confirmation');
  assert.deepEqual(firstAfter.json().errors.email, [
    'This recovery link no longer works: the account was recovered with another link since.',
  ]);

  const reuse = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/recover/confirm',
    headers: { accept: 'application/json' },
    payload: { token },
  });
  assert.equal(reuse.statusCode, 422);
  assert.equal(reuse.json().message, 'Recovery confirmation failed');
  assert.ok(Array.isArray(reuse.json().errors.email));
  const reuseLink = await t.app.inject({ method: 'GET', url: url.pathname + url.search, headers: { accept: 'application/json' } });
  assert.equal(reuseLink.statusCode, 422);
  assert.equal(reuseLink.json().message, 'Recovery confirmation failed');
  const reusePage = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
  assert.match(reusePage.body, /already been used/);

  // An expired link.
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'lost@example.com' } });
  await drainJobs(t);
  const mail2 = await latestMail(t, 'lost@example.com', 'recovery');
  const token2 = new URL(/^Confirm: (\S+)$/m.exec(mail2!.text_body)![1]).searchParams.get('token')!;
  clock.advance(24 * 3600 * 1000 + 1);
  const expired = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/recover/confirm',
    headers: { accept: 'application/json' },
    payload: { token: token2 },
  });
  assert.equal(expired.statusCode, 422);
  assert.match(expired.json().errors.email[0], /expired/);
  // The new Master Token still works: a failed confirmation changes nothing.
  const still = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(newMaster) });
  assert.equal(still.statusCode, 200);
});
