/**
 * Feed latency: an account watching 10,000 companies with 1,000,000 events in the database,
 * through the whole HTTP stack (auth, rate limit, validation, the charge of one credit, JSON).
 *
 *   node --import tsx bench/watchlist-feed.ts [--companies 200000] [--events 1000000] [--watched 10000]
 *       [--other-accounts 100] [--other-watched 1000] [--requests 400] [--reuse]
 *
 * Database: BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432, database
 * `regwatch_bench_feed` (dropped and rebuilt unless --reuse). Companies are minimal rows (the feed
 * reads only their name and primary identifier); events are generated day by day in date order,
 * as daily runs write them, through the parent table, so the writer lock and the feed's fan-out
 * trigger run for every one (the seeding rate is printed). Other accounts watch their own companies
 * so the account's rows are a small part of the feed table.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { buildStandaloneApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { hashSecret, newRef, newTokenSecret } from '../src/lib/ids.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import { argValue } from './registry-db.ts';

const COMPANIES = Number(argValue('companies', '200000'));
const EVENTS = Number(argValue('events', '1000000'));
const WATCHED = Number(argValue('watched', '10000'));
const OTHER_ACCOUNTS = Number(argValue('other-accounts', '100'));
const OTHER_WATCHED = Number(argValue('other-watched', '1000'));
const REQUESTS = Number(argValue('requests', '400'));
const REUSE = process.argv.includes('--reuse');
const FIRST_DAY = '2026-08-01';
const DAYS = 112;

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = 'regwatch_bench_feed';
const dbUrl = (() => {
  const u = new URL(serverUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

function log(msg: string) {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
}

async function createAccountWithToken(db: ReturnType<typeof createDatabase>['db'], label: string): Promise<{ id: string; token: string }> {
  const token = newTokenSecret('master');
  const { rows } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status, initialized_at) VALUES (${newRef()}, ${`${label}-${newRef().toLowerCase()}@bench.test`}, ${label}, 'initialized', now())
    RETURNING id`.execute(db);
  const id = rows[0]!.id;
  await sql`INSERT INTO wallets (account_id, balance, total_purchased) VALUES (${id}, 1000000000, 0)`.execute(db);
  await sql`INSERT INTO api_tokens (account_id, token_ref, kind, name, secret_hash) VALUES (${id}, ${newRef()}, 'master', 'bench', ${hashSecret(token)})`.execute(
    db,
  );
  return { id, token };
}

async function seed(): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const h = createDatabase(dbUrl, { max: 4 });
  await migrateToLatest(h.db, h.pool);
  const db = h.db;
  let t0 = performance.now();
  await sql`SELECT ensure_events_partition(d::date) FROM generate_series(${FIRST_DAY}::date, ${FIRST_DAY}::date + ${DAYS}::int, '1 month') d`.execute(
    db,
  );
  await sql`
    INSERT INTO companies (id, primary_identifier_type, primary_identifier, name, status, snapshot, content_hash, name_folded, first_seen_date)
    SELECT g, 'KRS', lpad(g::text, 10, '0'), 'FIRMA ' || g || ' SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'ACTIVE', '{}', '\\x00', 'firma ' || g, ${FIRST_DAY}::date - 1
    FROM generate_series(1, ${COMPANIES}::int) g`.execute(db);
  await sql`INSERT INTO company_identifiers (key, company_id) SELECT identifier_key('KRS', lpad(g::text, 10, '0')), g FROM generate_series(1, ${COMPANIES}::int) g`.execute(
    db,
  );
  await sql`SELECT setval('companies_id_seq', ${COMPANIES}::bigint)`.execute(db);
  log(`companies: ${COMPANIES} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // The measured account watches every (COMPANIES / WATCHED)-th company; the others watch random ones.
  t0 = performance.now();
  const main = await createAccountWithToken(db, 'main');
  const step = Math.max(1, Math.floor(COMPANIES / WATCHED));
  const mainIds = Array.from({ length: WATCHED }, (_, i) => String(1 + i * step));
  for (let i = 0; i < mainIds.length; i += 1000) {
    await db.transaction().execute((trx) => watchCompanies(trx, main.id, mainIds.slice(i, i + 1000), new Date(`${FIRST_DAY}T08:00:00Z`)));
  }
  for (let a = 0; a < OTHER_ACCOUNTS; a++) {
    const other = await createAccountWithToken(db, `other${a}`);
    const ids = Array.from(new Set(Array.from({ length: OTHER_WATCHED }, () => String(1 + Math.floor(Math.random() * COMPANIES)))));
    await db.transaction().execute((trx) => watchCompanies(trx, other.id, ids, new Date(`${FIRST_DAY}T08:00:00Z`)));
  }
  await sql`UPDATE api_tokens SET name = 'bench-main' WHERE account_id = ${main.id}`.execute(db);
  log(`watchlists: main ${WATCHED}, ${OTHER_ACCOUNTS} others x ${OTHER_WATCHED} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // Events day by day, in date order, like daily runs: 1.33 per changed company on average.
  t0 = performance.now();
  const perDay = Math.ceil(EVENTS / DAYS);
  let written = 0;
  for (let d = 0; d < DAYS && written < EVENTS; d++) {
    const n = Math.min(perDay, EVENTS - written);
    await db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity)
        SELECT 1 + floor(random() * ${COMPANIES})::int, ${FIRST_DAY}::date + ${d}::int,
               (enum_range(NULL::event_type))[1 + floor(random() * 29)::int],
               'poprzednia wartość ' || g, 'nowa wartość ' || g,
               (enum_range(NULL::event_severity))[1 + floor(random() * 3)::int]
        FROM generate_series(1, ${n}::int) g`.execute(trx);
    });
    written += n;
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`events: ${written} in ${seconds.toFixed(1)} s (${Math.round(written / seconds)}/s, fan-out trigger included)`);
  await sql`VACUUM ANALYZE`.execute(db);
  await h.close();
}

/** CPU seconds (user + system) by backend pid, from /proc (same machine only; null elsewhere). */
function backendCpuSeconds(pids: readonly number[]): Map<number, number> | null {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      /* the backend has gone */
    }
  }
  return out.size === 0 && pids.length > 0 ? null : out;
}

