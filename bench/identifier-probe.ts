/**
 * The daily lookup's identifier probe (companies-repo.ts lookupCompaniesForBatch: one primary-key
 * probe of company_identifiers a line) with the pages not in memory, as on a day whose companies'
 * pages the page cache has let go: through the key's leaf alone (an index-only scan, the key
 * covering company_id since migration 20261130000100) against the leaf and then the table's page
 * (`enable_indexonlyscan` off: the plain index scan the lookup made before it).
 *
 * On the database kept by `bench/scale.ts --keep` (its embedded cluster in `--dir`/db-N). Each
 * variant probes the keys of random companies of its own; before each variant the table and its
 * key are evicted from shared_buffers and (as root) the page cache is dropped. `--cached true`
 * keeps the page cache (the keys read once before), for the regime where only shared_buffers is
 * cold. Prints wall and backend CPU a probe.
 *
 *   node --import tsx bench/identifier-probe.ts [--companies 4100000] [--batches 5] [--batch 2000] [--rounds 2] [--cached true]
 */
import { dropPageCache, openKeptScaleDatabase } from './kept-scale-db.ts';
import { processCpuSeconds } from './machine.ts';
import { argValue } from './registry-db.ts';

const COMPANIES = Number(argValue('companies', '4100000'));
const DIR = argValue('dir', '/var/tmp/regwatch-scale');
const BATCHES = Number(argValue('batches', '5'));
const BATCH = Number(argValue('batch', '2000'));
const ROUNDS = Number(argValue('rounds', '2'));
const CACHED = argValue('cached', 'false') === 'true';

const { client, pid, lo, hi, close } = await openKeptScaleDatabase(COMPANIES, DIR);
await client.query('CREATE EXTENSION IF NOT EXISTS pg_buffercache');
const { rows: key } = await client.query<{ def: string }>("SELECT pg_get_indexdef('company_identifiers_pkey'::regclass) AS def");
console.log(JSON.stringify({ companies: COMPANIES, batch: BATCH, batches: BATCHES, cached: CACHED, key: key[0]!.def }));

/** The first key (by value: NIP's type code is the lowest) of each of `n` random companies. */
async function keysOfRandomCompanies(n: number): Promise<string[]> {
  const ids = Array.from({ length: n * 2 }, () => String(lo + Math.floor(Math.random() * (hi - lo + 1))));
  const { rows } = await client.query<{ k: string }>(
    'SELECT DISTINCT ON (company_id) key::text AS k FROM company_identifiers WHERE company_id = ANY($1::bigint[]) ORDER BY company_id, key',
    [ids],
  );
  return rows.slice(0, n).map((r) => r.k);
}

// The lookup's probe, one key a line (lookupCompaniesForBatch's first COALESCE term).
const PROBE = `SELECT count(*)::int AS n FROM unnest($1::bigint[]) AS k(key)
  WHERE (SELECT x.company_id FROM company_identifiers x WHERE x.key = k.key) IS NOT NULL`;

const variants = [
  { name: 'index-only scan (the covering key)', setting: 'on' },
  { name: 'index scan: leaf, then the table page', setting: 'off' },
];
for (let round = 1; round <= ROUNDS; round++) {
  for (const v of variants) {
    await client.query(`SET enable_indexonlyscan = ${v.setting}`);
    const batches: string[][] = [];
    for (let b = 0; b < BATCHES; b++) batches.push(await keysOfRandomCompanies(BATCH));
    await client.query(
      "SELECT pg_buffercache_evict_relation('company_identifiers'), pg_buffercache_evict_relation('company_identifiers_pkey')",
    );
    const dropped = CACHED ? false : dropPageCache();
    let wall = 0;
    let cpu = 0;
    let probes = 0;
    let found = 0;
    for (const keys of batches) {
      const c0 = processCpuSeconds(pid) ?? 0;
      const t0 = performance.now();
      const r = await client.query<{ n: number }>(PROBE, [keys]);
      wall += performance.now() - t0;
      cpu += (processCpuSeconds(pid) ?? 0) - c0;
      probes += keys.length;
      found += r.rows[0]!.n;
    }
    const plan = await client.query(`EXPLAIN ${PROBE}`, [['1']]);
    console.log(
      JSON.stringify({
        round,
        variant: v.name,
        page_cache_dropped: dropped,
        probes,
        found,
        wall_us_a_probe: Math.round((wall * 1000) / probes),
        backend_cpu_us_a_probe: Math.round((cpu * 1e6) / probes),
        plan: plan.rows
          .map((x: Record<string, string>) => x['QUERY PLAN']!.trim())
          .filter((l) => l.includes('Scan'))
          .join(' | '),
      }),
    );
  }
}
console.log(
  `node --import tsx bench/identifier-probe.ts --companies ${COMPANIES} --batches ${BATCHES} --batch ${BATCH} --rounds ${ROUNDS}${CACHED ? ' --cached true' : ''}`,
);
await close();
