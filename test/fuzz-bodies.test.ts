import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { assertInjectedErrorShape, documentedRoutes, FUZZ_SEED, hostileBody } from './helpers/fuzz.ts';

/**
 * Random and hostile JSON against every route that takes a body, found from the OpenAPI
 * document so new routes are covered without editing this file: never a 500, always the
 * specified error shape. Query strings, path parameters and headers: fuzz-requests.test.ts.
 */
test('hostile JSON bodies on every body-taking route: never a 500, always the specified shape', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  const acct = await createAccount(t);
  const routes = (await documentedRoutes(t.app)).filter((r) => r.hasBody);
  assert.ok(routes.length >= 6, `found ${routes.length} body routes`);
  assert.ok(
    routes.some((r) => r.bodyFields.includes('name')),
    'body fields are read from the document',
  );
  for (const r of routes) {
    const url = r.path.replace(/\{[^}]+\}/g, acct.masterRef);
    await fc.assert(
      fc.asyncProperty(hostileBody(r), fc.boolean(), async (body, withAuth) => {
        const res = await t.app.inject({
          method: r.method as 'POST',
          url,
          headers: { 'content-type': 'application/json', ...(withAuth ? bearer(acct.master) : {}) },
          payload: JSON.stringify(body),
        });
        assertInjectedErrorShape(res, `${r.method} ${url} ${JSON.stringify(body).slice(0, 200)}`, r);
      }),
      { numRuns: 60, seed: FUZZ_SEED },
    );
    // Raw garbage that is not JSON at all.
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const res = await t.app.inject({
          method: r.method as 'POST',
          url,
          headers: { 'content-type': 'application/json', ...bearer(acct.master) },
          payload: raw,
        });
        assertInjectedErrorShape(res, `${r.method} ${url} raw ${JSON.stringify(raw)}`, r);
      }),
      { numRuns: 20, seed: FUZZ_SEED },
    );
  }
  // The account is intact after all that.
  const ok = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(acct.master) });
  assert.ok([200, 401].includes(ok.statusCode));
});