async function appBackends(db: ReturnType<typeof createDatabase>['db']): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'regwatch'`.execute(db);
  return rows.map((r) => r.pid);
}

/** CPU the app's backends used between two readings (backends opened in between count whole). */
function cpuBetween(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null;
  let s = 0;
  for (const [pid, cpu] of after) s += cpu - (before.get(pid) ?? 0);
  return s;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  if (!REUSE) await seed();
  const h = createDatabase(dbUrl, { max: 10 });
  const db = h.db;
  const {
    rows: [acct],
  } = await sql<{ account_id: string }>`SELECT account_id FROM api_tokens WHERE name = 'bench-main'`.execute(db);
  // A fresh token for this process (the secret is not stored).
  const token = newTokenSecret('master');
  await sql`INSERT INTO api_tokens (account_id, token_ref, kind, name, secret_hash) VALUES (${acct!.account_id}, ${newRef()}, 'api', 'bench-run', ${hashSecret(token)})`.execute(
    db,
  );
  const {
    rows: [stats],
  } = await sql<{ events: number; feed: number; account_feed: number; watch: number }>`
    SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM watchlist_feed)::int AS feed,
           (SELECT count(*) FROM watchlist_feed WHERE account_id = ${acct!.account_id})::int AS account_feed,
           (SELECT count(*) FROM watchlist WHERE account_id = ${acct!.account_id} AND removed_at IS NULL)::int AS watch`.execute(db);
  log(
    `database: ${stats!.events} events; feed table ${stats!.feed} rows; the account watches ${stats!.watch} companies, its feed holds ${stats!.account_feed} events`,
  );
  const { rows: ids } = await sql<{
    id: number;
  }>`SELECT event_id::float8 AS id FROM watchlist_feed WHERE account_id = ${acct!.account_id} ORDER BY event_id`.execute(db);
  const midId = ids[Math.floor(ids.length / 2)]!.id;
  const headId = ids[ids.length - 5]!.id;
  const someCompany = String(1 + Math.floor(COMPANIES / WATCHED) * 17).padStart(10, '0');

  const config = loadConfig({ DATABASE_URL: dbUrl, REGISTRY_SOURCES: '', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' });
  const app = await buildStandaloneApp({ config, db, logger: pino({ level: 'warn' }), clock: systemClock });
  await app.ready();
  const auth = { authorization: `Bearer ${token}` };

  const scenarios: [string, string][] = [
    ['feed, page 1 (20)', '/api/v1/watchlist/events'],
    ['feed, page 1 (100)', '/api/v1/watchlist/events?per_page=100'],
    ['feed, page 100 (20)', '/api/v1/watchlist/events?page=100'],
    ['feed, last page (20)', `/api/v1/watchlist/events?page=${Math.ceil(stats!.account_feed / 20)}`],
    ['feed, event_type (2 types)', '/api/v1/watchlist/events?event_type=COMPANY_NAME_CHANGED,COMPANY_PHONE_CHANGED'],
    ['feed, scope + 30 days', '/api/v1/watchlist/events?scope=insolvency&from_date=2026-10-01&to_date=2026-10-31'],
    ['feed, after_id=0 (100)', '/api/v1/watchlist/events?after_id=0&per_page=100'],
    ['feed, after_id mid (100)', `/api/v1/watchlist/events?after_id=${midId}&per_page=100`],
    ['feed, after_id at head', `/api/v1/watchlist/events?after_id=${headId}&per_page=100`],
    ['watched list, page 1', '/api/v1/companies/watched'],
    ['watched list, page 400', '/api/v1/companies/watched?page=400'],
    ['company events', `/api/v1/companies/events?identifier_type=KRS&identifier_value=${someCompany}`],
    ['baseline: GET /wallet', '/api/v1/wallet'],
  ];
  // Warm the JIT and the caches on every route before anything is measured.
  for (let i = 0; i < 10; i++) for (const [, url] of scenarios) await app.inject({ method: 'GET', url, headers: auth });
  const results: string[] = [];
  results.push(
    `load average at start: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
    '',
  );
  results.push(
    '| request | p50 ms | p95 ms | p99 ms | max ms | Node.js CPU ms/req | PostgreSQL CPU ms/req |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const [label, url] of scenarios) {
    for (let i = 0; i < 20; i++) await app.inject({ method: 'GET', url, headers: auth }); // warm-up
    const times: number[] = [];
    const cpu0 = process.cpuUsage();
    const pg0 = backendCpuSeconds(await appBackends(db));
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await app.inject({ method: 'GET', url, headers: auth });
      times.push(performance.now() - t0);
      if (res.statusCode !== 200) throw new Error(`${label}: ${res.statusCode} ${res.body}`);
    }
    const cpu = process.cpuUsage(cpu0);
    const pgSeconds = cpuBetween(pg0, backendCpuSeconds(await appBackends(db)));
    const nodeMs = (cpu.user + cpu.system) / 1000 / REQUESTS;
    const pgMs = pgSeconds === null ? null : (pgSeconds * 1000) / REQUESTS;
    times.sort((a, b) => a - b);
    const row = `| ${label} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${times.at(-1)!.toFixed(1)} | ${nodeMs.toFixed(2)} | ${pgMs === null ? 'n/a' : pgMs.toFixed(2)} |`;
    results.push(row);
    log(row);
  }
  console.log(`\n${results.join('\n')}\n`);
  await app.close();
  await h.close();
}

await main();
