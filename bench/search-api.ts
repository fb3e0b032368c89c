/**
 * Search benchmark: GET /api/v1/companies/search over HTTP against the benchmark database, for a
 * mixed workload of distinct filter combinations (bench/search-fixtures.ts), exact totals included.
 * Beside each request's latency: the in-memory index's own time, and the same search run in SQL
 * directly (count + page + the page's rows), so the API's overhead and the index's gain show as
 * ratios. Then a concurrent load (autocannon, 50 connections) with the server's memory.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench node --import tsx bench/search-api.ts [--queries 1200] [--sql all|none|N] [--seconds 20]
 *
 * The database must hold the registry already: `regwatch seed --synthetic 1000000` (docs/benchmarks.md).
 */
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { findResultRows, searchCompaniesSql } from '../src/modules/companies/repo.ts';
import {
  argValue,
  buildWorkload,
  mb,
  queryString,
  runLoad,
  sampleMemory,
  startBenchApp,
  summary,
  type WorkloadQuery,
} from './search-fixtures.ts';

const size = Number(argValue('queries', '1200'));
const sqlMode = argValue('sql', 'all');
const seconds = Number(argValue('seconds', '20'));

console.log(
  JSON.stringify({ started: new Date().toISOString(), cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }),
);
const bench = await startBenchApp();
try {
  const {
    rows: [counts],
  } = await sql<{ n: string }>`SELECT count(*) AS n FROM companies`.execute(bench.handle.db);
  const status = bench.engine.status();
  console.log(
    JSON.stringify({
      companies: Number(counts!.n),
      index_build_ms: Math.round(bench.buildMs),
      index_mb: mb(status.bytes ?? 0),
      rss_mb_after_build: mb(process.memoryUsage().rss),
      heap_mb_after_build: mb(process.memoryUsage().heapUsed),
    }),
  );

  const workload = await buildWorkload(bench.handle, size);
  const headers = { authorization: `Bearer ${bench.token}` };
  const get = async (w: WorkloadQuery) => {
    const t0 = performance.now();
    const res = await fetch(`${bench.baseUrl}/api/v1/companies/search?${queryString(w.query)}`, { headers });
    const body = (await res.json()) as { data?: { total: number } };
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${queryString(w.query)}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return { ms, total: body.data!.total };
  };
  for (const w of workload.slice(0, 50)) await get(w);

  const api: number[] = [];
  const index: number[] = [];
  const direct: number[] = [];
  const ratios: number[] = [];
  const byKind = new Map<string, { api: number[]; sql: number[] }>();
  let mismatches = 0;
  const sqlEvery = sqlMode === 'none' ? 0 : sqlMode === 'all' ? 1 : Math.max(1, Math.floor(workload.length / Number(sqlMode)));
  for (let i = 0; i < workload.length; i++) {
    const w = workload[i]!;
    const r = await get(w);
    api.push(r.ms);
    const kind = byKind.get(w.kind) ?? { api: [], sql: [] };
    byKind.set(w.kind, kind);
    kind.api.push(r.ms);

    const { filters, page } = parseSearchQuery(w.query);
    const offset = (page - 1) * 20;
    const t0 = performance.now();
    await bench.engine.search(filters, offset, 20);
    index.push(performance.now() - t0);

    if (sqlEvery > 0 && i % sqlEvery === 0) {
      const t1 = performance.now();
      const answer = await searchCompaniesSql(bench.handle.db, filters, offset, 20, 60_000);
      await findResultRows(bench.handle.db, answer.ids);
      const ms = performance.now() - t1;
      direct.push(ms);
      kind.sql.push(ms);
      ratios.push(r.ms / ms);
      if (answer.total !== r.total) {
        mismatches++;
        console.error(`total differs for ${queryString(w.query)}: API ${r.total}, SQL ${answer.total}`);
      }
    }
  }

  console.log(
    JSON.stringify({
      workload: workload.length,
      kinds: byKind.size,
      api_ms: summary(api),
      index_ms: summary(index),
      sql_ms: summary(direct),
      api_over_sql: summary(ratios),
      total_mismatches: mismatches,
    }),
  );
  console.log('\n| kind | n | API p50 | API p95 | SQL p50 | SQL p95 |\n|---|---:|---:|---:|---:|---:|');
  for (const [kind, k] of [...byKind].sort((a, b) => a[0].localeCompare(b[0]))) {
    const a = summary(k.api);
    const s = summary(k.sql);
    console.log(`| ${kind} | ${a.n} | ${a.p50} | ${a.p95} | ${Number.isNaN(s.p50) ? '–' : s.p50} | ${Number.isNaN(s.p95) ? '–' : s.p95} |`);
  }

  // Concurrent load over the same workload.
  const paths = workload.map((w) => `/api/v1/companies/search?${queryString(w.query)}`);
  const load = await sampleMemory(() =>
    runLoad({ url: bench.baseUrl, connections: 50, durationSeconds: seconds, method: 'GET', headers, paths }),
  );
  console.log(JSON.stringify({ load_search_50c: load.result, server_max_rss_mb: load.maxRssMb, server_max_heap_mb: load.maxHeapMb }));
  console.log(JSON.stringify({ cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
} finally {
  await bench.close();
}
