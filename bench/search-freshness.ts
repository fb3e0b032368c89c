/**
 * Search freshness at registry scale (docs/benchmarks.md, "Search freshness"): with the benchmark
 * database's companies indexed in this process (the search engine as the API runs it), daily runs
 * of `--changed` changed companies each are run by the real CLI (`regwatch daily --source file:`,
 * a separate process), and the time from each run's completion (daily_runs.finished_at, and the
 * process's exit) to the first search that reflects it is measured; so is the longest pause of this
 * process's event loop (perf_hooks monitorEventLoopDelay) while the index is built, while a delta is
 * applied, and during the rebuild a run above the delta threshold starts. A search runs every
 * 10 ms throughout, as requests would.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench_freshness \
 *     node --no-memory-reducer --import tsx bench/search-freshness.ts --changed 10000,100000 [--compare-thread true]
 *
 * The database: `regwatch seed --synthetic 1000000 --seed 42 --date 2026-11-01` (see docs/benchmarks.md).
 * `--compare-thread true` first builds the index in this thread too (the build before the worker).
 * Run it with V8's memory reducer off (`node --no-memory-reducer`), as an API process runs
 * (src/lib/collector.ts); the first line says whether it is.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { memoryReducerOff } from '../src/lib/collector.ts';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';
import { argValue, DEFAULT_BENCH_URL, mb } from './search-fixtures.ts';

const url = process.env.DATABASE_URL || DEFAULT_BENCH_URL;
const sizes = argValue('changed', '10000,100000').split(',').map(Number);
const compareThread = argValue('compare-thread', 'false') === 'true';
const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const print = (o: object) => console.log(JSON.stringify(o));
print({
  started: new Date().toISOString(),
  memory_reducer: memoryReducerOff() ? 'off' : 'on',
  cpus: cpus().length,
  loadavg_1m_5m_15m: load(),
  sizes,
});

const handle = createDatabase(url, { max: 6 });
const dir = mkdtempSync(join(tmpdir(), 'regwatch-freshness-bench-'));
const bin = join(import.meta.dirname, '..', 'bin', 'regwatch.js');
const logger = pino({ level: 'warn' });

/** Nanoseconds this thread has run on a CPU (Linux; null elsewhere). */
function threadCpuNs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/** CPU time (ms) and nice value of each of this process's threads (Linux /proc; empty elsewhere). */
function threadsCpu(): Map<string, { ms: number; nice: number }> {
  const out = new Map<string, { ms: number; nice: number }>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14-15 (utime, stime) and 19 (nice) of proc(5), counted from the state (field 3).
      out.set(tid, { ms: ((Number(f[11]) + Number(f[12])) * 1000) / 100, nice: Number(f[16]) });
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The threads that ran between two readings: CPU ms by nice value and by thread (main thread first). */
function threadsUsed(before: Map<string, { ms: number; nice: number }>, after: Map<string, { ms: number; nice: number }>) {
  const byNice: Record<string, number> = {};
  const busiest: { tid: string; ms: number; nice: number; main: boolean }[] = [];
  for (const [tid, a] of after) {
    const ms = a.ms - (before.get(tid)?.ms ?? 0);
    if (ms <= 0) continue;
    byNice[`nice_${a.nice}`] = (byNice[`nice_${a.nice}`] ?? 0) + ms;
    busiest.push({ tid, ms, nice: a.nice, main: tid === String(process.pid) });
  }
  return { cpu_ms_by_nice: byNice, threads: busiest.sort((x, y) => y.ms - x.ms).slice(0, 8) };
}

/**
 * The longest event-loop pauses while `run` runs, with a search every 10 ms (as requests would
 * come). On a shared machine a pause is also time spent waiting for a core; `maxCpuGapMs` counts
 * only this thread's own CPU time between two ticks of a 1 ms timer (an upper bound of its
 * longest task), which is what this process's code is answerable for; `maxCpuGapNoSearchMs` the
 * same over the ticks in which no search ran (a search's own cost is the search benchmark's
 * subject; what is left is the build's, the delta's and the follower's work).
 */
async function measured<T>(
  engine: CompanySearchEngine,
  run: (mark: (phase: 'start' | 'end') => void) => Promise<T>,
): Promise<{
  result: T;
  maxPauseMs: number;
  p99PauseMs: number;
  maxCpuGapMs: number | null;
  maxCpuGapNoSearchMs: number | null;
  /**
   * Between `mark('start')` and `mark('end')` (a daily run's exit and the first search reflecting it: the rebuild or
   * delta alone): the 1 ms timer's longest wall-clock gap, with and without a search in it.
   */
  afterMark: {
    maxGapMs: number;
    maxGapNoSearchMs: number;
    gapsOver15Ms: { monoMs: number; gapMs: number; cpuMs: number | null; search: boolean }[];
    /** This process's threads' CPU over the window, by nice value (the build's worker thread runs at 19). */
    cpu_ms_by_nice?: Record<string, number>;
    threads?: { tid: string; ms: number; nice: number; main: boolean }[];
  } | null;
  searches: number;
  maxSearchMs: number;
}> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  let lastCpu = threadCpuNs();
  let maxCpuGapNs = 0;
  let maxCpuGapNoSearchNs = 0;
  let searchesAtTick = 0;
  let lastTick = performance.now();
  let marked = false;
  let maxGapAfter = 0;
  let maxGapNoSearchAfter = 0;
  const gapsOver15: { monoMs: number; gapMs: number; cpuMs: number | null; search: boolean }[] = [];
  let threadsAtMark = threadsCpu();
  let threadsMarked: ReturnType<typeof threadsUsed> | null = null;
  const ticker = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuNs();
    const searched = searches !== searchesAtTick;
    if (cpu !== null && lastCpu !== null) {
      maxCpuGapNs = Math.max(maxCpuGapNs, cpu - lastCpu);
      if (!searched) maxCpuGapNoSearchNs = Math.max(maxCpuGapNoSearchNs, cpu - lastCpu);
    }
    if (marked) {
      const gap = now - lastTick;
      maxGapAfter = Math.max(maxGapAfter, gap);
      if (!searched) maxGapNoSearchAfter = Math.max(maxGapNoSearchAfter, gap);
      // monoMs: CLOCK_MONOTONIC at the gap's end, to find it in a `perf sched record -k mono` trace.
      if (gap > 15)
        gapsOver15.push({
          monoMs: Number(process.hrtime.bigint() / 1000n) / 1000,
          gapMs: Math.round(gap * 10) / 10,
          cpuMs: cpu === null || lastCpu === null ? null : Math.round((cpu - lastCpu) / 1e5) / 10,
          search: searched,
        });
    }
    searchesAtTick = searches;
    lastCpu = cpu;
    lastTick = now;
  }, 1);
  const filters = parseSearchQuery({ city: 'warszawa', q: 'sp' }).filters;
  let searches = 0;
  let maxSearchMs = 0;
  let stop = false;
  const requests = (async () => {
    while (!stop) {
      const t0 = performance.now();
      // Before the first build a search runs in SQL and may hit its statement timeout: not this benchmark's subject.
      await engine.search(filters, 0, 20).catch(() => {});
      maxSearchMs = Math.max(maxSearchMs, performance.now() - t0);
      searches++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  h.enable();
  try {
    let everMarked = false;
    const result = await run((phase) => {
      if (phase === 'start') threadsAtMark = threadsCpu();
      else threadsMarked = threadsUsed(threadsAtMark, threadsCpu());
      marked = phase === 'start';
      everMarked ||= marked;
    });
    if (marked) threadsMarked = threadsUsed(threadsAtMark, threadsCpu());
    const maxCpuGapMs = lastCpu === null ? null : Math.round(maxCpuGapNs / 1e5) / 10;
    const maxCpuGapNoSearchMs = lastCpu === null ? null : Math.round(maxCpuGapNoSearchNs / 1e5) / 10;
    return {
      result,
      maxPauseMs: Math.round(h.max / 1e5) / 10,
      p99PauseMs: Math.round(h.percentile(99) / 1e5) / 10,
      maxCpuGapMs,
      maxCpuGapNoSearchMs,
      afterMark: everMarked
        ? {
            maxGapMs: Math.round(maxGapAfter * 10) / 10,
            maxGapNoSearchMs: Math.round(maxGapNoSearchAfter * 10) / 10,
            gapsOver15Ms: gapsOver15,
            ...(threadsMarked as ReturnType<typeof threadsUsed> | null),
          }
        : null,
      searches,
      maxSearchMs: Math.round(maxSearchMs),
    };
  } finally {
    clearInterval(ticker);
    h.disable();
    stop = true;
    await requests;
  }
}

function regwatchDaily(date: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string; exitedAt: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'daily', '--date', date, '--source', `file:${file}`], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', REGISTRY_SOURCES: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr, exitedAt: Date.now() }));
  });
}

