import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { bearer, createAccount, createTestApp, type TestAccount, type TestApp } from './helpers/app.ts';
import { sendRawHttp } from './helpers/net.ts';
import {
  assertErrorShape,
  assertInjectedErrorShape,
  documentedRoutes,
  FUZZ_SEED,
  hostileString,
  hostileValue,
  type DocumentedRoute,
} from './helpers/fuzz.ts';

/**
 * Query strings, path parameters and headers of every route in the app's OpenAPI document
 * (bodies: fuzz-bodies.test.ts): hostile values, odd percent-encodings, odd and duplicated
 * headers, bytes that are not UTF-8. The property: never a 5xx, and an error body in the
 * specified shape. Routes come from the document, so a new route is fuzzed without editing this.
 */

/** Percent-encodes every UTF-16 code unit as its (WTF-8) bytes: a lone surrogate becomes `%ED%A0%80`, which encodeURIComponent refuses to write. */
function percentEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (/^[A-Za-z0-9_.~-]$/.test(ch)) {
      out += ch;
      continue;
    }
    const bytes =
      cp < 0x80
        ? [cp]
        : cp < 0x800
          ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
          : cp < 0x10000
            ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
            : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    for (const b of bytes) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Already in URL form: invalid UTF-8, encoded NUL and surrogates, broken escapes, ids at and past the limits. */
const ODD_ENCODED = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%FF',
  '%FE%FF',
  '%C0%80',
  '%C0%AF',
  '%E0%80%AF',
  '%F4%90%80%80',
  '%',
  '%zz',
  '%2',
  '%u0000',
  '%uD800',
  '..',
  '.',
  '%2e%2e',
  '%2F',
  '%5C',
  '%3B',
  ';',
  '*',
  '+',
  '%20',
  '~',
  '0',
  '-1',
  '9'.repeat(30),
  '2026-02-30',
  '2026-11-20',
  '1e309',
  'A'.repeat(64),
  'A'.repeat(65),
  'A'.repeat(101),
  'a%5B%5D',
  '%5B%5D',
  '[]',
  '[0]',
  '__proto__',
  'constructor',
  'wh_x',
  'dl_x',
];
const oddEncoded = fc.oneof(hostileString.map(percentEncode), fc.constantFrom(...ODD_ENCODED));

function queryArb(names: string[]): fc.Arbitrary<string> {
  const key = names.length > 0 ? fc.oneof(fc.constantFrom(...names), oddEncoded) : oddEncoded;
  const pair = fc.oneof(
    fc.tuple(key, oddEncoded).map(([k, v]) => `${k}=${v}`),
    fc.tuple(key, fc.constantFrom(...names, 'x')).map(([k, v]) => `${k}[${v}]=1`),
    key, // a key without `=`
    fc.constantFrom('', '=', '==', '&', 'a=1=2'),
  );
  return fc.array(pair, { maxLength: 8 }).map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : ''));
}

function urlArb(r: DocumentedRoute): fc.Arbitrary<string> {
  return fc
    .tuple(fc.array(oddEncoded, { minLength: r.pathParams.length, maxLength: r.pathParams.length }), queryArb(r.queryParams))
    .map(([segments, query]) => {
      let i = 0;
      return r.path.replace(/\{[^}]+\}/g, () => segments[i++] ?? 'x') + query;
    });
}

async function setUp(
  options: { listen?: boolean } = {},
): Promise<{ t: TestApp & { baseUrl: string }; acct: TestAccount; routes: DocumentedRoute[] }> {
  const t = await createTestApp({
    listen: options.listen,
    env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_STATS_PER_MINUTE: '1000000', TRUST_PROXY: '1' },
  });
  const acct = await createAccount(t);
  // Enough credits that priced routes keep running their handlers instead of answering 402.
  const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', acct.userRef).executeTakeFirstOrThrow();
  await applyLedgerEntry(t.db.db, { accountId: id, type: 'deposit', amount: 1_000_000, description: 'fuzz top-up' });
  const routes = await documentedRoutes(t.app);
  assert.ok(routes.length >= 30, `found ${routes.length} routes`);
  assert.ok(routes.some((r) => r.pathParams.length > 0) && routes.some((r) => r.queryParams.length > 0));
  return { t, acct, routes };
}

