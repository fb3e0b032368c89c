/**
 * The whole service at scale, as it would be deployed: a registry of `--companies` companies
 * (default 4,100,000) loaded through the ordinary daily run (`regwatch daily --source file:…`),
 * one realistic day of about 1 % changed companies through the same command, then two `ROLE=api`
 * and two `ROLE=worker` processes of `regwatch serve` on that database, measured from outside:
 *
 * - load and detection rates (the CLI's own runs, wall clock);
 * - each API process's search-index build, and every process's memory (VmRSS, VmHWM);
 * - search latency p50/p95/p99 over the 1,200-combination workload (exact totals), while the API
 *   processes still build their batch-matching indexes and again once they have them;
 * - snapshot and search throughput at 50 connections over 200 accounts, spread over both API processes;
 * - the watchlist feed of an account watching 10,000 companies;
 * - the database's size on disk and each phase's time.
 *
 *   node --import tsx bench/scale.ts [--companies 4100000] [--dir /var/tmp/regwatch-scale] [--seconds 20] [--files-only] [--keep] [--reuse] [--registry-only] [--more-days N] [--api-node-args ARGS]
 *
 * Database: DATABASE_URL's server (a database of its own is created and dropped), else a fresh
 * embedded cluster (bench/registry-db.ts). The input files are kept in `--dir` between runs
 * (written once: about 1.3 GB per million companies). The registry is the synthetic one
 * (src/registry/sources/synthetic/): its base state is the load, and its changes of two
 * consecutive days (about 0.5 % each) make the 1 % day.
 *
 * `--keep`: keep the loaded database after the run (on the embedded cluster, its directory
 * `--dir`/db-N, stopped), so that `--reuse` can measure it again without the load and the day
 * (about 6 minutes), or it can be investigated. `--reuse` migrates the kept database to the latest
 * migration and measures from the API processes' start; the load and detection rows are then absent.
 * Every process's output is written to `--dir`/logs-PID/ (the API's request log included).
 *
 * `--registry-only`: stop after the load and the day (no API phases). `--more-days N` (with
 * `--reuse`): run N more 1 % days on the kept database through the CLI, each the synthetic
 * registry's next two days of changes (files written on demand, `--dir`/day-N-DATE.ndjson), after
 * a `CHECKPOINT` as the first day, and stop; a minute an experiment instead of a load. Each daily
 * run prints its timeline (the CLI's start, database open, first and last batch committed, each
 * deferred index built, the identifiers' VACUUM, from the command's log) and the CPU of the command and of PostgreSQL's
 * processes by kind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { hashSecret, newRef, newTokenSecret } from '../src/lib/ids.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';
import { createSyntheticSource, SYNTHETIC_DEFAULTS } from '../src/registry/sources/synthetic.ts';
import { API_NODE_OPTIONS } from '../src/lib/collector.ts';
import { pageCacheDelta, pageCacheSample, pageTableIsolation, processCpuSeconds } from './machine.ts';
import { argValue, openBenchDatabase, printStatementStats, statementStats } from './registry-db.ts';
import { speedReference, syncToDisk } from './registry-fixtures.ts';
import { pgIoDelta, samplePgIo } from './pg-io.ts';
import { buildWorkload, queryString, runLoad, summary } from './search-fixtures.ts';

const COMPANIES = Number(argValue('companies', '4100000'));
const DIR = argValue('dir', '/var/tmp/regwatch-scale');
const SECONDS = Number(argValue('seconds', '20'));
const ACCOUNTS = 200;
const WATCHED = Math.min(10_000, Math.floor(COMPANIES / 10));
const BIN = new URL('../bin/regwatch.js', import.meta.url).pathname;
const SEED = 'scale';
const KEEP = process.argv.includes('--keep');
const REUSE = process.argv.includes('--reuse');
const REGISTRY_ONLY = process.argv.includes('--registry-only');
const MORE_DAYS = Number(argValue('more-days', '0'));
// `--api-node-args "--trace-gc ..."`: Node.js arguments of the API processes only (their output is in `--dir`/logs-PID/).
const API_NODE_ARGS = argValue('api-node-args', '').split(' ').filter(Boolean);
// `--cli-node-args "--cpu-prof ..."`: Node.js arguments of the daily runs' commands; `--cli-bin PATH`: another build of bin/regwatch.js, for an A/B.
const CLI_NODE_ARGS = argValue('cli-node-args', '').split(' ').filter(Boolean);
const CLI_BIN = argValue('cli-bin', '');
const day = (n: number) => new Date(Date.parse(`${SYNTHETIC_DEFAULTS.epoch}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const [EPOCH, DAY1, DAY2] = [day(0), day(1), day(2)];

/** Thrown to skip the API phases (`--registry-only`, `--more-days`). */
class StopAfterRegistry extends Error {}
const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));
const seconds = (t0: number) => Number(((performance.now() - t0) / 1000).toFixed(1));

