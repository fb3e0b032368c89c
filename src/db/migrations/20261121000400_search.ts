import { sql, type Kysely } from 'kysely';

// Indexes of the company search (docs/search.md). Searches are answered from an in-memory index
// built from the companies table; these serve the SQL path that answers while it is being built,
// and the query that tells whether it is out of date. Each index costs every write of the
// columns it holds, so only the filters that narrow a search by themselves get one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Result order within a status: a page of a wide search reads this index in order.
    CREATE INDEX companies_search_order_idx
      ON companies (status, activity_start DESC NULLS LAST, primary_identifier COLLATE "C", id);
    CREATE INDEX companies_search_city_idx ON companies (city_folded);
    CREATE INDEX companies_search_postal_code_idx ON companies (postal_code);
    -- "Which runs are unfinished": read before every search, so it must not scan every run.
    CREATE INDEX daily_runs_unfinished_idx ON daily_runs (id) WHERE status <> 'completed';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX daily_runs_unfinished_idx;
    DROP INDEX companies_search_postal_code_idx;
    DROP INDEX companies_search_city_idx;
    DROP INDEX companies_search_order_idx;
  `.execute(db);
}
