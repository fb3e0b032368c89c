import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorFromResponse, InsufficientCreditsError, parseRetryAfter, RegwatchError, ValidationError } from '../src/errors.ts';
import { retryingFetch } from '../src/transport.ts';

/** The retry policy and error mapping, over scripted answers (the service-level cases are in test/sdk*.test.ts). */

function scripted(...answers: Array<[number, Record<string, string>?]>) {
  const seen: string[] = [];
  const waits: number[] = [];
  const base = async (r: Request) => {
    seen.push(`${r.method} ${await r.text()}`);
    const [status, headers] = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    return new Response(JSON.stringify({ message: `answer ${seen.length}` }), { status, headers });
  };
  const sleep = async (ms: number) => {
    waits.push(ms);
  };
  return { base, seen, waits, sleep };
}

test('429 and 503 are asked again with the same body, waiting Retry-After (or a doubling delay), at most maxAttempts times', async () => {
  const s = scripted([429, { 'retry-after': '2' }], [503], [200]);
  const res = await retryingFetch(
    s.base,
    { maxAttempts: 3, baseDelayMs: 100 },
    s.sleep,
  )(new Request('http://x/a', { method: 'POST', body: '{"a":1}' }));
  assert.equal(res.status, 200);
  assert.deepEqual(s.seen, ['POST {"a":1}', 'POST {"a":1}', 'POST {"a":1}']);
  assert.deepEqual(s.waits, [2000, 200]);

  const bounded = scripted([429, { 'retry-after': '1' }]);
  assert.equal((await retryingFetch(bounded.base, { maxAttempts: 2 }, bounded.sleep)(new Request('http://x/a'))).status, 429);
  assert.equal(bounded.seen.length, 2);

  const tooLong = scripted([503, { 'retry-after': '120' }]);
  assert.equal((await retryingFetch(tooLong.base, { maxDelayMs: 60_000 }, tooLong.sleep)(new Request('http://x/a'))).status, 503);
  assert.equal(tooLong.seen.length, 1, 'a wait above maxDelayMs is not waited for');

  for (const status of [200, 400, 402, 422, 500, 502]) {
    const once = scripted([status]);
    await retryingFetch(once.base, {}, once.sleep)(new Request('http://x/a'));
    assert.equal(once.seen.length, 1, `${status} is not retried`);
  }
});

test('Retry-After: seconds or an HTTP date', () => {
  assert.equal(parseRetryAfter('3'), 3000);
  assert.equal(parseRetryAfter('0.5'), 500);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
});

test('error bodies of every shape the API answers become typed errors', () => {
  const v = errorFromResponse(new Response(null, { status: 422, headers: { 'x-request-id': 'r1' } }), {
    message: 'Bad (and 1 more error)',
    errors: { a: ['x'], 'b.1': ['y'] },
  });
  assert.ok(v instanceof ValidationError);
  assert.deepEqual(
    [v.status, v.code, v.message, v.errors, v.requestId],
    [422, 'VALIDATION_FAILED', 'Bad (and 1 more error)', { a: ['x'], 'b.1': ['y'] }, 'r1'],
  );
  const p = errorFromResponse(new Response(null, { status: 402 }), {
    message: 'Insufficient credits.',
    code: 'INSUFFICIENT_CREDITS',
    balance: 0,
    required: 3,
  });
  assert.ok(p instanceof InsufficientCreditsError);
  assert.deepEqual([p.balance, p.required], [0, 3]);
  const u = errorFromResponse(new Response(null, { status: 401 }), { error: 'Unauthenticated.', code: 'UNAUTHORIZED' });
  assert.deepEqual([u.name, u.message, u.code], ['AuthenticationError', 'Unauthenticated.', 'UNAUTHORIZED']);
  const other = errorFromResponse(new Response(null, { status: 418 }), 'teapot');
  assert.ok(other instanceof RegwatchError);
  assert.deepEqual([other.name, other.message, other.code], ['RegwatchError', 'teapot', 'HTTP_418']);
});