out({
  started: new Date().toISOString(),
  companies: COMPANIES,
  cpus: cpus().length,
  mem_gb: Math.round(totalmem() / 2 ** 30),
  loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  speed_reference_us: speedReference(),
  ...pageTableIsolation(),
});

// ---------------------------------------------------------------------------------------------
// Input files: the synthetic registry's base state, and its changes of two days as one day's file.

async function writeLines(path: string, snapshots: AsyncIterable<CompanySnapshot>): Promise<number> {
  const tmp = `${path}.partial`;
  const file = createWriteStream(tmp);
  let n = 0;
  for await (const s of snapshots) {
    if (!file.write(JSON.stringify(s) + '\n')) await once(file, 'drain');
    n++;
  }
  file.end();
  await once(file, 'finish');
  await syncToDisk(tmp);
  const { renameSync } = await import('node:fs');
  renameSync(tmp, path);
  return n;
}

mkdirSync(DIR, { recursive: true });
const source = createSyntheticSource({ seed: SEED, size: COMPANIES, epoch: EPOCH });
const loadFile = join(DIR, `load-${COMPANIES}.ndjson`);
const dayFile = join(DIR, `day-${COMPANIES}.ndjson`);
let t0 = performance.now();
if (!existsSync(loadFile)) await writeLines(loadFile, source.allSnapshots(EPOCH));
/** Two days' changes as one day's file: the second day's changes in their state then, then the first day's others (in theirs). */
async function writeDayFile(path: string, first: string, second: string): Promise<number> {
  const seen = new Set<string>();
  const nipOf = (s: CompanySnapshot) => s.identity.identifiers.map((i) => `${i.type}:${i.value}`).sort()[0]!;
  return writeLines(
    path,
    (async function* () {
      for await (const s of source.snapshotsForDate(second)) {
        seen.add(nipOf(s));
        yield s;
      }
      for await (const s of source.snapshotsForDate(first)) if (!seen.has(nipOf(s))) yield s;
    })(),
  );
}
if (!existsSync(dayFile)) await writeDayFile(dayFile, DAY1, DAY2);
out({
  phase: 'input files',
  seconds: seconds(t0),
  load_file_mb: Math.round(statSync(loadFile).size / 2 ** 20),
  day_file_lines: readFileSync(dayFile, 'utf8').split('\n').length - 1,
});
// `--files-only`: write the input files ahead of a measured run, and stop.
if (process.argv.includes('--files-only')) process.exit(0);

// ---------------------------------------------------------------------------------------------
// The database, and the CLI's daily runs.

const bench =
  KEEP || REUSE
    ? await openBenchDatabase(`regwatch_scale_${COMPANIES}`, { dir: join(DIR, `db-${COMPANIES}`), keep: true, reuse: REUSE })
    : await openBenchDatabase(`regwatch_scale_${process.pid}`);
const LOGS = join(DIR, `logs-${process.pid}`);
mkdirSync(LOGS, { recursive: true });
const db = bench.handle.db;
const env: Record<string, string | undefined> = {
  ...process.env,
  DATABASE_URL: bench.url,
  REGISTRY_SOURCES: '',
  DEMO_COMPANIES: '0',
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '1000000',
  SMTP_URL: undefined,
  REDIS_URL: process.env.REDIS_URL,
};
const children: ChildProcess[] = [];

/**
 * What the last `cli` run took: its wall (from its spawn to its exit: the samples taken around it
 * are not in it), its timeline (from the command's log) and CPU seconds, the command's and
 * PostgreSQL's by kind.
 */
let lastCli: {
  seconds: number;
  timeline: Record<string, unknown>[];
  cpu_seconds: Record<string, number>;
  pg_io: ReturnType<typeof pgIoDelta>;
  page_cache: ReturnType<typeof pageCacheDelta> | null;
} = {
  seconds: 0,
  timeline: [],
  cpu_seconds: {},
  pg_io: null,
  page_cache: null,
};
const TIMELINE =
  /"msg":"(daily command started|database open|run started|first batch committed|last batch committed|deferred index built|identifiers vacuumed|daily command done)"/;

