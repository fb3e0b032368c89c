/**
 * Load benchmark: a first `daily` run from a snapshot file into an empty database — companies
 * stored per second and the process's peak memory, for growing inputs (memory must stay flat).
 *
 *   node --import tsx bench/registry-load.ts --sizes 50000,100000,200000,400000
 *
 * Each size runs in a fresh process on a fresh database, so peak RSS belongs to that run alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, openBenchDatabase } from './registry-db.ts';
import { speedReference, writeBenchFile } from './registry-fixtures.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily } from '../src/registry/daily.ts';

async function single(file: string, batchSize: number): Promise<void> {
  const bench = await openBenchDatabase();
  try {
    let peakHeap = 0;
    const sampler = setInterval(() => {
      peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    }, 50);
    const pg0 = bench.postgresCpuSeconds();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const summary = await runDaily(bench.handle.db, { date: '2026-11-01', source: createFileSource(file), sourceKey: 'bench', batchSize });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = bench.postgresCpuSeconds();
    clearInterval(sampler);
    console.log(
      JSON.stringify({
        companies: summary.new,
        seconds: Number(seconds.toFixed(2)),
        per_second: Math.round(summary.new / seconds),
        node_cpu_us_per_company: Math.round((cpu.user + cpu.system) / summary.new),
        pg_cpu_us_per_company: pg0 === null || pg1 === null ? null : Math.round(((pg1 - pg0) * 1e6) / summary.new),
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
        peak_heap_mb: Math.round(peakHeap / 1024 / 1024),
      }),
    );
  } finally {
    await bench.dispose();
  }
}

async function driver(sizes: number[], batchSize: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-load-'));
  try {
    console.log(`batch size ${batchSize}, node ${process.version}, speed reference ${speedReference()} µs (JSON.parse of a company line)`);
    console.log(
      '| companies | file MB | seconds | companies/s | Node CPU µs/company | PostgreSQL CPU µs/company | peak RSS MB | peak heap MB |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const size of sizes) {
      const file = join(dir, `load-${size}.ndjson`);
      await writeBenchFile(file, 0, size);
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', new URL(import.meta.url).pathname, '--file', file, '--batch', String(batchSize)],
        { encoding: 'utf8', env: process.env },
      );
      if (child.status !== 0) throw new Error(`load run of ${size} failed:\n${child.stderr}`);
      const r = JSON.parse(child.stdout.trim().split('\n').pop()!);
      console.log(
        `| ${r.companies} | ${(statSync(file).size / 1e6).toFixed(0)} | ${r.seconds} | ${r.per_second} | ${r.node_cpu_us_per_company} | ${r.pg_cpu_us_per_company ?? 'n/a'} | ${r.peak_rss_mb} | ${r.peak_heap_mb} |`,
      );
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const batchSize = Number(argValue('batch', '2000'));
const file = argValue('file', '');
if (file) await single(file, batchSize);
else await driver(argValue('sizes', '50000,100000,200000').split(',').map(Number), batchSize);
