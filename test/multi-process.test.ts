import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { ParsedMail } from 'mailparser';
import { enqueueDailyRuns } from '../src/registry/jobs.ts';
import { defer } from './helpers/cleanup.ts';
import { createTestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/net.ts';
import { BIN, serveProcess } from './helpers/serve.ts';
import { companySnapshot, nipFor, writeNdjson } from './helpers/registry.ts';
import { startSmtp } from './helpers/smtp.ts';
import { waitFor } from './helpers/wait.ts';
import { startReceiver } from './webhooks-support.ts';

/**
 * The deployment of docs/deployment.md, as processes: two `ROLE=api` and two `ROLE=worker`
 * processes of `regwatch serve` on one PostgreSQL (and Redis when REDIS_URL is set), a real SMTP
 * server and a real webhook receiver. A scheduled daily run (a `registry.daily` job, as the
 * scheduler queues it), watchlist adds, mail and webhook deliveries each happen exactly once; both
 * API processes answer the same after the run; the rate limit is shared through Redis; a worker
 * killed in the middle of a daily run loses nothing.
 */

const COMPANIES = 3_000;
const WATCHED = 50;
// The feed (and so the webhooks) shows a company's events from the day it was first watched: today.
const dayFromToday = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
const [DAY1, DAY2, DAY3] = [dayFromToday(-1), dayFromToday(0), dayFromToday(1)];

const t = await createTestDatabase();
const db = t.db;
const smtp = await startSmtp();
const receiver = await startReceiver();
const dir = mkdtempSync(join(tmpdir(), 'regwatch-procs-'));
defer(() => rmSync(dir, { recursive: true, force: true }));

const baseEnv: Record<string, string | undefined> = {
  ...process.env,
  DATABASE_URL: t.url,
  SMTP_URL: smtp.url,
  REGISTRY_SOURCES: '',
  DEMO_COMPANIES: '0',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  JOB_RECOVERY_SWEEP_SECONDS: '1',
  JOB_RECOVERY_GRACE_SECONDS: '2',
  // Credits are not what this test is about: polling searches and feeds must not run the wallet dry.
  PRICES: JSON.stringify({ 'companies.search': 0, 'companies.add': 0, 'watchlist.events': 0, 'companies.events': 0 }),
  RATE_LIMIT_PER_MINUTE: '400',
};
delete baseEnv.REDIS_URL;
if (process.env.REDIS_URL) baseEnv.REDIS_URL = process.env.REDIS_URL;

const serve = (env: Record<string, string>) => serveProcess({ ...baseEnv, ...env });

async function runCli(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, `regwatch ${args.join(' ')} failed:\n${out}`);
  return out;
}

async function api(port: number) {
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    `API on ${port}`,
    async () => {
      try {
        return (await fetch(`${base}/health`)).status === 200;
      } catch {
        return false;
      }
    },
    90_000,
  );
  return async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

const mailedTo = (m: ParsedMail, email: string) => (Array.isArray(m.to) ? m.to : m.to ? [m.to] : []).some((a) => a.text.includes(email));

