import { sql } from 'kysely';
import { SOURCE_NAMES } from '../model.ts';
import type { RegistryExecutor } from './executor.ts';
import { RUN_OWNER_ALIVE } from './locks.ts';

/**
 * The daily runs seen per source (a source's name: krs, bir, ceidg, vat, synthetic, file), for
 * the freshness view (GET /api/v1/sources) and the scheduler's catch-up. On-demand imports (runs
 * of kind 'import') are not daily runs and count for neither.
 */

export interface SourceRunSpan {
  source: string;
  /** The earliest of the day the scheduler first queued the source, the day a process first served with it configured, and its first daily run. */
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

/**
 * Records a day `source` is watched from: the day its first tick queued, or the day a process
 * first served with it configured. The earliest recorded stays.
 */
export async function markSourceScheduled(db: RegistryExecutor, source: string, date: string): Promise<void> {
  await sql`INSERT INTO registry_source_schedule (source, scheduled_since) VALUES (${source}, ${date}::date)
    ON CONFLICT (source) DO UPDATE SET scheduled_since = EXCLUDED.scheduled_since
    WHERE registry_source_schedule.scheduled_since > EXCLUDED.scheduled_since`.execute(db);
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
 * (a failed day resumed later is more recent than the days that ran in between). A `running` row
 * whose process died (no session holds its run lock) is a failed run, ranked by its start: its
 * row stays `running` until the day is run again, but nothing is running it.
 */
export async function latestSourceRuns(db: RegistryExecutor): Promise<SourceRunRow[]> {
  const { rows } = await sql<SourceRunRow>`
    SELECT DISTINCT ON (source) source, run_date::text AS date,
      CASE WHEN status = 'running' AND NOT alive THEN 'failed' ELSE status END AS status, started_at, finished_at,
      new_count AS new, updated_count AS updated, deleted_count AS deleted, events_count::float8 AS events
    FROM (SELECT r.*, r.status = 'running' AND ${RUN_OWNER_ALIVE} AS alive FROM daily_runs r WHERE r.kind = 'daily') r
    ORDER BY source, alive DESC, coalesce(finished_at, started_at) DESC, id DESC`.execute(db);
  return rows;
}

/**
 * What changes when profiles may have: `daily`, when a daily run completes; `any`, when any run
 * (an on-demand import is one) begins. Both read indexes only.
 */
export async function runMarks(db: RegistryExecutor): Promise<{ daily: string; any: string }> {
  const { rows } = await sql<{ daily: string | null; n: string; last_id: string | null }>`
    SELECT (SELECT max(finished_at)::text FROM daily_runs WHERE status = 'completed' AND kind = 'daily') AS daily,
      (SELECT count(*)::text FROM daily_runs WHERE status = 'completed' AND kind = 'daily') AS n,
      (SELECT max(id)::text FROM daily_runs) AS last_id`.execute(db);
  return { daily: `${rows[0]?.daily ?? ''}/${rows[0]?.n ?? '0'}`, any: rows[0]?.last_id ?? '' };
}

/**
 * Companies holding a profile of each source (the sources that reported them): one pass over
 * every company, about 2 s at 1,000,000 on a loaded machine.
 */
export async function companiesPerSource(db: RegistryExecutor): Promise<Map<string, number>> {
  const counts = SOURCE_NAMES.map((name, i) => sql`count(*) FILTER (WHERE source_fingerprints ? ${name})::float8 AS ${sql.ref(`n${i}`)}`);
  const { rows } = await sql<Record<string, number>>`SELECT ${sql.join(counts)} FROM companies`.execute(db);
  return new Map(SOURCE_NAMES.map((name, i) => [name, rows[0]?.[`n${i}`] ?? 0]));
}
