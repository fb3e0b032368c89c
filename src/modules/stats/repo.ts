import { sql } from 'kysely';
import type { RegistryExecutor } from '../../registry/store.ts';

/** The stats module's query: the daily runs' committed counters, summed per day. */

export interface RunDayRow {
  run_date: string;
  sources: string[];
  new: number;
  updated: number;
  deleted: number;
  total: number;
}

/**
 * Completed runs summed per day, for `from`..`to` inclusive, oldest first. On-demand imports
 * (src/registry/import.ts, runs of kind 'import') store through runs too, but a day that had only
 * those had no daily run.
 */
export async function completedRunDays(db: RegistryExecutor, from: string, to: string): Promise<RunDayRow[]> {
  const { rows } = await sql<RunDayRow>`
    SELECT run_date::text AS run_date, array_agg(DISTINCT source ORDER BY source) AS sources,
      sum(new_count)::float8 AS new, sum(updated_count)::float8 AS updated, sum(deleted_count)::float8 AS deleted,
      coalesce(max(total), 0)::float8 AS total
    FROM daily_runs
    WHERE status = 'completed' AND run_date BETWEEN ${from}::date AND ${to}::date AND kind = 'daily'
    GROUP BY run_date ORDER BY run_date`.execute(db);
  return rows;
}