test('hostile path parameters and query strings on every documented route', async () => {
  const { t, acct, routes } = await setUp();
  for (const r of routes) {
    await fc.assert(
      fc.asyncProperty(urlArb(r), fc.boolean(), async (url, withAuth) => {
        const res = await t.app.inject({
          method: r.method as 'GET',
          url,
          headers: withAuth ? bearer(acct.master) : {},
          ...(r.hasBody ? { payload: {} } : {}),
        });
        assertInjectedErrorShape(res, `${r.method} ${url}${withAuth ? '' : ' (no token)'}`, r);
      }),
      { numRuns: 25, seed: FUZZ_SEED },
    );
  }
});

test('odd headers on every documented route: Authorization, Content-Type, Accept, proxy and request-id headers, bodies that are not UTF-8', async () => {
  const { t, acct, routes } = await setUp();
  const authorization = fc.oneof(
    fc.constant(undefined),
    fc.constant(`Bearer ${acct.master}`),
    hostileString.map((s) => `Bearer ${s}`),
    fc.constantFrom(
      '',
      'Bearer',
      'Bearer ',
      `bearer   ${acct.master}  `,
      `Bearer\t${acct.master}`,
      `Bearer ${acct.master} extra`,
      `Bearer ${acct.master}\u0000`,
      `Bearer ${acct.master.toUpperCase()}`,
      `Token ${acct.master}`,
      acct.master,
      'Basic dXNlcjpwYXNz',
      `Bearer ${'A'.repeat(20_000)}`,
      `Bearer sk_live_${'A'.repeat(200)}`,
      'Bearer \u00ff\u00fe\u0080',
      'Bearer \ud800',
      `Bearer ${acct.master}, Bearer ${acct.master}`,
    ),
  );
  const contentType = fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'application/json;;',
    'text/plain',
    'text/html',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'application/xml',
    '*/*',
    '',
    ';',
    'application/json\u0000',
    'application/vnd.api+json',
    'x'.repeat(2000),
    'application/json, text/plain',
  );
  const accept = fc.constantFrom(
    undefined,
    'application/json',
    'text/html',
    '*/*',
    '',
    'application/xml',
    'text/html;q=0.1, application/json;q=0.9',
    '\u0000',
    'ü',
  );
  const forwarded = fc.constantFrom(
    undefined,
    '203.0.113.9',
    'garbage',
    'a\u0000b',
    '::1, 1.1.1.1',
    '999.999.999.999',
    ', ,',
    'x'.repeat(5000),
  );
  const requestId = fc.constantFrom(undefined, 'req-1', '', 'a'.repeat(65), '\u0000', '../x', 'ü');
  const payload = fc.oneof(
    fc.constant(undefined),
    hostileValue.map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
    fc.constantFrom(
      Buffer.from([0xff, 0xfe, 0x00]),
      Buffer.from([0xc0, 0x80]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('{"name":"\xc0\x80\xed\xa0\x80 x"}', 'latin1'),
      Buffer.from('{"token":"\xff"}', 'latin1'),
      'token=%00&action=%ED%A0%80',
      'a=1&a=2&__proto__[x]=1',
      '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n\u0000\r\n--x--',
    ),
  );
  for (const r of routes) {
    const url = r.path.replace(/\{[^}]+\}/g, acct.masterRef);
    await fc.assert(
      fc.asyncProperty(
        fc.record({ authorization, 'content-type': contentType, accept, 'x-forwarded-for': forwarded, 'x-request-id': requestId }),
        payload,
        async (headers, body) => {
          const defined = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
          const res = await t.app.inject({
            method: r.method as 'GET',
            url,
            headers: defined,
            ...(body !== undefined ? { payload: body } : {}),
          });
          assertInjectedErrorShape(
            res,
            `${r.method} ${url} ${JSON.stringify(defined).slice(0, 300)} ${JSON.stringify(String(body)).slice(0, 100)}`,
            r,
          );
        },
      ),
      { numRuns: 15, seed: FUZZ_SEED },
    );
  }
});

