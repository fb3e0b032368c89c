import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';

/**
 * Every request body example in the OpenAPI document (what "Try it out" in /docs sends) is
 * accepted as it is written: no 400 or 422, through the real app, with the Master Token. Names
 * resolve to a public address here (the examples use example.com, which this machine cannot
 * resolve), as they would in production.
 */

type Op = { requestBody?: { content: Record<string, { example?: unknown; schema?: { example?: unknown } }> } };

let t: TestApp;
let account: TestAccount;
before(async () => {
  t = await createTestApp({
    env: { RATE_LIMIT_PER_MINUTE: '100000' },
    overrides: { webhookResolve: async () => [{ address: '93.184.215.14', family: 4 }] },
  });
  account = await createAccount(t);
});

test('every request body example of the document is accepted as written', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, Op>> };
  const tried: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const media = op.requestBody?.content['application/json'];
      const example = media?.example ?? media?.schema?.example;
      if (example === undefined) continue;
      // Path parameters: an id of this account where the route needs one.
      const url = path.replace('{id}', 'ep_1').replace('{token_ref}', account.masterRef);
      const res = await t.app.inject({
        method: method.toUpperCase() as 'POST',
        url,
        headers: bearer(account.master),
        payload: example as object,
      });
      tried.push(`${method} ${path}`);
      assert.ok(
        res.statusCode !== 400 && res.statusCode !== 422,
        `${method.toUpperCase()} ${path} with its example ${JSON.stringify(example)}: ${res.statusCode} ${res.body}`,
      );
    }
  }
  assert.ok(tried.length >= 5, `examples tried: ${tried.join(', ')}`);
});
