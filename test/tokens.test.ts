import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createApiToken, createManualClock, createTestApp } from './helpers/app.ts';

const MASTER_ONLY: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: (ref: string) => string; payload?: object }[] = [
  { method: 'POST', url: () => '/api/v1/tokens', payload: { name: 'new token' } },
  { method: 'GET', url: () => '/api/v1/tokens' },
  { method: 'GET', url: (r) => `/api/v1/tokens/${r}` },
  { method: 'PUT', url: (r) => `/api/v1/tokens/${r}`, payload: { name: 'renamed' } },
  { method: 'DELETE', url: (r) => `/api/v1/tokens/${r}` },
  { method: 'POST', url: (r) => `/api/v1/tokens/${r}/rotate` },
];

test('create, list, get, rename, verify, revoke: envelopes and fields', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: bearer(a.master),
    payload: { name: 'Production ETL', expires_in_days: 30 },
  });
  assert.equal(created.statusCode, 201);
  const c = created.json();
  assert.equal(c.success, true);
  assert.match(c.data.plaintext, /^sk_api_[0-9A-Za-z]{32,}$/);
  assert.equal(typeof c.data.warning, 'string');
  assert.equal(c.data.is_active, true);
  assert.equal(c.data.name, 'Production ETL');
  const days = (Date.parse(c.data.expires_at) - Date.now()) / 86_400_000;
  assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
  assert.ok(c.meta.timestamp);

  const never = await createApiToken(t, a.master, 'forever');
  const list = await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(a.master) });
  assert.equal(list.statusCode, 200);
  const l = list.json();
  assert.equal(l.success, true);
  assert.equal(l.meta.total, 3);
  assert.equal(l.data.length, 3);
  assert.ok(l.data.every((tk: Record<string, unknown>) => !('plaintext' in tk)));
  const kinds = l.data.map((tk: { kind: string }) => tk.kind).sort();
  assert.deepEqual(kinds, ['api', 'api', 'master']);
  const forever = l.data.find((tk: { token_ref: string }) => tk.token_ref === never.ref);
  assert.equal(forever.expires_at, null);
  for (const k of [
    'token_ref',
    'name',
    'expires_at',
    'is_active',
    'revoked_at',
    'last_used_at',
    'last_used_ip',
    'usage_count',
    'created_at',
  ])
    assert.ok(k in forever, k);

  // Usage is tracked: verify with the API token twice, then read it back.
  for (let i = 0; i < 2; i++) {
    const v = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(never.plaintext) });
    assert.equal(v.statusCode, 200);
    const d = v.json().data;
    assert.equal(d.valid, true);
    assert.equal(d.token_ref, never.ref);
    assert.equal(d.token_name, 'forever');
    assert.equal(d.user_ref, a.userRef);
    assert.equal(d.user_name, 'Test Account');
    assert.equal(d.is_active, true);
  }
  const got = await t.app.inject({ method: 'GET', url: `/api/v1/tokens/${never.ref}`, headers: bearer(a.master) });
  assert.equal(got.statusCode, 200);
  assert.equal(got.json().data.usage_count, 2);
  assert.ok(got.json().data.last_used_at);
  assert.equal(got.json().data.last_used_ip, '127.0.0.1');

  const renamed = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/tokens/${never.ref}`,
    headers: bearer(a.master),
    payload: { name: 'Renamed token' },
  });
  assert.equal(renamed.statusCode, 200);
  assert.equal(renamed.json().data.name, 'Renamed token');

  const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${never.ref}`, headers: bearer(a.master) });
  assert.equal(revoked.statusCode, 200);
  const rb = revoked.json();
  assert.equal(rb.success, true);
  assert.equal(typeof rb.message, 'string');
  assert.ok(rb.meta.revoked_at);
  const after = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(never.plaintext) });
  assert.equal(after.statusCode, 401);
  assert.deepEqual(after.json(), { error: 'Token revoked', code: 'UNAUTHORIZED' });
  const view = await t.app.inject({ method: 'GET', url: `/api/v1/tokens/${never.ref}`, headers: bearer(a.master) });
  assert.equal(view.json().data.is_active, false);
  assert.equal(view.json().data.revoked_at, rb.meta.revoked_at);
  // Revoking again is harmless and reports the original time.
  const again = await t.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${never.ref}`, headers: bearer(a.master) });
  assert.equal(again.statusCode, 200);
  assert.equal(again.json().meta.revoked_at, rb.meta.revoked_at);
});

test('validation of token bodies: name 3..255, expires_in_days 1..365', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const cases: [object, string][] = [
    [{ name: 'ab' }, 'name'],
    [{ name: 'x'.repeat(256) }, 'name'],
    [{}, 'name'],
    [{ name: 'valid', expires_in_days: 0 }, 'expires_in_days'],
    [{ name: 'valid', expires_in_days: 366 }, 'expires_in_days'],
    [{ name: 'valid', expires_in_days: 1.5 }, 'expires_in_days'],
    [{ name: 'valid', expires_in_days: '30' }, 'expires_in_days'],
    [{ name: 12345 }, 'name'],
    // Held to the limits as stored (trimmed), and no control characters.
    [{ name: '     ' }, 'name'],
    [{ name: '  a  ' }, 'name'],
    [{ name: 'two\nlines' }, 'name'],
  ];
  for (const [payload, field] of cases) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(a.master), payload });
    assert.equal(r.statusCode, 422, JSON.stringify(payload));
    assert.ok(r.json().errors[field], `${JSON.stringify(payload)} → ${r.body}`);
  }
  const put = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/tokens/${a.masterRef}`,
    headers: bearer(a.master),
    payload: { name: 'no' },
  });
  assert.equal(put.statusCode, 422);
  const blank = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/tokens/${a.masterRef}`,
    headers: bearer(a.master),
    payload: { name: '   ' },
  });
  assert.equal(blank.statusCode, 422);
  const padded = await t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(a.master), payload: { name: '  nightly  ' } });
  assert.equal(padded.json().data.name, 'nightly');
  // expires_in_days null reads as absent: a token that never expires.
  const nulled = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: bearer(a.master),
    payload: { name: 'no expiry', expires_in_days: null },
  });
  assert.equal(nulled.statusCode, 201, nulled.body);
  assert.equal(nulled.json().data.expires_at, null);
  assert.equal(padded.headers['cache-control'], 'no-store', 'an answer with a plaintext token is not cached');
  const count = await t.db.db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 3, 'the Master Token, the padded one and the one without expiry only');
});

test('401 shapes: missing, malformed, invalid, revoked, expired', async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  const a = await createAccount(t);
  const url = '/api/v1/tokens/verify';
  const cases: [Record<string, string>, string][] = [
    [{}, 'Missing API token'],
    [{ authorization: '' }, 'Missing API token'],
    [{ authorization: 'Bearer' }, 'Missing API token'],
    [{ authorization: 'Basic dXNlcjpwYXNz' }, 'Malformed token format'],
    [{ authorization: 'Bearer hello' }, 'Malformed token format'],
    [{ authorization: 'Bearer sk_live_short' }, 'Malformed token format'],
    [{ authorization: "Bearer sk_api_' OR 1=1 --aaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, 'Malformed token format'],
    [{ authorization: `Bearer sk_api_${'A'.repeat(40)}` }, 'Invalid API token'],
  ];
  for (const [headers, error] of cases) {
    const r = await t.app.inject({ method: 'POST', url, headers });
    assert.equal(r.statusCode, 401, JSON.stringify(headers));
    assert.deepEqual(r.json(), { error, code: 'UNAUTHORIZED' });
  }
  const short = await createApiToken(t, a.master, 'short-lived', 1);
  const ok = await t.app.inject({ method: 'POST', url, headers: bearer(short.plaintext) });
  assert.equal(ok.statusCode, 200);
  clock.advance(86_400_000 + 1);
  const expired = await t.app.inject({ method: 'POST', url, headers: bearer(short.plaintext) });
  assert.equal(expired.statusCode, 401);
  assert.deepEqual(expired.json(), { error: 'Token expired', code: 'UNAUTHORIZED' });
  const view = await t.app.inject({ method: 'GET', url: `/api/v1/tokens/${short.ref}`, headers: bearer(a.master) });
  assert.equal(view.json().data.is_active, false);
});

test('an API token on every Master-only route gets 403; no token gets 401', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const api = await createApiToken(t, a.master, 'api token');
  for (const r of MASTER_ONLY) {
    const res = await t.app.inject({ method: r.method, url: r.url(api.ref), headers: bearer(api.plaintext), payload: r.payload });
    assert.equal(res.statusCode, 403, `${r.method} ${r.url(api.ref)}`);
    assert.deepEqual(res.json(), { error: 'This operation requires the Master Token', code: 'FORBIDDEN' });
    const none = await t.app.inject({ method: r.method, url: r.url(api.ref), payload: r.payload });
    assert.equal(none.statusCode, 401);
  }
  // Nothing changed through the refused calls.
  const list = await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(a.master) });
  assert.equal(list.json().meta.total, 2);
  assert.ok(list.json().data.every((tk: { is_active: boolean; name: string }) => tk.is_active && tk.name !== 'renamed'));
});

test("another account's token_ref (and an unknown one) is 404 Token not found", async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  const b = await createAccount(t);
  const bTok = await createApiToken(t, b.master, 'b token');
  for (const r of MASTER_ONLY.filter((m) => m.url('X') !== '/api/v1/tokens')) {
    for (const ref of [bTok.ref, 'NOSUCHTOKEN1', b.masterRef]) {
      const res = await t.app.inject({ method: r.method, url: r.url(ref), headers: bearer(a.master), payload: r.payload });
      assert.equal(res.statusCode, 404, `${r.method} ${r.url(ref)}`);
      assert.deepEqual(res.json(), { message: 'Token not found' });
    }
  }
  const stillOk = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(bTok.plaintext) });
  assert.equal(stillOk.statusCode, 200);
  const aList = await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(a.master) });
  assert.ok(aList.json().data.every((tk: { token_ref: string }) => tk.token_ref !== bTok.ref));
});

test('rotation: old revoked, new named "(rotated)" with the same lifetime from now; the Master Token can rotate but not be revoked', async () => {
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock });
  const a = await createAccount(t);
  const tok = await createApiToken(t, a.master, 'nightly', 10);
  clock.advance(3 * 86_400_000);
  const rot = await t.app.inject({ method: 'POST', url: `/api/v1/tokens/${tok.ref}/rotate`, headers: bearer(a.master) });
  assert.equal(rot.statusCode, 200);
  const d = rot.json().data;
  assert.deepEqual(Object.keys(d.old_token).sort(), ['is_active', 'name', 'revoked_at', 'token_ref']);
  assert.equal(d.old_token.token_ref, tok.ref);
  assert.equal(d.old_token.is_active, false);
  assert.equal(d.new_token.name, 'nightly (rotated)');
  // A name at the limit gives way to the suffix, which is kept whole.
  const long = await createApiToken(t, a.master, 'ż'.repeat(255), 10);
  const rotLong = await t.app.inject({ method: 'POST', url: `/api/v1/tokens/${long.ref}/rotate`, headers: bearer(a.master) });
  assert.equal(rotLong.json().data.new_token.name, 'ż'.repeat(245) + ' (rotated)');
  assert.match(d.new_token.plaintext, /^sk_api_/);
  assert.equal(d.new_token.expires_at, '2026-12-04T10:00:00.000Z'); // 10 days from the rotation
  assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(tok.plaintext) })).statusCode, 401);
  assert.equal(
    (await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(d.new_token.plaintext) })).statusCode,
    200,
  );
  const twice = await t.app.inject({ method: 'POST', url: `/api/v1/tokens/${tok.ref}/rotate`, headers: bearer(a.master) });
  assert.equal(twice.statusCode, 422);
  assert.deepEqual(twice.json().errors, { token_ref: ['A revoked token cannot be rotated.'] });
  // An expired token is not active either: rotating it would renew what its expiry ended.
  const short = await createApiToken(t, a.master, 'one day', 1);
  clock.advance(86_400_000);
  const expired = await t.app.inject({ method: 'POST', url: `/api/v1/tokens/${short.ref}/rotate`, headers: bearer(a.master) });
  assert.equal(expired.statusCode, 422);
  assert.deepEqual(expired.json().errors, { token_ref: ['An expired token cannot be rotated; create a new one.'] });
  const still = await t.app.inject({ method: 'GET', url: `/api/v1/tokens/${short.ref}`, headers: bearer(a.master) });
  assert.equal(still.json().data.revoked_at, null); // the refusal changed nothing

  const delMaster = await t.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${a.masterRef}`, headers: bearer(a.master) });
  assert.equal(delMaster.statusCode, 422);
  assert.ok(delMaster.json().errors.token_ref);
  const rotMaster = await t.app.inject({ method: 'POST', url: `/api/v1/tokens/${a.masterRef}/rotate`, headers: bearer(a.master) });
  assert.equal(rotMaster.statusCode, 200);
  const newMaster = rotMaster.json().data.new_token;
  assert.match(newMaster.plaintext, /^sk_live_/);
  assert.equal(newMaster.expires_at, null);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(a.master) })).statusCode, 401);
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers: bearer(newMaster.plaintext) })).statusCode, 200);
});
