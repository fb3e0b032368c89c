/**
 * Detection benchmark: with `--companies` companies in the database (default 1,000,000), a daily
 * run in which `--changed` of them (default 100,000) changed — changed companies diffed, with
 * their events stored, per second.
 *
 *   node --import tsx bench/registry-detect.ts --companies 1000000 --changed 100000
 *   BENCH_PG_STATS=1 node --import tsx bench/registry-detect.ts ...   # and PostgreSQL's time by statement
 *   ... --defer-indexes false                                          # the first load with its indexes in place
 *   ... --full-day true --changed 10000                                # a full day's file: every company, 1 % changed
 *   ... --prepare-in-worker true|false                                 # force where the day's lines are prepared
 *
 * The database is filled by an ordinary first `daily` run (its rate is printed too).
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { explainRun, kernelReference, sampleMachine } from './machine.ts';
import { pgIoDelta, samplePgIo } from './pg-io.ts';
import { argValue, cpuByProcess, openBenchDatabase, printStatementStats, statementStats } from './registry-db.ts';
import { benchSnapshot, changedSnapshot, speedReference, syncToDisk, writeBenchFile } from './registry-fixtures.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily } from '../src/registry/daily.ts';

const companies = Number(argValue('companies', '1000000'));
const changed = Number(argValue('changed', '100000'));
const batchSize = Number(argValue('batch', '2000'));
/** `--defer-indexes false`: the first load keeps its indexes in place (runDaily's deferIndexes), to compare. */
const deferIndexes = argValue('defer-indexes', '') === 'false' ? false : undefined;
/**
 * `--full-day true`: the day's file holds every company, the `--changed` ones changed and the
 * rest as loaded, as a registry's full daily export would; rates then count the day's lines too.
 */
const fullDay = argValue('full-day', 'false') === 'true';
/** `--prepare-in-worker true|false`: force runDaily's prepareInWorker for the day's run (default: its own choice). */
const workerArg = argValue('prepare-in-worker', '');
const prepareInWorker = workerArg === '' ? undefined : workerArg === 'true';
const dir = mkdtempSync(join(tmpdir(), 'regwatch-detect-'));
const bench = await openBenchDatabase();
const db = bench.handle.db;

const kernel = kernelReference();