/**
 * `n` companies picked at random, renamed with a word no company has yet. Read through a cursor
 * 500 at a time: the harness's own garbage then dies young instead of leaving this process an
 * old-space collection to run during the measured run that follows.
 */
async function writeChangedDay(n: number, word: string): Promise<string> {
  const path = join(dir, `${word}.ndjson`);
  const out = createWriteStream(path);
  let written = 0;
  await handle.db.transaction().execute(async (trx) => {
    await sql`DECLARE changed_day NO SCROLL CURSOR FOR
      SELECT snapshot AS s FROM companies TABLESAMPLE SYSTEM (${Math.min(100, (n / 1_000_000) * 300)}) ORDER BY random() LIMIT ${n}`.execute(
      trx,
    );
    for (;;) {
      const { rows } = await sql<{ s: string }>`FETCH FORWARD 500 FROM changed_day`.execute(trx);
      if (rows.length === 0) break;
      for (const r of rows) {
        const s = JSON.parse(r.s) as CompanySnapshot;
        for (const p of s.profiles) p.name = `${p.name} ${word}`;
        if (!out.write(JSON.stringify(s) + '\n')) await once(out, 'drain');
      }
      written += rows.length;
    }
  });
  out.end();
  await once(out, 'finish');
  if (written < n) throw new Error(`only ${written} companies sampled`);
  return path;
}

