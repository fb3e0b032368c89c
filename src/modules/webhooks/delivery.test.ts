import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSender, MAX_RESPONSE_BYTES, parseRetryAfter } from './delivery.ts';
import type { ResolveHost } from './url-guard.ts';

// The sender against a real HTTP server on 127.0.0.1: what an attempt makes of each kind of answer.

const resolveTo =
  (address: string): ResolveHost =>
  () =>
    Promise.resolve([{ address, family: 4 }]);

async function withServer(
  fn: (base: string, requests: { path: string; headers: Record<string, unknown>; body: string }[]) => Promise<void>,
) {
  const requests: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      requests.push({ path: req.url!, headers: req.headers, body });
      if (req.url === '/big') res.writeHead(200).end('x'.repeat(64 * 1024));
      else if (req.url === '/redirect') res.writeHead(302, { location: '/ok' }).end();
      else if (req.url === '/busy') res.writeHead(503, { 'retry-after': '120' }).end('busy');
      else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end('late'), 600);
      else res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await fn(base, requests);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

test('a 2xx is delivered; the headers and body go as given', async () => {
  await withServer(async (base, requests) => {
    const sender = createSender({ allowPrivate: true, resolve: resolveTo('127.0.0.1') });
    const r = await sender.send(`${base}/ok?x=1`, { 'webhook-id': 'msg_1' }, '{"a":1}', new Date());
    await sender.close();
    assert.equal(r.ok, true);
    assert.equal(r.status, 204);
    assert.equal(requests[0]!.path, '/ok?x=1');
    assert.equal(requests[0]!.headers['webhook-id'], 'msg_1');
    assert.equal(requests[0]!.headers['content-type'], 'application/json');
    assert.equal(requests[0]!.body, '{"a":1}');
  });
});

test('an answer is kept up to 1 KB; a redirect is not followed; Retry-After is read on a 503', async () => {
  await withServer(async (base, requests) => {
    const sender = createSender({ allowPrivate: true, resolve: resolveTo('127.0.0.1') });
    const big = await sender.send(`${base}/big`, {}, '{}', new Date());
    assert.equal(big.ok, true);
    assert.equal(big.body!.length, MAX_RESPONSE_BYTES);
    const moved = await sender.send(`${base}/redirect`, {}, '{}', new Date());
    assert.equal(moved.ok, false);
    assert.equal(moved.status, 302);
    assert.deepEqual(
      requests.map((r) => r.path),
      ['/big', '/redirect'],
    );
    const busy = await sender.send(`${base}/busy`, {}, '{}', new Date());
    assert.equal(busy.status, 503);
    assert.equal(busy.retryAfter, 120);
    assert.equal(busy.body, 'busy');
    await sender.close();
  });
});

test('an answer later than the timeout is a timeout; a private address is refused at the attempt', async () => {
  await withServer(async (base) => {
    const sender = createSender({ allowPrivate: true, resolve: resolveTo('127.0.0.1'), timeoutMs: 200 });
    const slow = await sender.send(`${base}/slow`, {}, '{}', new Date());
    assert.equal(slow.ok, false);
    assert.equal(slow.error, 'No answer within 0.2 s');
    assert.ok(slow.seconds < 0.6, `aborted after ${slow.seconds} s`);
    await sender.close();
    const guarded = createSender({ allowPrivate: false, resolve: resolveTo('127.0.0.1') });
    const literal = await guarded.send(`${base}/ok`, {}, '{}', new Date());
    assert.equal(literal.ok, false);
    assert.match(literal.error!, /not a public address/);
    const named = await guarded.send(`${base.replace('127.0.0.1', 'receiver.example')}/ok`, {}, '{}', new Date());
    assert.equal(named.ok, false);
    assert.match(named.error!, /resolves to 127\.0\.0\.1, not a public address/);
    await guarded.close();
  });
});

test('Retry-After: delta seconds or an HTTP date; a value that is neither leaves the schedule, not an attempt at once', () => {
  const now = new Date('2026-12-08T00:00:00Z');
  const cases: [string | undefined, number | null][] = [
    ['120', 120],
    [' 120 ', 120],
    ['0', 0],
    ['120.5', 121],
    ['Tue, 08 Dec 2026 00:01:30 GMT', 90],
    ['Tuesday, 08-Dec-26 00:01:30 GMT', 90],
    ['Mon, 07 Dec 2026 23:00:00 GMT', 0],
    // Date.parse reads a day of 2001 into these: a wait of 0 before.
    ['-5', null],
    ['1 2', null],
    ['soon', null],
    ['', null],
    [undefined, null],
  ];
  assert.deepEqual(
    cases.map(([v]) => [v, parseRetryAfter(v, now)]),
    cases,
  );
});
