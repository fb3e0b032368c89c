/**
 * How the daily lookup's reads of `companies` heap pages cost on this machine, by plan: the
 * primary-key probe per company the lookup makes today (one synchronous read after another), or
 * one bitmap heap scan over the batch's ids, which PostgreSQL 18 reads through its asynchronous
 * I/O (read streams; `effective_io_concurrency` reads in flight).
 *
 * On the database kept by `bench/scale.ts --keep` (its embedded cluster in `--dir`/db-N), each
 * variant gets ids of its own (random companies, so pages neither in shared_buffers nor, after the
 * page cache is dropped before each variant when run as root, in the page cache).
 *
 *   node --import tsx bench/lookup-io.ts [--companies 4100000] [--batches 5] [--batch 2000] [--cached true]
 *
 * `--cached true`: the pages in the page cache instead (each batch read once before it is measured,
 * then evicted from shared_buffers with pg_buffercache_evict_relation), for what each plan costs
 * when nothing comes from the disk.
 */
import { dropPageCache, openKeptScaleDatabase } from './kept-scale-db.ts';
import { processCpuSeconds } from './machine.ts';
import { argValue } from './registry-db.ts';

const COMPANIES = Number(argValue('companies', '4100000'));
const DIR = argValue('dir', '/var/tmp/regwatch-scale');
const BATCHES = Number(argValue('batches', '5'));
const BATCH = Number(argValue('batch', '2000'));
const CACHED = argValue('cached', 'false') === 'true';

const { client, pid, lo, hi, close } = await openKeptScaleDatabase(COMPANIES, DIR);

/** A process's CPU so far, in µs. */
const ticks = (p: number) => (processCpuSeconds(p) ?? 0) * 1e6;
const ioWorkers = async () =>
  (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'io worker'")).rows.map((r) => r.pid);

// The primary key's pages in shared_buffers first, as on a day after the first (the lookup then
// reads about one page a company: its heap page), so the variants differ only in the heap reads.
await client.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
await client.query("SELECT pg_prewarm('companies_pkey')");
if (CACHED) await client.query('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
console.log(JSON.stringify({ companies: COMPANIES, lo, hi, batch: BATCH, batches: BATCHES }));

const COLUMNS = `c.id, c.revision, encode(c.content_hash, 'base64') AS content_hash, c.status, c.snapshot`;
const variants: { name: string; setup: string[]; query: string }[] = [
  {
    name: 'pk probe per id (today)',
    setup: ['RESET enable_indexscan', 'RESET enable_bitmapscan'],
    query: `SELECT ${COLUMNS} FROM unnest($1::bigint[]) m(id) CROSS JOIN LATERAL (SELECT * FROM companies c WHERE c.id = m.id LIMIT 1) c`,
  },
  {
    name: 'bitmap heap scan, effective_io_concurrency 0',
    setup: ['SET enable_indexscan = off', 'SET effective_io_concurrency = 0'],
    query: `SELECT ${COLUMNS} FROM companies c WHERE c.id = ANY($1::bigint[])`,
  },
  {
    name: 'bitmap heap scan, effective_io_concurrency 16 (default)',
    setup: ['SET enable_indexscan = off', 'SET effective_io_concurrency = 16'],
    query: `SELECT ${COLUMNS} FROM companies c WHERE c.id = ANY($1::bigint[])`,
  },
  {
    name: 'bitmap heap scan, effective_io_concurrency 64',
    setup: ['SET enable_indexscan = off', 'SET effective_io_concurrency = 64'],
    query: `SELECT ${COLUMNS} FROM companies c WHERE c.id = ANY($1::bigint[])`,
  },
];

for (const v of variants) {
  for (const s of v.setup) await client.query(s);
  const dropped = CACHED ? false : dropPageCache();
  let wall = 0;
  let cpu = 0;
  let io = 0;
  let rows = 0;
  const workers = await ioWorkers();
  for (let b = 0; b < BATCHES; b++) {
    const ids = Array.from({ length: BATCH }, () => String(lo + Math.floor(Math.random() * (hi - lo + 1))));
    if (CACHED) {
      await client.query('SELECT count(revision) FROM companies WHERE id = ANY($1::bigint[])', [ids]);
      await client.query("SELECT pg_buffercache_evict_relation('companies')");
    }
    const c0 = ticks(pid);
    const w0 = workers.reduce((a, p) => a + ticks(p), 0);
    const t0 = performance.now();
    const r = await client.query(v.query, [ids]);
    wall += performance.now() - t0;
    cpu += ticks(pid) - c0;
    io += workers.reduce((a, p) => a + ticks(p), 0) - w0;
    rows += r.rowCount ?? 0;
  }
  const plan = await client.query(`EXPLAIN ${v.query}`, [['1', '2']]);
  console.log(
    JSON.stringify({
      variant: v.name,
      page_cache_dropped: dropped,
      rows,
      wall_us_a_company: Math.round((wall * 1000) / rows),
      backend_cpu_us_a_company: Math.round(cpu / rows),
      io_workers_cpu_us_a_company: Math.round(io / rows),
      plan: plan.rows.map((x) => x['QUERY PLAN']).join(' | '),
    }),
  );
}
await close();
