/**
 * Where the serving thread's time goes during a full build of the search index in a worker
 * thread (docs/benchmarks.md, "Search freshness"): builds the index of the database's companies
 * `--builds` times in this process, with no searches, and reports every stretch between two ticks
 * of a 1 ms timer in which this thread ran over `--over` ms of its own CPU time
 * (/proc/thread-self/schedstat), and the longest wall-clock gap. Run it with `--cpu-prof` to
 * attribute each stretch (its fromUs/toUs are the profile's clock).
 *
 * Run it with V8's memory reducer off, as an API process runs (src/lib/collector.ts; without
 * `--no-memory-reducer` it is on, to compare: the first line says which). Each build's line and a
 * last one after `--settle` seconds idle give the process's memory (RSS, V8 heap, external memory:
 * the index's buffers).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench_freshness \
 *     node --no-memory-reducer --import tsx bench/search-build-pauses.ts [--builds 2] [--over 5] [--settle 20] [--match both]
 *
 * `--match both` builds the batch-matching index at the same time (src/modules/match/engine.ts),
 * as an API process does at start.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pino from 'pino';
import { createDatabase } from '../src/db/database.ts';
import { memoryReducerOff } from '../src/lib/collector.ts';
import { createCompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { createMatchEngine } from '../src/modules/match/engine.ts';
import { argValue, DEFAULT_BENCH_URL } from './search-fixtures.ts';

const url = process.env.DATABASE_URL || DEFAULT_BENCH_URL;
const builds = Number(argValue('builds', '2'));
const over = Number(argValue('over', '5'));
const memoryReducer = memoryReducerOff() ? 'off' : 'on';
const settle = Number(argValue('settle', '20'));
// --match both: the batch-matching index built beside the search index, as an API process builds both at start.
const match = argValue('match', 'none');
const handle = createDatabase(url, { max: 4 });
const print = (o: object) => console.log(JSON.stringify(o));

function memory(): { rss_mb: number; heap_mb: number; external_mb: number } {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 2 ** 20);
  return { rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed), external_mb: mb(m.external + m.arrayBuffers) };
}

function threadCpuNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
}

function watch(): {
  stop(): {
    stretches: { atMs: number; wallMs: number; cpuMs: number; fromUs: number; toUs: number }[];
    maxWallMs: number;
    maxCpuMs: number;
  };
} {
  const t0 = performance.now();
  let lastT = t0;
  let lastCpu = threadCpuNs();
  let lastUs = Number(process.hrtime.bigint() / 1000n);
  let maxWall = 0;
  let maxCpu = 0;
  const stretches: { atMs: number; wallMs: number; cpuMs: number; fromUs: number; toUs: number }[] = [];
  const timer = setInterval(() => {
    const t = performance.now();
    const us = Number(process.hrtime.bigint() / 1000n);
    const cpu = threadCpuNs();
    const wall = t - lastT;
    const own = (cpu - lastCpu) / 1e6;
    maxWall = Math.max(maxWall, wall);
    maxCpu = Math.max(maxCpu, own);
    // fromUs/toUs: the monotonic clock of a --cpu-prof profile's timestamps, to find the stretch's samples.
    if (own > over)
      stretches.push({
        atMs: Math.round(lastT - t0),
        wallMs: Math.round(wall * 10) / 10,
        cpuMs: Math.round(own * 10) / 10,
        fromUs: lastUs,
        toUs: us,
      });
    lastT = t;
    lastUs = us;
    lastCpu = cpu;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return { stretches, maxWallMs: Math.round(maxWall * 10) / 10, maxCpuMs: Math.round(maxCpu * 10) / 10 };
    },
  };
}

try {
  const idle = watch();
  await new Promise((r) => setTimeout(r, 5_000));
  print({ phase: 'idle 5 s', memory_reducer: memoryReducer, ...idle.stop(), ...memory(), loadavg: loadavg()[0] });
  for (let i = 0; i < builds; i++) {
    const engine = createCompanySearchEngine({ db: handle.db, logger: pino({ level: 'warn' }), followEveryMs: 0 });
    const matchEngine = match === 'both' ? createMatchEngine({ db: handle.db, logger: pino({ level: 'warn' }) }) : null;
    const w = watch();
    const cpu0 = process.cpuUsage();
    await Promise.all([engine.refresh(), matchEngine?.refresh()]);
    await matchEngine?.stop();
    const r = w.stop();
    const cpu = process.cpuUsage(cpu0);
    print({
      phase: `build ${i + 1}`,
      companies: engine.status().companies,
      build_ms: engine.status().buildMs,
      match_build_ms: matchEngine?.status().buildMs,
      process_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
      ...r,
      ...memory(),
      loadavg: loadavg()[0],
    });
    await engine.stop();
  }
  const last = watch();
  await new Promise((r) => setTimeout(r, settle * 1000));
  print({ phase: `idle ${settle} s after the builds`, ...last.stop(), ...memory(), loadavg: loadavg()[0] });
} finally {
  await handle.close();
}
