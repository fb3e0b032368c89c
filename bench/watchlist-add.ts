/**
 * Watchlist add: 100 identifiers of known companies, from POST /companies/add until the request
 * is settled (every company watched, the request completed, the confirmation mail queued), with
 * the real worker (graphile-worker, woken by LISTEN/NOTIFY) and the real HTTP stack.
 *
 *   node --import tsx bench/watchlist-add.ts [--rounds 30] [--size 100]
 *
 * Runs on the database bench/watchlist-feed.ts builds (`regwatch_bench_feed`, 1,000,000 events),
 * so each add also copies the companies' existing events into the feed when their dates call for it.
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { compose } from '../src/composition.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { hashSecret, newRef, newTokenSecret } from '../src/lib/ids.ts';
import { argValue } from './registry-db.ts';

const ROUNDS = Number(argValue('rounds', '30'));
const SIZE = Number(argValue('size', '100'));
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbUrl = (() => {
  const u = new URL(serverUrl);
  u.pathname = '/regwatch_bench_feed';
  return u.toString();
})();

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const h = createDatabase(dbUrl, { max: 10 });
const db = h.db;
const {
  rows: [{ n: companies }],
} = await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(db);
if (companies < SIZE * ROUNDS) throw new Error(`run bench/watchlist-feed.ts first (${companies} companies in ${dbUrl})`);

const config = loadConfig({ DATABASE_URL: dbUrl, REGISTRY_SOURCES: '', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' });
const logger = pino({ level: 'warn' });
const parts = compose({ config, db, logger, clock: systemClock });
const runner = await startWorker({ pool: h.pool, logger, modules: parts.jobs });
const app = await buildApp(parts);
await app.ready();

const accepted: number[] = [];
const settled: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const token = newTokenSecret('master');
  const {
    rows: [acct],
  } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status, initialized_at) VALUES (${newRef()}, ${`add-${newRef().toLowerCase()}@bench.test`}, 'add bench', 'initialized', now()) RETURNING id`.execute(
    db,
  );
  await sql`INSERT INTO wallets (account_id, balance, total_purchased) VALUES (${acct!.id}, 1000, 0)`.execute(db);
  await sql`INSERT INTO api_tokens (account_id, token_ref, kind, name, secret_hash) VALUES (${acct!.id}, ${newRef()}, 'master', 'bench', ${hashSecret(token)})`.execute(
    db,
  );
  const values = Array.from({ length: SIZE }, (_, i) => String(1 + (((r * SIZE + i) * 7919) % companies)));

  const t0 = performance.now();
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: { authorization: `Bearer ${token}` },
    payload: { identifier_type: 'KRS', identifier_value: values },
  });
  const t1 = performance.now();
  if (res.statusCode !== 202) throw new Error(`${res.statusCode} ${res.body}`);
  const ref = res.json().request_id as string;
  for (;;) {
    const {
      rows: [req],
    } = await sql<{ status: string }>`SELECT status FROM watch_requests WHERE request_ref = ${ref}`.execute(db);
    if (req!.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const t2 = performance.now();
  const {
    rows: [{ n }],
  } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM watchlist WHERE account_id = ${acct!.id} AND removed_at IS NULL`.execute(db);
  if (n !== new Set(values).size) throw new Error(`watched ${n} of ${SIZE}`);
  accepted.push(t1 - t0);
  settled.push(t2 - t0);
}
accepted.sort((a, b) => a - b);
settled.sort((a, b) => a - b);
const row = (label: string, xs: number[]) =>
  `| ${label} | ${percentile(xs, 50).toFixed(0)} | ${percentile(xs, 95).toFixed(0)} | ${xs.at(-1)!.toFixed(0)} |`;
console.log(
  `\n${ROUNDS} adds of ${SIZE} known companies\n\n| ms | p50 | p95 | max |\n|---|---:|---:|---:|\n${row('202 answered', accepted)}\n${row('request settled', settled)}\n`,
);
await app.close();
await runner.stop();
await parts.close();
await h.close();
