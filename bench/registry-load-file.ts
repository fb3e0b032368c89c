/**
 * A first `daily` run from one NDJSON file kept between runs, on a fresh database each time: for
 * A/B comparisons of the load, where writing a 1.25 GB file for every run (registry-detect.ts)
 * would cost a minute and a half a round. The file is written (and synced to disk) when missing.
 *
 *   node --import tsx bench/registry-load-file.ts --file /tmp/load-1m.ndjson --companies 1000000
 *   BENCH_PG_STATS=1 node --import tsx bench/registry-load-file.ts --file ...   # and PostgreSQL's time by statement
 *   node --import tsx bench/registry-load-file.ts --file ... --copy false        # INSERT instead of binary COPY (A/B)
 *
 * Prints the rate, the tail after the last batch (the deferred index builds), the CPU a company
 * of Node.js and of PostgreSQL by process kind, and what the cluster wrote (bench/pg-io.ts).
 */
import { existsSync } from 'node:fs';
import { explainRun, kernelReference, sampleMachine } from './machine.ts';
import { pgIoDelta, samplePgIo } from './pg-io.ts';
import { argValue, cpuByProcess, openBenchDatabase, printStatementStats, statementStats } from './registry-db.ts';
import { speedReference, writeBenchFile } from './registry-fixtures.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily } from '../src/registry/daily.ts';

const file = argValue('file', '');
if (file === '') throw new Error('--file PATH is required (written when missing)');
const companies = Number(argValue('companies', '1000000'));
const copyRows = argValue('copy', 'true') !== 'false';
if (!existsSync(file)) await writeBenchFile(file, 0, companies);

const bench = await openBenchDatabase();
const db = bench.handle.db;
try {
  const speed = speedReference();
  const kernel = kernelReference();
  const pgSeconds0 = bench.postgresCpuSeconds();
  const pg0 = bench.postgresCpuByProcess();
  const io0 = await samplePgIo(db);
  const faults0 = process.resourceUsage().minorPageFault;
  const cpu0 = process.cpuUsage();
  const machine0 = sampleMachine(bench.clusterDir);
  const t0 = performance.now();
  let lastBatch = t0;
  const s = await runDaily(db, {
    date: '2026-11-01',
    source: createFileSource(file),
    sourceKey: 'bench:load',
    batchSize: 2000,
    copyRows,
    onProgress: () => {
      lastBatch = performance.now();
    },
  });
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const faults = process.resourceUsage().minorPageFault - faults0;
  const pgSeconds1 = bench.postgresCpuSeconds();
  const pg1 = bench.postgresCpuByProcess();
  const machine1 = sampleMachine(bench.clusterDir);
  const io = pgIoDelta(io0, await samplePgIo(db), s.new);
  console.log(
    JSON.stringify({
      speed_reference_us: speed,
      kernel_reference: kernel,
      companies: s.new,
      copy_rows: copyRows,
      seconds: Number(((end - t0) / 1000).toFixed(1)),
      per_second: Math.round((s.new * 1000) / (end - t0)),
      tail_seconds: Number(((end - lastBatch) / 1000).toFixed(1)),
      node_cpu_us: Math.round((cpu.user + cpu.system) / s.new),
      node_user_us: Math.round(cpu.user / s.new),
      node_system_us: Math.round(cpu.system / s.new),
      node_minor_faults_per_company: Number((faults / s.new).toFixed(2)),
      pg_cpu_us: pgSeconds0 === null || pgSeconds1 === null ? null : Math.round(((pgSeconds1 - pgSeconds0) * 1e6) / s.new),
      pg_cpu_us_by_process: cpuByProcess(pg0, pg1, s.new),
      depends_on: { ...explainRun(machine0, machine1, s.new, bench.clusterDir), pg_io: io },
    }),
  );
  if (statementStats) await printStatementStats(db, 'load', s.new);
} finally {
  await bench.dispose();
}