/** `n`: the companies the run reads, for PostgreSQL's writes a company (pg_io). */
async function cli(args: string[], n: number): Promise<string> {
  // As the `regwatch` command runs: its shebang passes the API node options to every command.
  const io0 = await samplePgIo(db);
  const cache0 = pageCacheSample();
  const pg0 = bench.postgresCpuByProcess() ?? {};
  const spawned = Date.now();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...API_NODE_OPTIONS, ...CLI_NODE_ARGS, CLI_BIN || BIN, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => {
    text += d;
  });
  child.stderr.on('data', (d) => {
    text += d;
  });
  // The command's CPU: its /proc/PID/stat, sampled until it exits (the last 100 ms are missed).
  let cpu = 0;
  const sampler = setInterval(() => {
    cpu = processCpuSeconds(child.pid!) ?? cpu;
  }, 100);
  const [code] = (await once(child, 'exit')) as [number | null];
  const wall = Number(((performance.now() - spawnedAt) / 1000).toFixed(2));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`regwatch ${args.join(' ')} exited ${code}:\n${text.slice(-3000)}`);
  const timeline: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!TIMELINE.test(line)) continue;
    const { time, msg, level: _l, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
    timeline.push({ at_s: Number(((Number(time) - spawned) / 1000).toFixed(2)), msg, ...rest });
  }
  const pg1 = bench.postgresCpuByProcess() ?? {};
  const cpuSeconds: Record<string, number> = { command: cpu };
  for (const [kind, v] of Object.entries(pg1)) {
    const d = Number((v - (pg0[kind] ?? 0)).toFixed(2));
    if (d > 0) cpuSeconds[`pg ${kind}`] = d;
  }
  // What the page cache lost during the run (DAMON's pageouts) and read back from the disk.
  const pageCache = pageCacheDelta(cache0, pageCacheSample());
  lastCli = { seconds: wall, timeline, cpu_seconds: cpuSeconds, pg_io: pgIoDelta(io0, await samplePgIo(db), n), page_cache: pageCache };
  return text.trim().split('\n').at(-1) ?? '';
}

