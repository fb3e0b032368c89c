import { sql, type Kysely } from 'kysely';

// Which companies each daily run wrote, so that a search index can apply a finished run as a
// delta (docs/search.md, "Freshness"). One row per committed batch, holding the batch's company
// ids as an array, written in the batch's own transaction: a run of 100,000 changed companies
// adds 50 rows, not 100,000, and no column of `companies` changes for it (a last-run column with
// an index would have turned most of a day's HOT updates into updates of every index). Rows are
// only needed until every serving process has applied the run; the run's completion deletes
// those over a week old.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE daily_run_changes (
      id bigserial PRIMARY KEY,
      run_id bigint NOT NULL REFERENCES daily_runs(id) ON DELETE CASCADE,
      company_ids bigint[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX daily_run_changes_run_idx ON daily_run_changes (run_id);
    CREATE INDEX daily_run_changes_created_idx ON daily_run_changes (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE daily_run_changes`.execute(db);
}
