import { sql, type Kysely } from 'kysely';

// "Companies known at the end of day D" (the statistics' `total`, recorded when a daily run
// completes) was counted from `companies` through an index on first_seen_date. After a day's
// updates clear the visibility map, that count reads the whole heap: 0.6 s at 200,000 companies,
// seconds at millions, once per run. Kept instead as a count per first-seen day, written by the
// statements that insert and delete companies (src/registry/store.ts, the only writer), so the
// total is a sum over a few hundred rows, and the index (a cost on every insert) goes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE company_counts (
      first_seen_date date PRIMARY KEY,
      companies bigint NOT NULL CHECK (companies >= 0)
    );
    INSERT INTO company_counts (first_seen_date, companies)
      SELECT first_seen_date, count(*) FROM companies GROUP BY first_seen_date;
    DROP INDEX companies_first_seen_idx;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX companies_first_seen_idx ON companies (first_seen_date);
    DROP TABLE company_counts;
  `.execute(db);
}
