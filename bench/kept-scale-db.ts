/**
 * What the benchmarks that probe the database kept by `bench/scale.ts --keep` share (lookup-io.ts,
 * identifier-probe.ts): that database opened with one client and its backend's pid (for its CPU
 * from /proc), and the page cache dropped between variants.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openBenchDatabase } from './registry-db.ts';

export async function openKeptScaleDatabase(companies: number, dir: string) {
  const bench = await openBenchDatabase(`regwatch_scale_${companies}`, { dir: join(dir, `db-${companies}`), keep: true, reuse: true });
  const client = new pg.Client({ connectionString: bench.url });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const { rows } = await client.query<{ lo: string; hi: string }>('SELECT min(id)::text AS lo, max(id)::text AS hi FROM companies');
  return {
    client,
    /** The client's backend. */
    pid,
    /** The companies' ids lie in [lo, hi]. */
    lo: Number(rows[0]!.lo),
    hi: Number(rows[0]!.hi),
    close: async () => {
      await client.end();
      await bench.dispose();
    },
  };
}

/** Drops the page cache (as root); false where that is not allowed. */
export function dropPageCache(): boolean {
  try {
    execSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}
