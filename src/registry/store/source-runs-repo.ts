import { sql } from 'kysely';
import type { RegistryExecutor } from './executor.ts';

/**
 * The daily runs seen per source (a source's name: krs, bir, ceidg, vat, synthetic, file), for
 * the freshness view (GET /api/v1/sources) and the scheduler's catch-up. On-demand imports (runs
 * of kind 'import') are not daily runs and count for neither.
 */

export interface SourceRunSpan {
  source: string;
  /** The earlier of the day the scheduler first queued the source and its first daily run. */
  tracked_from: string | null;
  last_completed_date: string | null;
  /** The latest day with a daily run, whatever its status. */
  last_run_date: string | null;
}

export interface SourceRunRow {
  source: string;
  date: string;
  status: 'running' | 'completed' | 'failed';
  started_at: Date;
  finished_at: Date | null;
  new: number;
  updated: number;
  deleted: number;
  events: number;
}

/** Records the first day the scheduler queued `source` (later calls keep the first). */
export async function markSourceScheduled(db: RegistryExecutor, source: string, date: string): Promise<void> {
  await sql`INSERT INTO registry_source_schedule (source, scheduled_since) VALUES (${source}, ${date}::date)
    ON CONFLICT (source) DO NOTHING`.execute(db);
}

export async function sourceRunSpans(db: RegistryExecutor): Promise<SourceRunSpan[]> {
  const { rows } = await sql<SourceRunSpan>`
    SELECT coalesce(r.source, s.source) AS source,
      least(s.scheduled_since, r.first_run)::text AS tracked_from, r.last_completed::text AS last_completed_date,
      r.last_run::text AS last_run_date
    FROM (SELECT source, min(run_date) AS first_run, max(run_date) AS last_run, max(run_date) FILTER (WHERE status = 'completed') AS last_completed
            FROM daily_runs WHERE kind = 'daily' GROUP BY source) r
    FULL JOIN registry_source_schedule s ON s.source = r.source`.execute(db);
  return rows;
}

/** The days from `from` to `to` with a completed daily run, per source. */
export async function completedRunDays(db: RegistryExecutor, from: string, to: string, source?: string): Promise<Map<string, Set<string>>> {
  const { rows } = await sql<{ source: string; run_date: string }>`
    SELECT DISTINCT source, run_date::text AS run_date FROM daily_runs
    WHERE status = 'completed' AND kind = 'daily' AND run_date BETWEEN ${from}::date AND ${to}::date
      AND (${source ?? null}::text IS NULL OR source = ${source ?? null}::text)`.execute(db);
  const days = new Map<string, Set<string>>();
  for (const r of rows) {
    let set = days.get(r.source);
    if (!set) days.set(r.source, (set = new Set()));
    set.add(r.run_date);
  }
  return days;
}

/**
 * Each source's most recent daily run: one still running first, else the one that finished last
 * (a failed day resumed later is more recent than the days that ran in between).
 */
export async function latestSourceRuns(db: RegistryExecutor): Promise<SourceRunRow[]> {
  const { rows } = await sql<SourceRunRow>`
    SELECT DISTINCT ON (source) source, run_date::text AS date, status, started_at, finished_at,
      new_count AS new, updated_count AS updated, deleted_count AS deleted, events_count::float8 AS events
    FROM daily_runs WHERE kind = 'daily'
    ORDER BY source, (finished_at IS NULL) DESC, finished_at DESC, id DESC`.execute(db);
  return rows;
}

/** When the latest run (daily or import) completed: the companies' profiles change only then. */
export async function latestCompletion(db: RegistryExecutor): Promise<string> {
  const { rows } = await sql<{ at: string | null; n: string }>`
    SELECT max(finished_at)::text AS at, count(*)::text AS n FROM daily_runs WHERE status = 'completed'`.execute(db);
  return `${rows[0]?.at ?? ''}/${rows[0]?.n ?? '0'}`;
}

/** Companies holding a profile of each source (the sources that reported them). */
export async function companiesPerSource(db: RegistryExecutor): Promise<Map<string, number>> {
  const { rows } = await sql<{ source: string; n: number }>`
    SELECT k AS source, count(*)::float8 AS n FROM companies CROSS JOIN LATERAL jsonb_object_keys(source_fingerprints) k
    GROUP BY k`.execute(db);
  return new Map(rows.map((r) => [r.source, r.n]));
}
