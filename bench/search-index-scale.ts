/**
 * The search index alone at registry scale: the companies of the benchmark database, copied
 * `--factor` times (4.1 by default: 4,100,000 companies from 1,000,000, every value distribution
 * kept), indexed in this process, then asked the search workload of bench/search-api.ts. Shows
 * the index's memory and its time per query at the stated scale without loading 4.1 million
 * companies into PostgreSQL.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench node --max-old-space-size=6144 --import tsx bench/search-index-scale.ts \
 *     [--factor 4.1] [--queries 1200] [--slowest 15] [--cpu-prof FILE]
 *
 * `--slowest N` lists the N slowest queries (kind, query, total); `--cpu-prof FILE` writes a V8
 * CPU profile of the measured pass.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { cpus, loadavg } from 'node:os';
import { createDatabase } from '../src/db/database.ts';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { readIndexRowsInOrder } from '../src/modules/companies/repo.ts';
import { SearchIndexBuilder } from '../src/modules/companies/search-index-builder.ts';
import type { IndexRow } from '../src/modules/companies/search-index-rows.ts';
import { argValue, buildWorkload, DEFAULT_BENCH_URL, mb, summary } from './search-fixtures.ts';

const factor = Number(argValue('factor', '4.1'));
const size = Number(argValue('queries', '1200'));
const slowest = Number(argValue('slowest', '15'));
const profileTo = argValue('cpu-prof', '');
const session = new Session();
session.connect();
const inspect = (method: string) => new Promise<unknown>((ok, fail) => session.post(method, {}, (e, r) => (e ? fail(e) : ok(r))));
console.log(
  JSON.stringify({ started: new Date().toISOString(), cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }),
);

const handle = createDatabase(process.env.DATABASE_URL || DEFAULT_BENCH_URL, { max: 4 });
try {
  const rows: IndexRow[] = [];
  await handle.db.transaction().execute((trx) =>
    readIndexRowsInOrder(trx, 20_000, async (chunk) => {
      for (const r of chunk) rows.push(r);
    }),
  );
  const maxId = rows.reduce((m, r) => Math.max(m, Number(r.id)), 0);
  const target = Math.round(rows.length * factor);

  const t0 = performance.now();
  const builder = new SearchIndexBuilder();
  for (let i = 0; i < target; i++) {
    const r = rows[i % rows.length]!;
    const copy = Math.floor(i / rows.length);
    builder.add(copy === 0 ? r : { ...r, id: String(Number(r.id) + copy * (maxId + 1)) });
  }
  rows.length = 0;
  const index = await builder.build();
  const buildMs = performance.now() - t0;
  globalThis.gc?.();
  console.log(
    JSON.stringify({
      companies: index.size,
      build_ms: Math.round(buildMs),
      index_mb: mb(index.byteSize),
      rss_mb: mb(process.memoryUsage().rss),
      heap_mb: mb(process.memoryUsage().heapUsed),
    }),
  );

  const workload = await buildWorkload(handle, size);
  const wall: number[] = [];
  const cpu: number[] = [];
  // The first ask of each query (its transient arrays may land on memory the process has not touched yet) and its system time (page faults).
  const firstWall: number[] = [];
  const firstSys: number[] = [];
  const sys: number[] = [];
  const byKind = new Map<string, number[]>();
  const each: { ms: number; kind: string; query: Record<string, string>; total: number }[] = [];
  if (profileTo) {
    await inspect('Profiler.enable');
    await inspect('Profiler.start');
  }
  for (const w of workload) {
    const { filters, page } = parseSearchQuery(w.query);
    const f0 = process.cpuUsage();
    const t0 = performance.now();
    index.query(filters, (page - 1) * 20, 20);
    firstWall.push(performance.now() - t0);
    firstSys.push(process.cpuUsage(f0).system / 1000);
    const c0 = process.cpuUsage();
    const t1 = performance.now();
    const { total } = index.query(filters, (page - 1) * 20, 20);
    const ms = performance.now() - t1;
    each.push({ ms, kind: w.kind, query: w.query, total });
    const c = process.cpuUsage(c0);
    wall.push(ms);
    cpu.push((c.user + c.system) / 1000);
    sys.push(c.system / 1000);
    (byKind.get(w.kind) ?? byKind.set(w.kind, []).get(w.kind)!).push(ms);
  }
  if (profileTo) {
    const { profile } = (await inspect('Profiler.stop')) as { profile: unknown };
    writeFileSync(profileTo, JSON.stringify(profile));
  }
  console.log(
    JSON.stringify({
      workload: workload.length,
      query_wall_ms: summary(wall),
      query_cpu_ms: summary(cpu),
      query_system_cpu_ms: summary(sys),
      first_ask_wall_ms: summary(firstWall),
      first_ask_system_cpu_ms: summary(firstSys),
    }),
  );
  console.log('\n| kind | n | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|');
  for (const [kind, ms] of [...byKind].sort((a, b) => summary(b[1]).p95 - summary(a[1]).p95).slice(0, 12)) {
    const s = summary(ms);
    console.log(`| ${kind} | ${s.n} | ${s.p50} | ${s.p95} | ${s.max} |`);
  }
  console.log(`\nslowest ${slowest}:`);
  for (const e of each.sort((a, b) => b.ms - a.ms).slice(0, slowest))
    console.log(`  ${e.ms.toFixed(2).padStart(7)} ms  total ${String(e.total).padStart(8)}  ${e.kind}: ${JSON.stringify(e.query)}`);
  console.log(JSON.stringify({ loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
} finally {
  await handle.close();
}
