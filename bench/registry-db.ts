/**
 * A fresh, migrated database for a registry benchmark: on the server of DATABASE_URL when set,
 * else on an embedded PostgreSQL started in a temporary directory (what `npm start` uses).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { createDatabase, type DatabaseHandle, type Db } from '../src/db/database.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

export interface BenchDatabase {
  handle: DatabaseHandle;
  url: string;
  /** The embedded cluster's data directory (null on an external server). */
  clusterDir: string | null;
  /** CPU seconds used so far by the embedded cluster's processes (null on an external server). */
  postgresCpuSeconds(): number | null;
  /** The same by process kind (backends, autovacuum worker, checkpointer, walwriter, ...). */
  postgresCpuByProcess(): Record<string, number> | null;
  dispose(): Promise<void>;
}

const CLOCK_TICKS = 100;

/** utime + stime of the postmaster and its children by process title, from /proc (Linux); `exited`: children reaped so far. */
export function clusterCpuByProcess(clusterDir: string): Record<string, number> | null {
  try {
    const postmaster = Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const out: Record<string, number> = {};
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      let cmdline: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      if (pid !== postmaster && Number(fields[1]) !== postmaster) continue;
      // Backends are titled "postgres: user db host(port) STATE"; keep the kind only.
      const title =
        pid === postmaster
          ? 'postmaster'
          : cmdline
              .replace(/\0/g, ' ')
              .replace(/^postgres: /, '')
              .trim();
      const kind = /^\S+ \S+ 127\.0\.0\.1/.test(title) ? 'backends' : title.replace(/\s+\d+$/, '');
      out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
      // Children that have exited (autovacuum and parallel workers, closed connections) are
      // counted in the postmaster's cutime/cstime once it reaps them: without this, their CPU
      // between two samples would be lost.
      if (pid === postmaster) out.exited = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
    }
    return out;
  } catch {
    return null;
  }
}

function clusterCpuSeconds(clusterDir: string): number | null {
  const byProcess = clusterCpuByProcess(clusterDir);
  return byProcess === null ? null : Object.values(byProcess).reduce((a, b) => a + b, 0);
}

export interface BenchDatabaseOptions {
  /** The embedded cluster's directory, instead of a fresh temporary one (kept when `keep`). */
  dir?: string;
  /** Keep the database (and the embedded cluster's directory) at dispose: the cluster is only stopped. */
  keep?: boolean;
  /** Open the database `name` as it was kept (migrated to the latest), instead of a new one. */
  reuse?: boolean;
}

export async function openBenchDatabase(
  name = `regwatch_bench_${process.pid}`,
  options: BenchDatabaseOptions = {},
): Promise<BenchDatabase> {
  let adminUrl = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  let tmp: string | undefined;
  if (!adminUrl) {
    if (options.dir) mkdirSync(options.dir, { recursive: true });
    tmp = options.dir ?? mkdtempSync(join(tmpdir(), 'regwatch-bench-'));
    // Settings for the benchmark's cluster, passed on its command line after the embedded
    // defaults, so they override those too (ALTER SYSTEM could not: the command line wins).
    // BENCH_PG_STATS=1: pg_stat_statements (shipped with the embedded binaries) for a per-statement
    // breakdown of PostgreSQL's time and WAL. BENCH_PG_TUNED=1: what a 4-million-company server
    // would set (a buffer cache that holds the hot indexes, checkpoints far apart).
    // BENCH_PG_SET="name=value;...": any settings, to compare.
    const settings: Record<string, string> = {
      ...(process.env.BENCH_PG_STATS === '1' ? { shared_preload_libraries: 'pg_stat_statements' } : {}),
      ...(process.env.BENCH_PG_TUNED === '1' ? { shared_buffers: '2GB', max_wal_size: '8GB', checkpoint_timeout: '30min' } : {}),
    };
    for (const x of (process.env.BENCH_PG_SET ?? '').split(';').filter((x) => x.includes('='))) {
      const [name, value] = x.split('=') as [string, string];
      settings[name.trim()] = value.trim();
    }
    const emb = await startEmbeddedDatabase(tmp, undefined, settings);
    adminUrl = emb.adminUrl;
    stop = emb.stop;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  if (options.reuse) {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) throw new Error(`no kept database ${name} to reuse`);
  } else {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const handle = createDatabase(u.toString(), { max: 6 });
  await migrateToLatest(handle.db, handle.pool);
  if (process.env.BENCH_PG_STATS === '1') await handle.pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // BENCH_SQL="...": run on the migrated database before the benchmark, to compare a schema
  // change (a storage parameter, a column's storage) without a migration.
  if (process.env.BENCH_SQL) await handle.pool.query(process.env.BENCH_SQL);
  return {
    handle,
    url: u.toString(),
    clusterDir: tmp ? join(tmp, 'pg') : null,
    postgresCpuSeconds: () => (tmp ? clusterCpuSeconds(join(tmp, 'pg')) : null),
    postgresCpuByProcess: () => (tmp ? clusterCpuByProcess(join(tmp, 'pg')) : null),
    dispose: async () => {
      await handle.close();
      if (!options.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
      await stop?.();
      if (tmp && !options.keep) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export function argValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

/** PostgreSQL's CPU a company by process kind (backends, checkpointer, autovacuum, ...), the kinds using any. */
export function cpuByProcess(
  before: Record<string, number> | null,
  after: Record<string, number> | null,
  n: number,
): Record<string, number> | null {
  if (before === null || after === null) return null;
  const out: Record<string, number> = {};
  for (const [kind, seconds] of Object.entries(after)) {
    const us = Math.round(((seconds - (before[kind] ?? 0)) * 1e6) / n);
    if (us > 0) out[kind] = us;
  }
  return out;
}

/** With BENCH_PG_STATS=1 (openBenchDatabase): PostgreSQL's time and WAL a company per statement, from pg_stat_statements. */
export const statementStats = process.env.BENCH_PG_STATS === '1';

/** Prints each statement's time, WAL and full-page images a company (`n`) since the last reset, one JSON line each. */
export async function printStatementStats(db: Db, label: string, n: number): Promise<void> {
  const { rows } = await sql<{
    statement: string;
    calls: string;
    us: number;
    wal_bytes: number;
    fpi: string;
    jit_ms: number;
    blks_hit: number;
    blks_read: number;
    read_us: number;
  }>`
    SELECT left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 60) AS statement, calls,
      round((total_exec_time * 1000 / ${n})::numeric, 1)::float8 AS us, round(wal_bytes / ${n})::float8 AS wal_bytes, wal_fpi AS fpi,
      -- Pages a company found in shared_buffers and read in (from the page cache or the disk), and
      -- the time those reads took (track_io_timing on, else 0).
      round(shared_blks_hit::numeric / ${n}, 2)::float8 AS blks_hit, round(shared_blks_read::numeric / ${n}, 2)::float8 AS blks_read,
      round((shared_blk_read_time * 1000 / ${n})::numeric, 1)::float8 AS read_us,
      round((jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time)::numeric, 1)::float8 AS jit_ms
    FROM pg_stat_statements WHERE total_exec_time * 1000 / ${n} >= 0.5 ORDER BY total_exec_time DESC`.execute(db);
  for (const r of rows) console.log(JSON.stringify({ label, ...r, calls: Number(r.calls), fpi: Number(r.fpi) }));
}
