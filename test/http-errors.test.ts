import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Client } from 'undici';
import { createAccount, createTestApp } from './helpers/app.ts';

test('unknown route 404, wrong method 405, non-JSON body 400, oversized body 413', async () => {
  const t = await createTestApp();
  const r404 = await t.app.inject({ method: 'GET', url: '/api/v1/nothing/here?x=1' });
  assert.equal(r404.statusCode, 404);
  assert.deepEqual(r404.json(), { message: 'The route /api/v1/nothing/here could not be found.' });

  const r405 = await t.app.inject({ method: 'DELETE', url: '/api/v1/auth/register' });
  assert.equal(r405.statusCode, 405);
  assert.equal(typeof r405.json().message, 'string');
  assert.match(r405.headers.allow as string, /POST/);
  const r405p = await t.app.inject({ method: 'PATCH', url: '/api/v1/tokens/ABCDEF123456' });
  assert.equal(r405p.statusCode, 405);

  const r400 = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    headers: { 'content-type': 'application/json' },
    payload: '{"email": "a@b.c",',
  });
  assert.equal(r400.statusCode, 400);
  assert.deepEqual(Object.keys(r400.json()), ['message']);

  const big = JSON.stringify({ email: 'a@example.com', name: 'x'.repeat(1024 * 1024 + 10) });
  const r413 = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    headers: { 'content-type': 'application/json' },
    payload: big,
  });
  assert.equal(r413.statusCode, 413);
  assert.deepEqual(Object.keys(r413.json()), ['message']);

  const count = await t.db.db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 0);
});

test("a form body is 415 on the JSON routes (the API takes JSON); only the two pages' forms take one", async () => {
  const t = await createTestApp();
  const acct = await createAccount(t);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { ...form, authorization: `Bearer ${acct.master}` },
    payload: 'name=abc',
  });
  assert.equal(created.statusCode, 415);
  assert.deepEqual(created.json(), { message: 'Unsupported Content-Type: send application/json.' });
  const registered = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    headers: { ...form, 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' },
    payload: 'email=form%40example.com&name=Form+Account',
  });
  assert.equal(registered.statusCode, 415);
  const tokens = await t.db.db.selectFrom('api_tokens').select('name').where('name', '=', 'abc').execute();
  assert.deepEqual(tokens, []);
  const accounts = await t.db.db.selectFrom('accounts').select('id').where('email', '=', 'form@example.com').execute();
  assert.deepEqual(accounts, []);
  // The recovery confirmation's form is read (a made-up token: the page's own failure, not a 415).
  const confirm = await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover/confirm', headers: form, payload: 'token=nothing' });
  assert.equal(confirm.statusCode, 422);
  assert.match(confirm.headers['content-type'] as string, /text\/html/);
  // A form with enctype="text/plain" (no CORS preflight) can spell JSON: the routes that need no
  // token refuse it, the others still read text/plain as JSON (a form cannot send a token).
  const plain = { 'content-type': 'text/plain' };
  const formJson = '{"email":"plain@example.com","name":"Plain Form","pad":"=x"}\r\n';
  for (const url of ['/api/v1/auth/register', '/api/v1/auth/recover', '/api/v1/auth/init']) {
    const res = await t.app.inject({ method: 'POST', url, headers: plain, payload: formJson });
    assert.equal(res.statusCode, 415, `${url}: ${res.body}`);
  }
  assert.deepEqual(await t.db.db.selectFrom('accounts').select('id').where('email', '=', 'plain@example.com').execute(), []);
  const named = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { ...plain, authorization: `Bearer ${acct.master}` },
    payload: '{"name":"plain"}',
  });
  assert.equal(named.statusCode, 201, named.body);
});

test("a static path that a parameter route also matches is the static route's: GET /tokens/verify is a 405, not a token named verify", async () => {
  const t = await createTestApp();
  // With or without a token, as any 405; with the rate-limit headers.
  const acct = await createAccount(t);
  for (const headers of [{ authorization: `Bearer ${acct.master}` }, {}]) {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const shadowed = await t.app.inject({ method, url: '/api/v1/tokens/verify', headers });
      assert.equal(shadowed.statusCode, 405, `${method}: ${shadowed.body}`);
      assert.equal(shadowed.headers.allow, 'POST');
      assert.match(shadowed.json().message, /^The \w+ method is not supported for route \/api\/v1\/tokens\/verify/);
      assert.ok(shadowed.headers['x-ratelimit-limit']);
    }
  }
  assert.equal(
    (await t.app.inject({ method: 'GET', url: '/api/v1/tokens/VERIFY', headers: { authorization: `Bearer ${acct.master}` } })).statusCode,
    404,
  );
});

test('an unexpected failure is 500 {message: "Server Error"} with nothing internal, logged with the request id', async () => {
  const t = await createTestApp();
  t.app.get('/api/v1/__boom', async () => {
    throw new Error('secret internal detail: connection string postgres://x');
  });
  const r = await t.app.inject({ method: 'GET', url: '/api/v1/__boom', headers: { 'x-request-id': 'req-123' } });
  assert.equal(r.statusCode, 500);
  assert.deepEqual(r.json(), { message: 'Server Error' });
  assert.equal(r.headers['x-request-id'], 'req-123');
  const logged = t.logLines.find((l) => l.includes('secret internal detail'));
  assert.ok(logged, 'the cause is logged');
  assert.match(logged, /req-123/);
});

