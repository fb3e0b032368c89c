import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';

/**
 * Random and hostile JSON against every route that takes a body, found from the OpenAPI
 * document so new routes are covered without editing this file: never a 500, always the
 * specified error shape.
 */
const hostileString = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    "'; DROP TABLE accounts; --", '" OR 1=1 --', '<script>alert(1)</script>', '\u0000', '\uFFFF', '😀'.repeat(100),
    'a'.repeat(5000), '../../etc/passwd', '${7*7}', '{{constructor.constructor("x")()}}', '%00', '\r\nX-Injected: 1',
    'sk_live_' + 'A'.repeat(40), 'NaN', '-1', '1e309', 'true', 'null', '__proto__',
  ),
);
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'email', 'name', 'token', 'identifier_type', 'identifier_value', 'package_slug')), tie('value'), { maxKeys: 5 }),
  ),
})).value;

function assertErrorShape(status: number, body: unknown, where: string) {
  if (process.env.FUZZ_DEBUG) console.log(where, status, JSON.stringify(body).slice(0, 300));
  assert.notEqual(status, 500, `${where}: 500 ${JSON.stringify(body)}`);
  if (status < 400) return;
  assert.equal(typeof body, 'object', where);
  const b = body as Record<string, unknown>;
  if (status === 401 || status === 403) {
    assert.equal(typeof b.error, 'string', where);
    assert.equal(b.code, status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', where);
  } else {
    assert.equal(typeof b.message, 'string', `${where}: ${JSON.stringify(body)}`);
  }
  if (status === 422 && 'errors' in b) {
    for (const [k, v] of Object.entries(b.errors as object)) {
      assert.ok(Array.isArray(v) && v.every((s) => typeof s === 'string'), `${where}: errors.${k}`);
    }
  }
}

test('hostile JSON bodies on every body-taking route: never a 500, always the specified shape', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  const acct = await createAccount(t);
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const routes: { method: string; path: string }[] = [];
  for (const [path, ops] of Object.entries<Record<string, { requestBody?: unknown }>>(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (op.requestBody) routes.push({ method: method.toUpperCase(), path });
    }
  }
  assert.ok(routes.length >= 6, `found ${routes.length} body routes`);
  for (const r of routes) {
    const url = r.path.replace(/\{[^}]+\}/g, acct.masterRef);
    await fc.assert(
      fc.asyncProperty(hostileValue, fc.boolean(), async (body, withAuth) => {
        const res = await t.app.inject({
          method: r.method as 'POST',
          url,
          headers: { 'content-type': 'application/json', ...(withAuth ? bearer(acct.master) : {}) },
          payload: JSON.stringify(body),
        });
        assertErrorShape(res.statusCode, String(res.headers['content-type'] ?? '').includes('json') ? res.json() : res.body, `${r.method} ${url} ${JSON.stringify(body).slice(0, 200)}`);
      }),
      { numRuns: 60 },
    );
    // Raw garbage that is not JSON at all.
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const res = await t.app.inject({ method: r.method as 'POST', url, headers: { 'content-type': 'application/json', ...bearer(acct.master) }, payload: raw });
        assertErrorShape(res.statusCode, String(res.headers['content-type'] ?? '').includes('json') ? res.json() : res.body, `${r.method} ${url} raw ${JSON.stringify(raw)}`);
      }),
      { numRuns: 20 },
    );
  }
  // The account is intact after all that.
  const ok = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(acct.master) });
  assert.ok([200, 401].includes(ok.statusCode));
});