async function measured(label: string, file: string, date: string, lines: number) {
  if (statementStats) await sql`SELECT pg_stat_statements_reset()`.execute(db);
  const pg0 = bench.postgresCpuSeconds();
  const byProcess0 = bench.postgresCpuByProcess();
  const io0 = await samplePgIo(db);
  const faults0 = process.resourceUsage().minorPageFault;
  const cpu0 = process.cpuUsage();
  const machine0 = sampleMachine(bench.clusterDir);
  const t0 = performance.now();
  // Progress after each batch, to tell the warm rate from the whole run's (see steadyRate).
  const progress: { ms: number; processed: number }[] = [];
  const s = await runDaily(db, {
    date,
    source: createFileSource(file),
    sourceKey: `bench:${label}`,
    batchSize,
    deferIndexes,
    prepareInWorker: label === 'load' ? undefined : prepareInWorker,
    onProgress: (p) => progress.push({ ms: performance.now() - t0, processed: p.processed }),
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const faults = process.resourceUsage().minorPageFault - faults0;
  const pg1 = bench.postgresCpuSeconds();
  const byProcess1 = bench.postgresCpuByProcess();
  const n = label === 'load' ? s.new : s.updated;
  if (statementStats) await printStatementStats(db, label, n);
  const machine1 = sampleMachine(bench.clusterDir);
  const io = pgIoDelta(io0, await samplePgIo(db), n);
  const explained = explainRun(machine0, machine1, n, bench.clusterDir);
  return {
    label,
    companies: n,
    events: s.events,
    seconds: Number(seconds.toFixed(1)),
    per_second: Math.round(n / seconds),
    ...(lines !== n ? { lines, lines_per_second: Math.round(lines / seconds) } : {}),
    steady_per_second: steadyRate(progress, n, seconds * 1000),
    // After the last batch: building deferred indexes (a first load) and completing the run.
    tail_seconds: Number((seconds - (progress.at(-1)?.ms ?? 0) / 1000).toFixed(1)),
    node_cpu_us: Math.round((cpu.user + cpu.system) / n),
    node_user_us: Math.round(cpu.user / n),
    node_system_us: Math.round(cpu.system / n),
    node_minor_faults_per_company: Number((faults / n).toFixed(2)),
    pg_cpu_us: pg0 === null || pg1 === null ? null : Math.round(((pg1 - pg0) * 1e6) / n),
    pg_cpu_us_by_process: cpuByProcess(byProcess0, byProcess1, n),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    depends_on: { ...explained, pg_io: io },
    // The page faults of Node.js and PostgreSQL a company at the cold first-touch cost measured
    // before the run (kernel_reference): an upper bound of what faults cost (some pages are warm),
    // without the page cache's new pages, which the kernel allocates without a fault.
    first_touch_us_estimate:
      kernel.first_touch_us_per_4k === null || explained.pg_minor_faults_per_company === null
        ? null
        : Math.round((faults / n + explained.pg_minor_faults_per_company) * kernel.first_touch_us_per_4k),
  };
}

/**
 * Companies a second after the first tenth of the run, to its very end (the tail after the last
 * batch included): without the fixed costs of its start (JIT compilation of the code paths, the
 * first batch's round trips, the worker's start), which weigh about a second however long the run
 * is. The whole run's rate (`per_second`) is the figure the targets are judged by; this one says
 * what a longer run approaches.
 */
function steadyRate(progress: { ms: number; processed: number }[], total: number, totalMs: number): number | null {
  const from = progress.find((p) => p.processed >= total / 10);
  if (!from || totalMs <= from.ms) return null;
  return Math.round(((total - from.processed) * 1000) / (totalMs - from.ms));
}

try {
  console.log(
    JSON.stringify({
      speed_reference_us: speedReference(),
      kernel_reference: kernel,
      note: 'µs for JSON.parse of a company line; kernel: µs a 4 KiB page of memory faulted in, cold (not backed by the host) and warm, CPU µs a file extended by 8 KB',
    }),
  );
  const base = join(dir, 'base.ndjson');
  await writeBenchFile(base, 0, companies);
  console.log(JSON.stringify(await measured('load', base, '2026-11-01', companies)));
  rmSync(base);
  await sql`VACUUM ANALYZE companies, company_identifiers`.execute(db);
  // A day's run meets a database whose last day was checkpointed hours ago. Without this, the
  // checkpoint of the load's 2 GB of dirty buffers ran during detection and was counted in it
  // (13 µs of the checkpointer's CPU a changed company).
  await sql`CHECKPOINT`.execute(db);
  // Changed companies spread over the whole table, as a real day's are.
  const step = Math.max(1, Math.floor(companies / changed));
  const day = join(dir, 'changed.ndjson');
  const out = createWriteStream(day);
  if (fullDay) {
    for (let n = 0, i = 0; n < companies; n++) {
      const isChanged = n % step === 0 && i < changed;
      if (isChanged) i++;
      if (!out.write(JSON.stringify(isChanged ? changedSnapshot(n, 3) : benchSnapshot(n)) + '\n')) await once(out, 'drain');
    }
  } else {
    for (let i = 0, n = 0; i < changed; i++, n += step) {
      if (!out.write(JSON.stringify(changedSnapshot(n % companies, 3)) + '\n')) await once(out, 'drain');
    }
  }
  out.end();
  await once(out, 'finish');
  await syncToDisk(day);
  console.log(JSON.stringify(await measured('detect', day, '2026-11-02', fullDay ? companies : changed)));
  const size = await sql<{ companies: string; events: string }>`
    SELECT pg_size_pretty(pg_total_relation_size('companies')) AS companies, pg_size_pretty(pg_total_relation_size('events_y2026m11')) AS events`.execute(
    db,
  );
  console.log(JSON.stringify(size.rows[0]));
} finally {
  await bench.dispose();
  rmSync(dir, { recursive: true, force: true });
}
