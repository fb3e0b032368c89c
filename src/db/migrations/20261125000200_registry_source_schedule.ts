import { sql, type Kysely } from 'kysely';

// The day from which the scheduler watches each configured source (docs/sources.md): the first
// day it queued for it. GET /api/v1/sources counts a source's gaps, and the scheduler catches up
// its missed days, only from then on (or from its first daily run, if earlier), so a source
// added today is not reported 30 days behind. The partial index serves both reading the daily
// runs per source: on-demand imports (kind 'import', one run per imported company) can outnumber
// the daily runs by far, and are never read there.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE registry_source_schedule (
      source text PRIMARY KEY CHECK (length(source) <= 100),
      scheduled_since date NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX daily_runs_daily_source_idx ON daily_runs (source, run_date) WHERE kind = 'daily';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX daily_runs_daily_source_idx; DROP TABLE registry_source_schedule;`.execute(db);
}