test('over a real socket: duplicated headers, bytes that are not UTF-8 in the path, headers and body, broken framing', async () => {
  const { t, acct, routes } = await setUp({ listen: true });
  const port = Number(new URL(t.baseUrl).port);
  const latin1 = fc.uint8Array({ minLength: 1, maxLength: 30 }).map((b) => Buffer.from(b.filter((x) => x !== 10 && x !== 13)));
  const headerValue = fc.oneof(
    latin1,
    fc
      .constantFrom(`Bearer ${acct.master}`, 'Bearer \xff\xfe', 'application/json', 'text/plain; charset=\xe9', '')
      .map((s) => Buffer.from(s, 'latin1')),
  );
  // Not `Expect: <anything>`: Node itself answers an unknown expectation with an empty 417, before the app.
  const headerName = fc.constantFrom(
    'Authorization',
    'authorization',
    'Content-Type',
    'Accept',
    'X-Request-Id',
    'X-Forwarded-For',
    'Transfer-Encoding',
    'Content-Encoding',
    'X-\xff',
    'Bad Name',
    'Host',
  );
  const rawPath = fc.oneof(
    oddEncoded.map((s) => Buffer.from(s)),
    latin1,
    fc.constant(Buffer.from('%ED%A0%80')),
  );
  const bodyBytes = fc.oneof(
    fc.constant(Buffer.alloc(0)),
    latin1,
    fc.constant(Buffer.from('{"name":"\xc0\x80 \xed\xa0\x80"}', 'latin1')),
    fc.constant(Buffer.from('{"name":"ok name"}')),
  );
  const framing = fc.constantFrom(
    'length',
    'none',
    'duplicate-length',
    'conflicting-length',
    'chunked',
    'chunked-and-length',
    'short-length',
  );

  for (const r of routes) {
    const arb = fc.record({
      segment: rawPath,
      headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 5 }),
      duplicateAuth: fc.boolean(),
      expectContinue: fc.boolean(),
      body: bodyBytes,
      framing,
    });
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        const path = Buffer.concat(
          r.path.split(/\{[^}]+\}/).flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [c.segment, Buffer.from(part)])),
        );
        const lines: Buffer[] = [Buffer.from(`${r.method} `), path, Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n')];
        lines.push(Buffer.from(`Authorization: Bearer ${acct.master}\r\n`));
        if (c.duplicateAuth) lines.push(Buffer.from('Authorization: Bearer sk_live_other\r\n'));
        for (const [name, value] of c.headers) lines.push(Buffer.from(`${name}: `, 'latin1'), value, Buffer.from('\r\n'));
        const body = c.body;
        if (c.framing === 'length') lines.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
        if (c.framing === 'duplicate-length')
          lines.push(Buffer.from(`Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n`));
        if (c.framing === 'conflicting-length')
          lines.push(Buffer.from(`Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\n`));
        if (c.framing === 'short-length') lines.push(Buffer.from(`Content-Length: ${Math.max(0, body.length - 1)}\r\n`));
        if (c.framing === 'chunked' || c.framing === 'chunked-and-length') {
          lines.push(Buffer.from('Transfer-Encoding: chunked\r\n'));
          if (c.framing === 'chunked-and-length') lines.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
        }
        if (c.expectContinue) lines.push(Buffer.from('Expect: 100-continue\r\n'));
        lines.push(Buffer.from('Content-Type: application/json\r\n\r\n'));
        if (c.framing.startsWith('chunked'))
          lines.push(
            Buffer.from(body.length > 0 ? `${body.length.toString(16)}\r\n` : ''),
            body,
            Buffer.from(body.length > 0 ? '\r\n0\r\n\r\n' : '0\r\n\r\n'),
          );
        else if (c.framing !== 'none') lines.push(body);
        const request = Buffer.concat(lines);
        const res = await sendRawHttp(port, request);
        const where = `${r.method} ${JSON.stringify(request.toString('latin1').slice(0, 400))}`;
        if (res) assertErrorShape(res, where, r);
      }),
      { numRuns: 6, seed: FUZZ_SEED },
    );
  }
});
