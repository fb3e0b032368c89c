import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/net.ts';

test('the 181st request in a minute gets 429 with Retry-After; every response carries the limit headers', async () => {
  const t = await createTestApp();
  const a = await createAccount(t);
  let last;
  for (let i = 1; i <= 180; i++) {
    last = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) });
    assert.equal(last.statusCode, 200, `request ${i}`);
    assert.equal(last.headers['x-ratelimit-limit'], '180');
    assert.equal(last.headers['x-ratelimit-remaining'], String(180 - i));
  }
  const over = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) });
  assert.equal(over.statusCode, 429);
  assert.deepEqual(over.json(), { message: 'Too Many Attempts.' });
  assert.ok(Number(over.headers['retry-after']) > 0);
  assert.equal(over.headers['x-ratelimit-limit'], '180');
  assert.equal(over.headers['x-ratelimit-remaining'], '0');

  // The limit is per account: another account is unaffected; health is never limited.
  const b = await createAccount(t);
  const other = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(b.master) });
  assert.equal(other.statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
});

test('unauthenticated requests are limited per client IP', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
  for (let i = 0; i < 5; i++) {
    const r = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/recover',
      payload: { email: 'x@example.com' },
      remoteAddress: '10.0.0.1',
    });
    assert.equal(r.statusCode, 200);
  }
  const over = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/recover',
    payload: { email: 'x@example.com' },
    remoteAddress: '10.0.0.1',
  });
  assert.equal(over.statusCode, 429);
  const otherIp = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/recover',
    payload: { email: 'x@example.com' },
    remoteAddress: '10.0.0.2',
  });
  assert.equal(otherIp.statusCode, 200);
});

test('unknown routes and wrong methods are limited too, and carry the limit headers', async () => {
  // An unknown route authenticates no one: it counts against the client's IP, as unauthenticated requests do.
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '4' } });
  const seen: [number, string | undefined][] = [];
  for (const [method, url] of [
    ['GET', '/api/v1/nope'],
    ['PATCH', '/api/v1/tokens'],
    ['GET', '/nope'],
    ['GET', '/api/v1/nope'],
  ] as const) {
    const r = await t.app.inject({ method, url, remoteAddress: '10.0.0.9' });
    seen.push([r.statusCode, r.headers['x-ratelimit-remaining'] as string | undefined]);
  }
  assert.deepEqual(seen, [
    [404, '3'],
    [405, '2'],
    [404, '1'],
    [404, '0'],
  ]);
  const over = await t.app.inject({ method: 'GET', url: '/api/v1/nope', remoteAddress: '10.0.0.9' });
  assert.equal(over.statusCode, 429);
  assert.equal(over.headers['x-ratelimit-limit'], '4');
  assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/nope', remoteAddress: '10.0.0.8' })).statusCode, 404);
});

test(
  'with Redis, two app instances share one limit',
  { skip: process.env.REDIS_URL ? false : 'REDIS_URL is not set (CI sets it)' },
  async () => {
    const db = await createTestDatabase();
    const r1 = new Redis(process.env.REDIS_URL!);
    const r2 = new Redis(process.env.REDIS_URL!);
    try {
      const one = await createTestApp({ db, redis: r1, env: { RATE_LIMIT_PER_MINUTE: '20' } });
      const two = await createTestApp({ db, redis: r2, env: { RATE_LIMIT_PER_MINUTE: '20' } });
      const a = await createAccount(one);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const app = i % 2 === 0 ? one.app : two.app;
        statuses.push((await app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) })).statusCode);
      }
      assert.deepEqual(new Set(statuses), new Set([200]));
      const over1 = await one.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) });
      const over2 = await two.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) });
      assert.equal(over1.statusCode, 429);
      assert.equal(over2.statusCode, 429);
      assert.equal(over2.headers['x-ratelimit-remaining'], '0');
    } finally {
      r1.disconnect();
      r2.disconnect();
    }
  },
);

test('a Redis that cannot be reached: the limit is kept in the process, never a 500, and it is logged once', async () => {
  const port = await freePort(); // nothing listens there
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 2, enableOfflineQueue: true, retryStrategy: () => 200 });
  try {
    const t = await createTestApp({ redis, env: { RATE_LIMIT_PER_MINUTE: '5' } });
    const a = await createAccount(t);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(a.master) });
      statuses.push(r.statusCode);
      assert.equal(r.headers['x-ratelimit-limit'], '5');
    }
    // createAccount's own requests were counted by IP, not by this account.
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const warnings = t.logLines.filter((l) => l.includes('Redis cannot be reached'));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.ok(!t.logLines.some((l) => /"level":50/.test(l)), 'no error logged');
  } finally {
    redis.disconnect();
  }
});