try {
  await migrateToLatest(handle.db, handle.pool);
  const {
    rows: [last],
  } = await sql<{ d: string }>`SELECT to_char(max(run_date), 'YYYY-MM-DD') AS d FROM daily_runs`.execute(handle.db);

  if (compareThread) {
    const thread = createCompanySearchEngine({ db: handle.db, logger, buildIn: 'thread', followEveryMs: 0 });
    const r = await measured(thread, () => thread.refresh());
    print({
      build: 'thread',
      companies: thread.status().companies,
      build_ms: thread.status().buildMs,
      max_pause_ms: r.maxPauseMs,
      p99_pause_ms: r.p99PauseMs,
      max_cpu_gap_ms: r.maxCpuGapMs,
      max_cpu_gap_no_search_ms: r.maxCpuGapNoSearchMs,
      searches: r.searches,
      max_search_ms: r.maxSearchMs,
      loadavg: load(),
    });
    await thread.stop();
  }

  const engine = createCompanySearchEngine({ db: handle.db, logger });
  const built = await measured(engine, async (mark) => {
    mark('start');
    engine.start();
    await engine.refresh();
  });
  const s = engine.status();
  print({
    build: 'worker',
    companies: s.companies,
    build_ms: s.buildMs,
    read_ms: s.buildReadMs,
    index_mb: mb(s.bytes ?? 0),
    rss_mb: mb(process.memoryUsage().rss),
    data_as_of: s.dataAsOf,
    max_pause_ms: built.maxPauseMs,
    p99_pause_ms: built.p99PauseMs,
    max_cpu_gap_ms: built.maxCpuGapMs,
    max_cpu_gap_no_search_ms: built.maxCpuGapNoSearchMs,
    timer: built.afterMark,
    searches: built.searches,
    max_search_ms: built.maxSearchMs,
    loadavg: load(),
  });

  // The noise floor: the same searches, from the index, with nothing else to do (the machine is shared).
  const base = await measured(engine, (mark) => {
    mark('start');
    return new Promise((r) => setTimeout(r, 10_000));
  });
  print({
    baseline: 'index idle for 10 s',
    max_pause_ms: base.maxPauseMs,
    p99_pause_ms: base.p99PauseMs,
    max_cpu_gap_ms: base.maxCpuGapMs,
    max_cpu_gap_no_search_ms: base.maxCpuGapNoSearchMs,
    timer: base.afterMark,
    searches: base.searches,
    max_search_ms: base.maxSearchMs,
    loadavg: load(),
  });

  let day = new Date(`${last!.d}T00:00:00Z`);
  for (const n of sizes) {
    day = new Date(day.getTime() + 86_400_000);
    const date = day.toISOString().slice(0, 10);
    const word = `fresh${n}x${Date.now().toString(36)}`;
    const file = await writeChangedDay(n, word);
    const filters = parseSearchQuery({ q: word }).filters;
    const builtAt = engine.status().builtAt;
    let readAhead = 0;
    const r = await measured(engine, async (mark) => {
      const running = regwatchDaily(date, file);
      const watch = setInterval(() => {
        readAhead = Math.max(readAhead, engine.status().readAhead);
      }, 50);
      const run = await running;
      mark('start');
      clearInterval(watch);
      if (run.code !== 0) throw new Error(`regwatch daily failed: ${run.stderr}`);
      const {
        rows: [done],
      } = await sql<{ t: Date }>`SELECT finished_at AS t FROM daily_runs WHERE run_date = ${date}::date`.execute(handle.db);
      let total: number;
      for (;;) {
        const a = await engine.search(filters, 0, 20);
        if (a.dataAsOf === date) {
          total = a.total;
          break;
        }
        if (a.total !== 0) throw new Error(`a mix: ${a.total} found as of ${a.dataAsOf}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const reflected = Date.now();
      mark('end');
      // Every renamed company that is ACTIVE (the default filter), as PostgreSQL counts them.
      const {
        rows: [expected],
      } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM companies WHERE status = 'ACTIVE' AND name_folded LIKE ${`%${word}%`}`.execute(handle.db);
      if (total !== expected!.n) throw new Error(`the index found ${total} of ${expected!.n} as of ${date}`);
      return {
        summary: run.stdout.trim(),
        found: total,
        fromFinishedMs: reflected - done!.t.getTime(),
        fromExitMs: reflected - run.exitedAt,
      };
    });
    const after = engine.status();
    print({
      changed: n,
      date,
      run: r.result.summary,
      found_active: r.result.found,
      applied_as: after.builtAt === builtAt ? 'delta' : 'rebuild',
      ...(after.builtAt === builtAt ? {} : { rebuild_ms: after.buildMs, rebuild_read_ms: after.buildReadMs }),
      reflected_after_finished_ms: r.result.fromFinishedMs,
      reflected_after_exit_ms: r.result.fromExitMs,
      read_ahead_before_exit: readAhead,
      max_pause_ms: r.maxPauseMs,
      p99_pause_ms: r.p99PauseMs,
      max_cpu_gap_ms: r.maxCpuGapMs,
      max_cpu_gap_no_search_ms: r.maxCpuGapNoSearchMs,
      after_exit: r.afterMark,
      searches: r.searches,
      max_search_ms: r.maxSearchMs,
      delta: after.delta,
      loadavg: load(),
    });
  }
  await engine.stop();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await handle.close();
}