async function workerCount(): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(DISTINCT process_key)::int AS n FROM job_worker_liveness WHERE dead_since IS NULL`.execute(db);
  return rows[0]!.n;
}

const day = (n: number, change: (i: number) => Parameters<typeof companySnapshot>[0]) =>
  writeNdjson(
    join(dir, `day${n}.ndjson`),
    Array.from({ length: COMPANIES }, (_, i) => companySnapshot(change(i + 1))),
  );

async function runOf(date: string) {
  return db.selectFrom('daily_runs').selectAll().where('run_date', '=', date).where('kind', '=', 'daily').executeTakeFirst();
}

async function eventsOf(date: string): Promise<{ company_id: string; n: number }[]> {
  const { rows } = await sql<{ company_id: string; n: number }>`
    SELECT company_id::text, count(*)::int AS n FROM events WHERE event_date = ${date}::date GROUP BY company_id`.execute(db);
  return rows;
}

test(
  'two API and two worker processes on one database: each run, add, mail and delivery once; a killed worker loses nothing',
  { timeout: 600_000 },
  async () => {
    // Day 1, loaded through the CLI as an operator would.
    await runCli(['daily', '--date', DAY1, '--source', `file:${day(1, (n) => ({ n }))}`]);

    const workerA = serve({ ROLE: 'worker' });
    const workerB = serve({ ROLE: 'worker' });
    const [port1, port2] = [await freePort(), await freePort()];
    serve({ ROLE: 'api', PORT: String(port1) });
    serve({ ROLE: 'api', PORT: String(port2) });
    const [one, two] = [await api(port1), await api(port2)];
    await waitFor('two worker processes', async () => (await workerCount()) === 2, 60_000);

    // An account registered on one API process, initialised on the other: one registration mail.
    const email = `procs-${Date.now()}@example.com`;
    assert.equal((await one('POST', '/auth/register', undefined, { email, name: 'Procs' })).status, 201);
    const registration = await smtp.waitFor((m) => mailedTo(m, email) && /Initialization token/.test(m.text ?? ''), 30_000);
    const initToken = /^Initialization token: (\S+)$/m.exec(registration.text ?? '')![1]!;
    const init = await two('POST', '/auth/init', undefined, { token: initToken });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const master: string = init.body.master_token;

    const hook = await one('POST', '/webhooks', master, { url: `${receiver.url}/hooks` });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    receiver.addSecret('/hooks', hook.body.data.secret);

    const watched = Array.from({ length: WATCHED }, (_, i) => nipFor(i + 1));
    assert.equal((await two('POST', '/companies/add', master, { identifier_type: 'NIP', identifier_value: watched })).status, 202);
    await waitFor(
      'the watchlist add settled',
      async () => (await one('GET', '/companies/watched', master)).body?.meta?.total === WATCHED,
      60_000,
    );
    await smtp.waitFor((m) => mailedTo(m, email) && /watch/i.test(m.subject ?? ''), 30_000);

    // Day 2, as the scheduler queues it: the first 300 companies move to another city.
    await enqueueDailyRuns(db, [`file:${day(2, (n) => (n <= 300 ? { n, city: 'Nowe Miasto', postalCode: '00-950' } : { n }))}`], DAY2);
    await waitFor('the day-2 run completed', async () => (await runOf(DAY2))?.status === 'completed', 120_000);
    const day2Events = await eventsOf(DAY2);
    assert.equal(day2Events.length, 300, 'every changed company has events, no other');
    const perCompany = day2Events[0]!.n;
    assert.ok(
      day2Events.every((e) => e.n === perCompany),
      'the same change yields the same events for each company',
    );

    // Webhooks: each watched company's events arrive once, signed; nothing of unwatched companies.
    const feed = await one('GET', `/watchlist/events?from_date=${DAY2}&to_date=${DAY2}&per_page=100`, master);
    assert.equal(feed.status, 200);
    const expected = feed.body.meta.total as number;
    assert.equal(expected, WATCHED * perCompany);
    await waitFor('day-2 deliveries', () => receiver.on('/hooks').length >= expected, 60_000);
    await new Promise((r) => setTimeout(r, 1_500)); // time for any duplicate to show
    const day2Messages = receiver.on('/hooks');
    assert.equal(day2Messages.length, expected, 'no message sent twice by the two workers');
    assert.equal(new Set(day2Messages.map((m) => m.id)).size, expected);
    assert.ok(
      day2Messages.every((m) => m.verifiedBy.length === 1),
      'every message verifies with standardwebhooks',
    );

    // Mail once each: one registration, one watchlist-add confirmation.
    const mailTo = smtp.messages.filter((m) => mailedTo(m, email));
    assert.equal(mailTo.length, 2, mailTo.map((m) => m.subject).join(' | '));

    // Both API processes answer the run's changes the same way.
    const searchBoth = async () =>
      Promise.all([one, two].map(async (call) => (await call('GET', '/companies/search?city=Nowe%20Miasto', master)).body?.data?.total));
    await waitFor('both API processes show day 2', async () => (await searchBoth()).every((n) => n === 300), 60_000);

    // The rate limit is one limit across the API processes (with Redis).
    if (process.env.REDIS_URL) {
      const email2 = `procs-rl-${Date.now()}@example.com`;
      await one('POST', '/auth/register', undefined, { email: email2, name: 'Limit' });
      const mail2 = await smtp.waitFor((m) => mailedTo(m, email2), 30_000);
      const other = (await two('POST', '/auth/init', undefined, { token: /^Initialization token: (\S+)$/m.exec(mail2.text ?? '')![1] }))
        .body.master_token as string;
      const statuses: number[] = [];
      for (let i = 0; i < 400; i++) statuses.push((await (i % 2 ? one : two)('POST', '/tokens/verify', other)).status);
      assert.deepEqual([...new Set(statuses)], [200]);
      assert.equal((await one('POST', '/tokens/verify', other)).status, 429);
      assert.equal((await two('POST', '/tokens/verify', other)).status, 429);
    }

    // Day 3 with one worker process, killed in the middle of the run; another one takes over.
    workerB.child.kill('SIGTERM');
    assert.equal(await workerB.exited, 0);
    await waitFor('one worker process', async () => (await workerCount()) === 1, 30_000);
    await enqueueDailyRuns(
      db,
      [
        `file:${day(3, (n) => ({ n, city: n <= 300 ? 'Nowe Miasto' : undefined, postalCode: n <= 300 ? '00-950' : undefined, street: 'ul. Krzywa' }))}`,
      ],
      DAY3,
    );
    await waitFor('the day-3 run started', async () => (await runOf(DAY3))?.status === 'running', 60_000);
    workerA.child.kill('SIGKILL');
    await workerA.exited;
    const interrupted = await runOf(DAY3);
    serve({ ROLE: 'worker' });
    serve({ ROLE: 'worker' });
    await waitFor('the day-3 run completed after the kill', async () => (await runOf(DAY3))?.status === 'completed', 180_000);
    assert.notEqual(interrupted?.status, 'completed', 'the worker was killed before the run completed');

    const day3Events = await eventsOf(DAY3);
    assert.equal(day3Events.length, COMPANIES, 'every company changed once, none lost');
    const per3 = day3Events[0]!.n;
    assert.ok(
      day3Events.every((e) => e.n === per3),
      'no event recorded twice by the resumed run',
    );
    const feed3 = await two('GET', `/watchlist/events?from_date=${DAY3}&to_date=${DAY3}&per_page=100`, master);
    const expected3 = feed3.body.meta.total as number;
    assert.equal(expected3, WATCHED * per3);
    const idsBefore = new Set(day2Messages.map((m) => m.id));
    await waitFor('day-3 deliveries', () => receiver.on('/hooks').filter((m) => !idsBefore.has(m.id)).length >= expected3, 120_000);
    const day3Messages = receiver.on('/hooks').filter((m) => !idsBefore.has(m.id));
    assert.equal(
      new Set(day3Messages.map((m) => m.id)).size,
      expected3,
      'every day-3 message delivered (at least once, the same webhook-id when repeated)',
    );
  },
);