try {
  if (MORE_DAYS > 0) {
    if (!REUSE) throw new Error('--more-days runs on a kept database: add --reuse');
    await moreDays(MORE_DAYS);
  }
  const feedAccount = MORE_DAYS > 0 ? null : REUSE ? await keptFeedAccount() : await loadAndDay();

  const {
    rows: [size],
  } = await sql<{ db: string; companies: string }>`
    SELECT pg_size_pretty(pg_database_size(current_database())) AS db, pg_size_pretty(pg_total_relation_size('companies')) AS companies`.execute(
    db,
  );
  out({ phase: 'disk', database: size!.db, companies_with_indexes: size!.companies });
  if (feedAccount === null || REGISTRY_ONLY) throw new StopAfterRegistry();

  // -------------------------------------------------------------------------------------------
  // Two API and two worker processes.

  const ports = [await freePortOf(), await freePortOf()];
  t0 = performance.now();
  const apis = ports.map((port) => serve({ ROLE: 'api', PORT: String(port) }, API_NODE_ARGS));

  const workers = [serve({ ROLE: 'worker' }), serve({ ROLE: 'worker' })];
  const builds = await Promise.all(apis.map((a) => a.indexBuilt));
  out({ phase: 'api start', seconds_to_both_indexes: seconds(t0), index_builds: builds });

  const accounts = await Promise.all(Array.from({ length: ACCOUNTS }, (_, i) => createAccountRow(`load${i}`)));
  const bases = ports.map((p) => `http://127.0.0.1:${p}`);

  // Search latency, one request at a time, alternating the API processes: first while each API
  // process still builds its batch-matching index (src/modules/match/engine.ts: started with the
  // search index's build when the HTTP service is ready, read on the main thread through a cursor
  // that parses every snapshot in PostgreSQL; 5–8 minutes at 4.1 million), then again once both
  // have it (the service's steady state).
  // The second pass sends each combination to the other API process, so that no answer comes from
  // an index's answer cache.
  const workload = await buildWorkload(bench.handle, 1200);
  const pids = { api1: apis[0]!.child.pid!, api2: apis[1]!.child.pid!, worker1: workers[0]!.child.pid!, worker2: workers[1]!.child.pid! };
  const searchLatency = async (phase: string, shift: number) => {
    out({ phase: `before ${phase}`, loadavg: loadavg().map((x) => Number(x.toFixed(2))), jobs: await pendingJobs() });
    const cpu0 = cpuSample(pids);
    const latencies: number[] = [];
    for (const [i, w] of workload.entries()) {
      const t = performance.now();
      const res = await fetch(`${bases[(i + shift) % 2]}/api/v1/companies/search?${queryString(w.query)}`, {
        headers: { authorization: `Bearer ${accounts[i % ACCOUNTS]!.token}` },
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`search ${queryString(w.query)}: ${res.status}`);
      latencies.push(performance.now() - t);
    }
    out({
      phase,
      queries: workload.length,
      ms: summary(latencies),
      cpu_seconds: cpuSince(cpu0, pids),
      match_index_built: apis.map((a) => a.matchBuilt.done),
      slowest: latencies
        .map((ms, i) => ({ ms: Math.round(ms), query: queryString(workload[i]!.query) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 15),
      jobs_after: await pendingJobs(),
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
    });
  };
  await searchLatency('search latency (match indexes building)', 0);
  t0 = performance.now();
  const matchBuilds = await Promise.all(apis.map((a) => a.matchBuilt.promise));
  out({ phase: 'match indexes built', seconds_waited: seconds(t0), match_builds: matchBuilds });
  await searchLatency('search latency', 1);

  // Throughput: 50 connections, 25 on each API process, each request with one of 200 accounts' tokens.
  const { rows: nips } = await sql<{ value: string }>`
    SELECT lpad((key - 10000000000)::text, 10, '0') AS value FROM company_identifiers WHERE key >= 10000000000 AND key < 20000000000 ORDER BY key LIMIT 5000`.execute(
    db,
  );
  const snapshotBodies = nips.map((r) => JSON.stringify({ identifier_type: 'NIP', identifier_value: r.value }));
  const searchPaths = workload.map((w) => `/api/v1/companies/search?${queryString(w.query)}`);
  for (const kind of ['snapshot', 'search'] as const) {
    const cpu0 = cpuSample(pids);
    const results = await Promise.all(
      bases.map((url, b) =>
        runLoad({
          url,
          connections: 25,
          durationSeconds: SECONDS,
          method: kind === 'snapshot' ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${accounts[b]!.token}`, 'content-type': 'application/json' },
          tokens: accounts.filter((_, i) => i % 2 === b).map((a) => a.token),
          ...(kind === 'snapshot' ? { path: '/api/v1/companies/snapshot', bodies: snapshotBodies } : { paths: searchPaths }),
        }),
      ),
    );
    out({
      phase: `${kind} throughput`,
      connections: 50,
      accounts: ACCOUNTS,
      requests_per_second: results.reduce((a, r) => a + r.requestsPerSecond, 0),
      p50_ms: Math.max(...results.map((r) => r.latency.p50)),
      p99_ms: Math.max(...results.map((r) => r.latency.p99)),
      non2xx: results.reduce((a, r) => a + r.non2xx, 0),
      errors: results.reduce((a, r) => a + r.errors, 0),
      cpu_seconds: cpuSince(cpu0, pids),
    });
  }

  // The feed of the account watching 10,000 companies: its first pages, and filtered by type.
  const feedMs: number[] = [];
  const feedPaths = [
    '/api/v1/watchlist/events',
    '/api/v1/watchlist/events?page=2',
    `/api/v1/watchlist/events?from_date=${DAY2}&to_date=${DAY2}`,
    '/api/v1/watchlist/events?per_page=100',
  ];
  let feedTotal = 0;
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    const res = await fetch(`${bases[i % 2]}${feedPaths[i % feedPaths.length]}`, {
      headers: { authorization: `Bearer ${feedAccount.token}` },
    });
    const body = (await res.json()) as { meta?: { total?: number } };
    if (res.status !== 200) throw new Error(`feed: ${res.status} ${JSON.stringify(body)}`);
    feedTotal = Math.max(feedTotal, body.meta?.total ?? 0);
    feedMs.push(performance.now() - t);
  }
  out({ phase: 'feed', watched: WATCHED, events_in_feed: feedTotal, ms: summary(feedMs) });

  out({
    phase: 'memory',
    processes: [
      ...apis.map((a, i) => ({ role: `api ${i + 1}`, ...memoryOf(a.child.pid!) })),
      ...workers.map((w, i) => ({ role: `worker ${i + 1}`, ...memoryOf(w.child.pid!) })),
    ],
  });
} catch (e) {
  if (!(e instanceof StopAfterRegistry)) throw e;
} finally {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null) return;
      c.kill('SIGTERM');
      await once(c, 'exit');
    }),
  );
  await bench.dispose();
}

/** The load and the 1 % day through the CLI; the account watching 10,000 companies, made between them. */
async function loadAndDay(): Promise<{ id: string; token: string }> {
  const loadSummary = await cli(['daily', '--date', EPOCH, '--source', `file:${loadFile}`], COMPANIES);
  const { seconds: loadSeconds, ...load } = lastCli;
  out({
    phase: 'load',
    seconds: loadSeconds,
    per_second: Math.round(COMPANIES / loadSeconds),
    summary: loadSummary,
    ...load,
    loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  });

  // The account watching 10,000 companies watches from before the day, so the day's events reach its feed.
  const feedAccount = await createAccountRow('feed');
  const { rows: watchIds } = await sql<{ id: string }>`SELECT id::text FROM companies ORDER BY id LIMIT ${WATCHED * 50}`.execute(db);
  const step = Math.max(1, Math.floor(watchIds.length / WATCHED));
  await db.transaction().execute((trx) =>
    watchCompanies(
      trx,
      feedAccount.id,
      watchIds
        .filter((_, i) => i % step === 0)
        .slice(0, WATCHED)
        .map((r) => r.id),
      new Date(`${EPOCH}T12:00:00Z`),
    ),
  );

  await oneDay('detection', DAY2, dayFile);
  return feedAccount;
}

/** One 1 % day through the CLI after a CHECKPOINT (as a production day finds the previous day's data), with its rate. */
async function oneDay(phase: string, date: string, file: string): Promise<void> {
  await sql`CHECKPOINT`.execute(db);
  // The day's updates of companies that stayed on their page with no index entry (HOT): each
  // other one writes an entry in every index of the table.
  const tableUpdates = async () =>
    (
      await sql<{ upd: string; hot: string }>`
        SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables WHERE relname = 'companies'`.execute(db)
    ).rows[0]!;
  const upd0 = await tableUpdates();
  if (statementStats) await sql`SELECT pg_stat_statements_reset()`.execute(db);
  const lines = readFileSync(file, 'utf8').split('\n').length - 1;
  const daySummary = await cli(['daily', '--date', date, '--source', `file:${file}`], lines);
  const { seconds: daySeconds, ...day } = lastCli;
  const {
    rows: [run],
  } = await sql<{ updated: number; new: number; events: string }>`
    SELECT updated_count AS updated, new_count AS new, events_count::text AS events FROM daily_runs WHERE run_date = ${date}::date AND kind = 'daily'`.execute(
    db,
  );
  // The backends' table statistics reach the shared ones when they exit or within a second.
  await new Promise((r) => setTimeout(r, 1200));
  const upd1 = await tableUpdates();
  if (statementStats) await printStatementStats(db, `day ${date} (µs a changed company)`, run!.updated + run!.new);
  out({
    phase,
    date,
    seconds: daySeconds,
    companies_updates: { all: Number(upd1.upd) - Number(upd0.upd), hot: Number(upd1.hot) - Number(upd0.hot) },
    changed: run!.updated + run!.new,
    changed_per_second: Math.round((run!.updated + run!.new) / daySeconds),
    events: Number(run!.events),
    summary: daySummary,
    ...day,
    loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  });
}

/** `--more-days N`: the synthetic registry's next days after the kept database's last, two at a time (a 1 % day each). */
async function moreDays(n: number): Promise<void> {
  const {
    rows: [last],
  } = await sql<{ d: string }>`SELECT max(run_date)::text AS d FROM daily_runs WHERE kind = 'daily'`.execute(db);
  let k = Math.round((Date.parse(`${last!.d}T00:00:00Z`) - Date.parse(`${EPOCH}T00:00:00Z`)) / 86_400_000);
  for (let i = 0; i < n; i++) {
    const [first, second] = [day(k + 1), day(k + 2)];
    const file = join(DIR, `day-${COMPANIES}-${second}.ndjson`);
    if (!existsSync(file)) {
      const t = performance.now();
      await writeDayFile(file, first, second);
      out({ phase: 'day file', file, seconds: seconds(t) });
    }
    await oneDay('more days', second, file);
    k += 2;
  }
}

/** The kept database's account watching 10,000 companies, with a new token (tokens are kept hashed). */
async function keptFeedAccount(): Promise<{ id: string; token: string }> {
  const {
    rows: [account],
  } = await sql<{ id: string }>`SELECT id::text FROM accounts WHERE name = 'feed' ORDER BY id LIMIT 1`.execute(db);
  const token = newTokenSecret('master');
  // One live Master Token an account: the last run's goes (its secret was not kept).
  await sql`UPDATE api_tokens SET revoked_at = now() WHERE account_id = ${account!.id}::bigint AND kind = 'master' AND revoked_at IS NULL`.execute(
    db,
  );
  await sql`INSERT INTO api_tokens (account_id, token_ref, kind, name, secret_hash) VALUES (${account!.id}::bigint, ${newRef()}, 'master', 'bench', ${hashSecret(token)})`.execute(
    db,
  );
  out({ phase: 'reuse', database: `regwatch_scale_${COMPANIES}` });
  return { id: account!.id, token };
}

// ---------------------------------------------------------------------------------------------

function serve(extra: Record<string, string>, nodeArgs: string[] = []) {
  // API processes run as deployed: with V8's memory reducer off and its helper threads sized to the cores (src/lib/collector.ts).
  const child = spawn(process.execPath, [...API_NODE_OPTIONS, ...nodeArgs, BIN, 'serve'], {
    env: { ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const log = createWriteStream(join(LOGS, `${extra.ROLE}-${extra.PORT ?? children.length}.log`));
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.on('close', () => log.end());
  let buffer = '';
  const lines: ((o: Record<string, unknown>) => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.includes(' index built')) continue;
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        for (const f of lines) f(o);
      } catch {
        /* not JSON */
      }
    }
  });
  const built = (msg: string) => {
    const state = { done: false, promise: null as unknown as Promise<Record<string, unknown>> };
    state.promise = new Promise<Record<string, unknown>>((resolve, reject) => {
      lines.push((o) => {
        if (o.msg !== msg || typeof o.companies !== 'number') return;
        state.done = true;
        resolve({ companies: o.companies, ms: o.ms, mb: o.mb });
      });
      child.on('exit', (code) => reject(new Error(`regwatch serve ${JSON.stringify(extra)} exited ${code}`)));
    });
    state.promise.catch(() => {});
    return state;
  };
  const indexBuilt = built('search index built').promise;
  const matchBuilt = extra.ROLE === 'api' ? built('match index built') : null;
  return { child, indexBuilt, matchBuilt: matchBuilt! };
}

/** CPU seconds (user + system) of each process so far, and of the embedded cluster's processes by kind. */
function cpuSample(pids: Record<string, number>): Record<string, number> {
  const sample: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const seconds = processCpuSeconds(pid);
    if (seconds === null) throw new Error(`${name} (${pid}) is gone`);
    sample[name] = seconds;
  }
  for (const [kind, seconds] of Object.entries(bench.postgresCpuByProcess() ?? {})) sample[`pg ${kind}`] = seconds;
  return sample;
}

function cpuSince(before: Record<string, number>, pids: Record<string, number>): Record<string, number> {
  const now = cpuSample(pids);
  return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, Number((v - (before[k] ?? 0)).toFixed(2))]));
}

/** graphile-worker's jobs not yet done, by task (the workers' backlog). */
async function pendingJobs(): Promise<Record<string, number>> {
  const { rows } = await sql<{ task: string; n: number }>`
    SELECT t.identifier AS task, count(*)::int AS n
      FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
     GROUP BY t.identifier`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.task, r.n]));
}

function memoryOf(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), peak_rss_mb: Math.round(kb('VmHWM') / 1024) };
}

async function freePortOf(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  return port;
}

/** An account with a Master Token and plenty of credits, written directly (no mail), as bench/watchlist-feed.ts does. */
async function createAccountRow(label: string): Promise<{ id: string; token: string }> {
  const token = newTokenSecret('master');
  const {
    rows: [account],
  } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status, initialized_at) VALUES (${newRef()}, ${`${label}-${newRef().toLowerCase()}@bench.test`}, ${label}, 'initialized', now())
    RETURNING id::text`.execute(db);
  await sql`INSERT INTO wallets (account_id, balance, total_purchased) VALUES (${account!.id}::bigint, 0, 0)`.execute(db);
  await applyLedgerEntry(db, { accountId: account!.id, type: 'deposit', amount: 100_000_000, description: 'benchmark credits' });
  await sql`INSERT INTO api_tokens (account_id, token_ref, kind, name, secret_hash) VALUES (${account!.id}::bigint, ${newRef()}, 'master', 'bench', ${hashSecret(token)})`.execute(
    db,
  );
  return { id: account!.id, token };
}