test('health, OpenAPI document, docs page and metrics', async () => {
  const t = await createTestApp();
  const h = await t.app.inject({ method: 'GET', url: '/health' });
  assert.equal(h.statusCode, 200);
  assert.deepEqual(h.json(), { status: 'ok' });
  // A database that answers but lacks this build's newest migration is not ready: 503.
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name DESC LIMIT 1`.execute(t.db.db);
  await sql`UPDATE kysely_migration SET name = name || '-hidden' WHERE name = ${rows[0]!.name}`.execute(t.db.db);
  const unmigrated = await t.app.inject({ method: 'GET', url: '/health' });
  await sql`UPDATE kysely_migration SET name = ${rows[0]!.name} WHERE name = ${`${rows[0]!.name}-hidden`}`.execute(t.db.db);
  assert.equal(unmigrated.statusCode, 503);
  assert.deepEqual(unmigrated.json(), { status: 'unavailable', message: 'The database is not migrated.' });
  assert.equal((await t.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);

  const o = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(o.statusCode, 200);
  const doc = o.json();
  assert.equal(doc.openapi, '3.0.3');
  for (const p of [
    '/api/v1/auth/register',
    '/api/v1/auth/init',
    '/api/v1/auth/recover',
    '/api/v1/tokens',
    '/api/v1/tokens/{token_ref}',
    '/api/v1/tokens/verify',
    '/api/v1/tokens/{token_ref}/rotate',
  ]) {
    assert.ok(doc.paths[p], `OpenAPI lacks ${p}`);
  }
  assert.ok(doc.paths['/api/v1/tokens'].post.responses['201']);
  assert.ok(doc.components.securitySchemes.bearer);
  // Every operation with a JSON body lists what its body's parsing can answer; one without, none of them.
  const withBody = Object.values(doc.paths as Record<string, Record<string, { requestBody?: unknown; responses: object }>>).flatMap((ops) =>
    Object.values(ops).filter((op) => op.requestBody !== undefined),
  );
  assert.ok(withBody.length >= 10, `${withBody.length} operations with a body`);
  for (const op of withBody) for (const code of ['400', '413', '415']) assert.ok(code in op.responses, JSON.stringify(op).slice(0, 120));
  assert.ok(!('413' in doc.paths['/api/v1/tokens'].get.responses));

  const d = await t.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(d.statusCode, 200);
  assert.match(d.body, /swagger/i);
  // Swagger UI runs its scripts: the pages' policy is not its (src/http/security-headers.ts).
  assert.equal(d.headers['content-security-policy'], undefined);
  assert.equal(d.headers['x-content-type-options'], 'nosniff');
  assert.equal(o.headers['x-content-type-options'], 'nosniff');
  assert.equal(o.headers['content-security-policy'], undefined);

  await createAccount(t);
  const m = await t.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(m.statusCode, 200);
  assert.match(m.body, /regwatch_http_requests_total\{method="POST",route="\/api\/v1\/auth\/register",status="201"\} 1/);
  assert.match(m.body, /regwatch_http_request_duration_seconds_bucket/);
  assert.match(m.body, /regwatch_job_queue_depth\{task="mail.send"\} 1/);
});

test('secrets never reach the log: Authorization header and token plaintexts are redacted', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: { authorization: `Bearer ${a.master}` } });
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { authorization: `Bearer ${a.master}` },
    payload: { name: 'logged?' },
  });
  // The recovery link's GET carries its token in the query, which the request line logs.
  const secret = 'R'.repeat(43);
  await t.app.inject({ method: 'GET', url: `/api/v1/auth/recover/confirm?x=1&token=${secret}&y=2` });
  const all = t.logLines.join('\n');
  assert.ok(!all.includes(a.master));
  assert.ok(!all.includes(created.json().data.plaintext));
  assert.ok(!all.includes(secret), 'the recovery token is not logged');
  assert.match(all, /recover\/confirm\?x=1&token=\[redacted\]&y=2/);
});

test("graceful close: a request in flight when the server closes still completes; one arriving on a kept-alive connection is 503 in the service's shape; new connections are refused", async () => {
  const t = await createTestApp();
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => {
    entered = r;
  });
  t.app.get('/api/v1/__slow', async () => {
    entered();
    await gate;
    return { done: true };
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  // One connection, two requests on it: the second arrives once the server is closing.
  const client = new Client(baseUrl, { pipelining: 2 });
  const inFlight = client.request({ method: 'GET', path: '/api/v1/__slow' });
  await inHandler;
  const closing = t.app.close();
  const late = client.request({ method: 'GET', path: '/api/v1/sources' });
  setTimeout(release, 300);
  const res = await inFlight;
  assert.equal(res.statusCode, 200);
  assert.deepEqual(await res.body.json(), { done: true });
  const refused = await late;
  assert.equal(refused.statusCode, 503);
  assert.deepEqual(await refused.body.json(), { message: 'The server is shutting down: retry the request.' });
  assert.ok(refused.headers['x-request-id'], 'the request id, as every answer');
  assert.ok(refused.headers['x-ratelimit-limit'], 'the rate limit headers, as every answer');
  assert.equal(refused.headers['retry-after'], '1');
  await client.close();
  await closing;
  await assert.rejects(fetch(`${baseUrl}/health`));
});

test('a form body has the one 1 MB limit: 100 KB is read (the page answers it), over 1 MB is 413', async () => {
  const t = await createTestApp();
  const form = (bytes: number) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/recover/confirm',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      payload: `token=${'a'.repeat(bytes)}`,
    });
  const read = await form(100 * 1024);
  assert.equal(read.statusCode, 422, read.body);
  assert.equal(read.json().message, 'Recovery confirmation failed');
  const over = await form(1024 * 1024 + 1);
  assert.equal(over.statusCode, 413);
  assert.equal(over.json().message, 'The request body is larger than the 1 MB limit.');
});
