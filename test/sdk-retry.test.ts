import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimitError, Regwatch } from '../packages/sdk/src/index.ts';
import { createAccount, createTestApp } from './helpers/app.ts';
import { waitFor } from './helpers/wait.ts';

/**
 * A 429 from the real rate limit, retried by the SDK after the `Retry-After` the service sent.
 * The limit's window is a fixed minute from its first request, so the test spends most of a
 * minute waiting (idle) for a window close to its end, where `Retry-After` is a few seconds.
 */

const LIMIT = 5;
const t = await createTestApp({ listen: true, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
const a = await createAccount(t);

test('a 429 is retried after Retry-After and succeeds; with no retries left, or a wait too long, it is a RateLimitError; a stream waits it out', async () => {
  const answers: { status: number; retryAfter: string | null; at: number }[] = [];
  const observe = async (r: Request) => {
    const res = await fetch(r);
    answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), at: Date.now() });
    return res;
  };
  const rw = new Regwatch({ token: a.master, baseUrl: t.baseUrl, fetch: observe });
  const windowStart = Date.now();
  for (let i = 0; i < LIMIT; i++) await rw.tokens.verify();

  const once = await new Regwatch({ token: a.master, baseUrl: t.baseUrl, retry: { maxAttempts: 1 } }).tokens
    .verify()
    .catch((e: unknown) => e);
  assert.ok(once instanceof RateLimitError, String(once));
  assert.equal(once.status, 429);
  assert.equal(once.code, 'RATE_LIMITED');
  assert.ok((once.retryAfterMs ?? 0) > 50_000, `retryAfterMs ${once.retryAfterMs}`);
  const started = Date.now();
  const impatient = await new Regwatch({ token: a.master, baseUrl: t.baseUrl, retry: { maxDelayMs: 5000 } }).tokens
    .verify()
    .catch((e: unknown) => e);
  assert.ok(impatient instanceof RateLimitError, 'a Retry-After above maxDelayMs is not waited for');
  assert.ok(Date.now() - started < 5000);

  // A stream whose poll is limited (no retries left in the client) waits the Retry-After out and polls on.
  const polls: { status: number; retryAfter: string | null; at: number }[] = [];
  const stopStream = new AbortController();
  const streamRw = new Regwatch({
    token: a.master,
    baseUrl: t.baseUrl,
    retry: { maxAttempts: 1 },
    fetch: async (r) => {
      const res = await fetch(r);
      polls.push({ status: res.status, retryAfter: res.headers.get('retry-after'), at: Date.now() });
      return res;
    },
  });
  const streaming = (async () => {
    for await (const _ of streamRw.events.stream({ intervalMs: 30_000, signal: stopStream.signal })) assert.fail('the feed is empty');
  })();

  // Near the end of the window, Retry-After is a few seconds: the SDK waits them and succeeds.
  await new Promise((r) => setTimeout(r, Math.max(0, windowStart + 56_000 - Date.now())));
  answers.length = 0;
  const ok = await rw.tokens.verify();
  assert.equal(ok.data.valid, true);
  assert.equal(answers.length, 2, JSON.stringify(answers));
  const [limited, retried] = answers as [(typeof answers)[0], (typeof answers)[0]];
  assert.equal(limited.status, 429);
  assert.equal(retried.status, 200);
  const retryAfter = Number(limited.retryAfter);
  assert.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${limited.retryAfter}`);
  assert.ok(retried.at - limited.at >= retryAfter * 1000 - 50, `waited ${retried.at - limited.at} ms for Retry-After ${retryAfter}`);

  await waitFor("the stream's poll after the window", () => polls.length >= 2, 15_000);
  stopStream.abort();
  await streaming;
  assert.deepEqual(
    polls.map((p) => p.status),
    [429, 200],
    'one limited poll, then one after the wait (the next is 30 s away)',
  );
  assert.ok(polls[1]!.at - polls[0]!.at >= Number(polls[0]!.retryAfter) * 1000 - 50);
});
