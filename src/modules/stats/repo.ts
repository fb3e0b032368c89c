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
 * Completed runs summed per day, for `from`..`to` inclusive, oldest first. `total` is read now,
 * not as a run recorded it: the companies first seen by the day (a run dated earlier that
 * completed later adds to every later day's), plus those its runs saw that were first seen after
 * it (`later_seen`, fixed at completion: src/registry/store/daily-runs-repo.ts). On-demand imports
 * (src/registry/import.ts, runs of kind 'import') store through runs too, but a day that had only
 * those had no daily run.
 */
export async function completedRunDays(db: RegistryExecutor, from: string, to: string): Promise<RunDayRow[]> {
  const { rows } = await sql<RunDayRow>`
    SELECT run_date::text AS run_date, array_agg(DISTINCT source ORDER BY source) AS sources,
      sum(new_count)::float8 AS new, sum(updated_count)::float8 AS updated, sum(deleted_count)::float8 AS deleted,
      ((SELECT coalesce(sum(c.companies), 0) FROM company_counts c WHERE c.first_seen_date <= r.run_date)
        + coalesce(max(later_seen), 0))::float8 AS total
    FROM daily_runs r
    WHERE status = 'completed' AND run_date BETWEEN ${from}::date AND ${to}::date AND kind = 'daily'
    GROUP BY run_date ORDER BY run_date`.execute(db);
  return rows;
}
