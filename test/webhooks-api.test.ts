import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createApiToken, createTestApp } from './helpers/app.ts';
import type { ResolveHost } from '../src/modules/webhooks/url-guard.ts';

/** The webhook routes: shapes, auth needs, tenancy, and the URL guard without the allow flag. */

// Names resolve without a network: the composition root's seam.
const resolve: ResolveHost = async (host) => {
  if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }];
  if (host === 'intranet.example.com') return [{ address: '10.20.30.40', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};
const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' }, overrides: { webhookResolve: resolve } });
const a = await createAccount(t);
const b = await createAccount(t);
const aApi = await createApiToken(t, a.master);

const call = (method: string, url: string, token?: string, payload?: unknown) =>
  t.app.inject({
    method: method as 'GET',
    url: `/api/v1${url}`,
    headers: token ? bearer(token) : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

let epId = '';

test('create: 201 with the secret once; list and get without it', async () => {
  const res = await call('POST', '/webhooks', a.master, {
    url: 'https://hooks.example.com/regwatch',
    event_types: ['COMPANY_NAME_CHANGED'],
    description: 'CRM',
  });
  assert.equal(res.statusCode, 201, res.body);
  const d = res.json().data;
  assert.equal(res.json().status, 'success');
  assert.match(d.id, /^ep_\d+$/);
  assert.match(d.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(d.secret.slice(6), 'base64').length, 32);
  assert.deepEqual(
    { url: d.url, status: d.status, event_types: d.event_types, description: d.description },
    { url: 'https://hooks.example.com/regwatch', status: 'enabled', event_types: ['COMPANY_NAME_CHANGED'], description: 'CRM' },
  );
  epId = d.id;
  const list = await call('GET', '/webhooks', aApi.plaintext);
  assert.equal(list.statusCode, 200);
  assert.equal(list.json().data.length, 1);
  assert.equal('secret' in list.json().data[0], false);
  const one = await call('GET', `/webhooks/${epId}`, aApi.plaintext);
  assert.equal(one.statusCode, 200);
  assert.equal('secret' in one.json().data, false);
});

test('update, rotate and delete need the Master Token; reading and tests any token', async () => {
  assert.equal((await call('POST', '/webhooks', undefined, { url: 'https://hooks.example.com/' })).statusCode, 401);
  assert.equal((await call('POST', '/webhooks', aApi.plaintext, { url: 'https://hooks.example.com/' })).statusCode, 403);
  assert.equal((await call('PATCH', `/webhooks/${epId}`, aApi.plaintext, { status: 'disabled' })).statusCode, 403);
  assert.equal((await call('POST', `/webhooks/${epId}/rotate-secret`, aApi.plaintext)).statusCode, 403);
  assert.equal((await call('DELETE', `/webhooks/${epId}`, aApi.plaintext)).statusCode, 403);
  assert.equal((await call('POST', `/webhooks/${epId}/test`, aApi.plaintext, { event_type: 'COMPANY_PHONE_CHANGED' })).statusCode, 202);
  const patched = await call('PATCH', `/webhooks/${epId}`, a.master, { status: 'disabled', event_types: [] });
  assert.equal(patched.statusCode, 200, patched.body);
  assert.deepEqual([patched.json().data.status, patched.json().data.event_types], ['disabled', []]);
  const rotated = await call('POST', `/webhooks/${epId}/rotate-secret`, a.master);
  assert.equal(rotated.statusCode, 200);
  assert.match(rotated.json().data.secret, /^whsec_/);
  const log = await call('GET', `/webhooks/${epId}/deliveries?status=pending`, aApi.plaintext);
  assert.equal(log.statusCode, 200);
  assert.deepEqual(log.json().meta, { total: 1, per_page: 20, current_page: 1, last_page: 1 });
  assert.equal(log.json().data[0].event_id, null);
});

test("tenancy: another account's endpoint, deliveries, retry and replay are 404", async () => {
  const msgId = (await call('GET', `/webhooks/${epId}/deliveries`, a.master)).json().data[0].id;
  const cases: [string, string, unknown?][] = [
    ['GET', `/webhooks/${epId}`],
    ['PATCH', `/webhooks/${epId}`, { description: 'x' }],
    ['DELETE', `/webhooks/${epId}`],
    ['POST', `/webhooks/${epId}/rotate-secret`],
    ['POST', `/webhooks/${epId}/test`, { event_type: 'COMPANY_NAME_CHANGED' }],
    ['GET', `/webhooks/${epId}/deliveries`],
    ['POST', `/webhooks/${epId}/deliveries/${msgId}/retry`],
    ['POST', `/webhooks/${epId}/replay`, { after_id: 0 }],
  ];
  for (const [m, u, body] of cases) {
    const res = await call(m, u, b.master, body);
    assert.equal(res.statusCode, 404, `${m} ${u}: ${res.body}`);
    assert.deepEqual(res.json(), { message: 'Webhook endpoint not found' });
  }
  assert.equal((await call('GET', '/webhooks', b.master)).json().data.length, 0);
  // Another endpoint's delivery id under one's own endpoint: 404 too.
  const own = (await call('POST', '/webhooks', b.master, { url: 'https://hooks.example.com/b' })).json().data.id;
  assert.equal((await call('POST', `/webhooks/${own}/deliveries/${msgId}/retry`, b.master)).statusCode, 404);
  assert.equal((await call('GET', '/webhooks/ep_99999', a.master)).statusCode, 404);
  assert.equal((await call('GET', '/webhooks/nonsense', a.master)).statusCode, 404);
  assert.equal((await call('GET', `/webhooks/${epId}`, a.master)).statusCode, 200, 'untouched');
});

test('hostile URLs are 422 on url without WEBHOOK_ALLOW_PRIVATE_URLS, and nothing is created', async () => {
  const before = (await call('GET', '/webhooks', a.master)).json().data.length;
  for (const url of [
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://0x7f000001/',
    'http://intranet.example.com/hook',
    'file:///etc/passwd',
    `https://hooks.example.com/${'a'.repeat(3000)}`,
    'http://2130706433/',
    'http://[::ffff:10.0.0.1]/',
    'http://0.0.0.0:8080/',
    'http://nowhere.invalid/',
  ]) {
    const res = await call('POST', '/webhooks', a.master, { url });
    assert.equal(res.statusCode, 422, `${url.slice(0, 50)}: ${res.body}`);
    assert.deepEqual(Object.keys(res.json().errors), ['url']);
    const patch = await call('PATCH', `/webhooks/${epId}`, a.master, { url });
    assert.equal(patch.statusCode, 422, `PATCH ${url.slice(0, 50)}`);
  }
  assert.equal((await call('GET', '/webhooks', a.master)).json().data.length, before);
  assert.equal((await call('GET', `/webhooks/${epId}`, a.master)).json().data.url, 'https://hooks.example.com/regwatch');
});

test("the url limit counts characters as the schema does: 2,048 emoji are a URL, 2,049 are not, in the schema's words", async () => {
  const base = 'https://1.1.1.1/';
  const fits = base + '😀'.repeat(2048 - base.length);
  const created = await call('POST', '/webhooks', a.master, { url: fits });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal((await call('DELETE', `/webhooks/${created.json().data.id}`, a.master)).statusCode, 200);
  const over = await call('POST', '/webhooks', a.master, { url: `${fits}😀` });
  assert.equal(over.statusCode, 422);
  assert.deepEqual(over.json().errors, { url: ['The url field must not be greater than 2048 characters.'] });
});

test('one problem with a nullable field is one error, not one per branch of its type', async () => {
  const long = await call('POST', '/webhooks', a.master, { url: 'https://1.1.1.1/', description: 'x'.repeat(501) });
  assert.deepEqual(long.json(), {
    message: 'The description field must not be greater than 500 characters.',
    errors: { description: ['The description field must not be greater than 500 characters.'] },
  });
  const number = await call('POST', '/webhooks', a.master, { url: 'https://1.1.1.1/', description: 7 });
  assert.deepEqual(number.json().errors, { description: ['The description field must be a string.'] });
  const cleared = await call('POST', '/webhooks', a.master, { url: 'https://1.1.1.1/', description: null });
  assert.equal(cleared.statusCode, 201, cleared.body);
  assert.equal(cleared.json().data.description, null);
  assert.equal((await call('DELETE', `/webhooks/${cleared.json().data.id}`, a.master)).statusCode, 200);
  const two = await call('POST', '/webhooks', a.master, { url: 7, description: 'x'.repeat(501) });
  assert.match(two.json().message, / \(and 1 more error\)$/);
  assert.equal(Object.values(two.json().errors as Record<string, string[]>).flat().length, 2);
});

test('an unknown field is 422 on it and changes nothing: a misspelt event_types does not subscribe to every type', async () => {
  const typo = await call('POST', '/webhooks', a.master, { url: 'https://hooks.example.com/typo', event_type: ['COMPANY_NAME_CHANGED'] });
  assert.equal(typo.statusCode, 422, typo.body);
  assert.deepEqual(typo.json(), {
    message: 'The event_type field is not allowed.',
    errors: { event_type: ['The event_type field is not allowed.'] },
  });
  const before = (await call('GET', `/webhooks/${epId}`, a.master)).json().data;
  const patch = await call('PATCH', `/webhooks/${epId}`, a.master, { state: 'disabled', description: 'x'.repeat(501) });
  assert.equal(patch.statusCode, 422);
  assert.deepEqual(Object.keys(patch.json().errors).sort(), ['description', 'state']);
  assert.deepEqual((await call('GET', `/webhooks/${epId}`, a.master)).json().data, before);
  const test = await call('POST', `/webhooks/${epId}/test`, a.master, { event_type: 'COMPANY_NAME_CHANGED', type: 'x' });
  assert.deepEqual(test.json().errors, { type: ['The type field is not allowed.'] });
  const replay = await call('POST', `/webhooks/${epId}/replay`, a.master, { after: 5 });
  assert.deepEqual(Object.keys(replay.json().errors).sort(), ['after', 'after_id']);
  assert.equal((await call('GET', '/webhooks', a.master)).json().data.length, 1);
});

test('an unknown event type is 422 on event_types; at most 10 endpoints an account', async () => {
  const bad = await call('POST', '/webhooks', a.master, {
    url: 'https://hooks.example.com/x',
    event_types: ['COMPANY_NAME_CHANGED', 'COMPANY_EXPLODED'],
  });
  assert.equal(bad.statusCode, 422);
  // One sentence for the bad item, not one per type it is not.
  // On the list (DECISIONS 8) and on its element (DECISIONS 7); the message counts every text.
  assert.deepEqual(bad.json(), {
    message: 'The selected event types item 1 is invalid. (and 1 more error)',
    errors: {
      event_types: ['The selected event types item 1 is invalid.'],
      'event_types.1': ['The selected event types item 1 is invalid.'],
    },
  });
  // Every problem at once: a URL the schema lets through is still checked when another field fails.
  const both = await call('POST', '/webhooks', a.master, { url: 'ftp://hooks.example.com/x', event_types: ['NOPE'] });
  assert.equal(both.statusCode, 422);
  assert.deepEqual(Object.keys(both.json().errors).sort(), ['event_types', 'event_types.0', 'url']);
  assert.match(both.json().message, /^The url/);
  assert.match(both.json().message, /\(and 2 more errors\)$/);
  const hostile = await call('PATCH', `/webhooks/${epId}`, a.master, { url: 'http://169.254.169.254/latest', description: 5 });
  assert.deepEqual(Object.keys(hostile.json().errors).sort(), ['description', 'url']);
  const badPatch = await call('PATCH', `/webhooks/${epId}`, a.master, { event_types: ['NOPE'], status: 'sometimes' });
  assert.equal(badPatch.statusCode, 422);
  assert.deepEqual(Object.keys(badPatch.json().errors).sort(), ['event_types', 'event_types.0', 'status']);
  assert.match(badPatch.json().message, /\(and 2 more errors\)$/);
  // Kept in the order sent, at creation and at an update.
  const ordered = ['COMPANY_PHONE_CHANGED', 'COMPANY_NAME_CHANGED'];
  const made = await call('POST', '/webhooks', a.master, { url: 'https://hooks.example.com/o', event_types: ordered });
  assert.deepEqual(made.json().data.event_types, ordered);
  const reordered = await call('PATCH', `/webhooks/${made.json().data.id}`, a.master, { event_types: [...ordered].reverse() });
  assert.deepEqual(reordered.json().data.event_types, [...ordered].reverse());
  assert.deepEqual((await call('GET', `/webhooks/${made.json().data.id}`, a.master)).json().data.event_types, [...ordered].reverse());
  assert.equal((await call('DELETE', `/webhooks/${made.json().data.id}`, a.master)).statusCode, 200);
  const badTest = await call('POST', `/webhooks/${epId}/test`, a.master, { event_type: 'NOPE' });
  assert.equal(badTest.statusCode, 422);
  assert.deepEqual(badTest.json().errors, { event_type: ['The selected event type is invalid.'] });
  for (let i = (await call('GET', '/webhooks', a.master)).json().data.length; i < 10; i++) {
    assert.equal((await call('POST', '/webhooks', a.master, { url: `https://hooks.example.com/${i}` })).statusCode, 201);
  }
  const eleventh = await call('POST', '/webhooks', a.master, { url: 'https://hooks.example.com/11' });
  assert.equal(eleventh.statusCode, 422);
  assert.match(eleventh.json().message, /at most 10/);
});

test('delete: 200, then 404; the OpenAPI document lists the routes', async () => {
  const del = await call('DELETE', `/webhooks/${epId}`, a.master);
  assert.equal(del.statusCode, 200);
  assert.equal((await call('GET', `/webhooks/${epId}`, a.master)).statusCode, 404);
  const doc = (await call('GET', '/openapi.json')).json();
  for (const p of [
    '/api/v1/webhooks',
    '/api/v1/webhooks/{id}',
    '/api/v1/webhooks/{id}/rotate-secret',
    '/api/v1/webhooks/{id}/test',
    '/api/v1/webhooks/{id}/deliveries',
    '/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
    '/api/v1/webhooks/{id}/replay',
  ]) {
    assert.ok(doc.paths[p], p);
    for (const [method, op] of Object.entries(doc.paths[p] as Record<string, { responses: Record<string, unknown> }>)) {
      const success = Object.entries(op.responses).find(([code]) => code.startsWith('2'))!;
      assert.match(JSON.stringify(success[1]), /"example"/, `${method} ${p}: the success answer has an example`);
      for (const q of (op as { parameters?: { in: string; required: boolean; schema: { default?: unknown } }[] }).parameters ?? [])
        if (q.in === 'query' && q.schema.default !== undefined)
          assert.equal(q.required, false, `${method} ${p}: a defaulted parameter is optional`);
    }
  }
  // The example secrets are what the API hands out: whsec_ and base64 of 32 bytes.
  const secrets = [...JSON.stringify(doc).matchAll(/whsec_([A-Za-z0-9+/=]+)/g)].map((m) => m[1]!);
  assert.ok(secrets.length >= 2);
  for (const s of secrets) assert.equal(Buffer.from(s, 'base64').length, 32, s);
  assert.ok(doc.paths['/api/v1/sources'].get.responses['429'], 'GET /sources documents its 429');
});
