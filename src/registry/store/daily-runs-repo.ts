import { sql } from 'kysely';
import type { Identifier } from '../model.ts';
import type { DailyRunKind, DailyRunStatus } from '../tables.ts';
import type { RegistryExecutor } from './executor.ts';
import { column } from './batch-column.ts';

/** Bookkeeping of daily runs (docs/registry.md): one row per (date, source key), its counters committed with each batch. */

export interface DailyRun {
  id: string;
  run_date: string;
  source: string;
  source_key: string;
  kind: DailyRunKind;
  status: DailyRunStatus;
  new_count: number;
  updated_count: number;
  deleted_count: number;
  events_count: number;
  processed_count: number;
  skipped_count: number;
  total: number | null;
  attempts: number;
  started_at: Date;
  finished_at: Date | null;
  error: string | null;
}

const RUN_COLUMNS = sql`id, run_date::text AS run_date, source, source_key, kind, status, new_count, updated_count, deleted_count,
  events_count::float8 AS events_count, processed_count::float8 AS processed_count, skipped_count, total::float8 AS total,
  attempts, started_at, finished_at, error`;

export async function findRun(db: RegistryExecutor, date: string, sourceKey: string): Promise<DailyRun | null> {
  const { rows } =
    await sql<DailyRun>`SELECT ${RUN_COLUMNS} FROM daily_runs WHERE run_date = ${date}::date AND source_key = ${sourceKey}`.execute(db);
  return rows[0] ?? null;
}

export async function findRunById(db: RegistryExecutor, id: string): Promise<DailyRun | null> {
  const { rows } = await sql<DailyRun>`SELECT ${RUN_COLUMNS} FROM daily_runs WHERE id = ${id}`.execute(db);
  return rows[0] ?? null;
}

/**
 * Opens the run of (date, source key): a new one, or the unfinished one again (its counters
 * cover the batches that committed). A completed run is returned as it is. With `importIdentifier`
 * a new run is an on-demand import's, for that identifier (kind 'import').
 */
export async function beginRun(
  db: RegistryExecutor,
  date: string,
  source: string,
  sourceKey: string,
  importIdentifier: Identifier | null = null,
): Promise<{ run: DailyRun; resumed: boolean }> {
  const { rows } = await sql<DailyRun & { inserted: boolean }>`
    INSERT INTO daily_runs (run_date, source, source_key, kind, import_identifier_type, import_identifier_value, status)
    VALUES (${date}::date, ${source}, ${sourceKey}, ${importIdentifier === null ? 'daily' : 'import'},
      ${importIdentifier?.type ?? null}, ${importIdentifier?.value ?? null}, 'running')
    ON CONFLICT (run_date, source_key) DO UPDATE SET
      status = CASE WHEN daily_runs.status = 'completed' THEN 'completed' ELSE 'running' END,
      attempts = daily_runs.attempts + CASE WHEN daily_runs.status = 'completed' THEN 0 ELSE 1 END,
      error = CASE WHEN daily_runs.status = 'completed' THEN daily_runs.error END,
      finished_at = CASE WHEN daily_runs.status = 'completed' THEN daily_runs.finished_at END
    RETURNING ${RUN_COLUMNS}, (xmax = 0) AS inserted`.execute(db);
  const { inserted, ...run } = rows[0]!;
  return { run, resumed: !inserted && run.status !== 'completed' };
}

export interface RunCounters {
  new: number;
  updated: number;
  deleted: number;
  events: number;
  processed: number;
  skipped: number;
}

export async function addRunCounters(trx: RegistryExecutor, runId: string, c: RunCounters): Promise<void> {
  await sql`
    UPDATE daily_runs SET new_count = new_count + ${c.new}, updated_count = updated_count + ${c.updated},
      deleted_count = deleted_count + ${c.deleted}, events_count = events_count + ${c.events},
      processed_count = processed_count + ${c.processed}, skipped_count = skipped_count + ${c.skipped}
    WHERE id = ${runId}`.execute(trx);
}

/**
 * Records, in a batch's transaction, the companies it wrote (new or updated): what a search
 * index applies when the run is finished (src/modules/companies/index-follower.ts).
 */
export async function recordRunChanges(trx: RegistryExecutor, runId: string, companyIds: readonly string[]): Promise<void> {
  if (companyIds.length === 0) return;
  await sql`INSERT INTO daily_run_changes (run_id, company_ids) VALUES (${runId}, ${column(companyIds, 'bigint')})`.execute(trx);
}

/** How long a run's changes are kept: far longer than any serving process takes to apply them. */
export const RUN_CHANGES_KEPT_DAYS = 7;

/** Deletes the change lists of batches older than RUN_CHANGES_KEPT_DAYS. */
export async function pruneRunChanges(db: RegistryExecutor): Promise<void> {
  await sql`DELETE FROM daily_run_changes WHERE created_at < now() - make_interval(days => ${RUN_CHANGES_KEPT_DAYS})`.execute(db);
}

/**
 * Marks the run completed with the number of companies known at the end of its day: those first
 * seen by then, and, for a run dated before some companies were first seen (a back-dated run),
 * those of them the run itself wrote, which it saw that day (else its total could be below its
 * own `updated`): the run's `later_seen`, which the statistics add to the current count of the
 * first (src/modules/stats/repo.ts). The second count is only made when a later first-seen date
 * exists (CASE is evaluated lazily), so a run of the latest day never reads its change lists.
 */
export async function completeRun(db: RegistryExecutor, runId: string): Promise<DailyRun> {
  const { rows } = await sql<DailyRun>`
    WITH n AS (
      SELECT d.id AS run_id,
        (SELECT coalesce(sum(c.companies), 0) FROM company_counts c WHERE c.first_seen_date <= d.run_date) AS seen,
        CASE WHEN EXISTS (SELECT 1 FROM company_counts c WHERE c.first_seen_date > d.run_date AND c.companies > 0) THEN (
            SELECT count(DISTINCT co.id) FROM daily_run_changes ch CROSS JOIN LATERAL unnest(ch.company_ids) AS w(id)
            JOIN companies co ON co.id = w.id
            WHERE ch.run_id = d.id AND co.first_seen_date > d.run_date)
          ELSE 0 END AS later
      FROM daily_runs d WHERE d.id = ${runId})
    UPDATE daily_runs r SET status = 'completed', finished_at = now(), error = NULL, total = n.seen + n.later, later_seen = n.later
    FROM n WHERE r.id = n.run_id
    RETURNING ${RUN_COLUMNS}`.execute(db);
  return rows[0]!;
}

export async function failRun(db: RegistryExecutor, runId: string, error: string): Promise<void> {
  await sql`UPDATE daily_runs SET status = 'failed', finished_at = now(), error = ${error.slice(0, 2000)} WHERE id = ${runId} AND status = 'running'`.execute(
    db,
  );
}
