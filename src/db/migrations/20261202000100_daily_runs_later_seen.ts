import { sql, type Kysely } from 'kysely';

// The statistics' `total` of a day ("companies known at the end of that day", DECISIONS 6) was
// the number a run recorded when it completed, so a run dated earlier that completed later (any
// date is accepted, DECISIONS 1) left the later days' totals short of the companies it added.
// A day's total is now read as the companies first seen by then (company_counts, kept current)
// plus `later_seen`: the companies the run itself wrote that were first seen after its date (a
// back-dated run saw them that day), fixed when it completes (src/registry/store/daily-runs-repo.ts).
// Runs completed before this migration get the part of their recorded total that the current
// counts do not explain.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE daily_runs ADD COLUMN later_seen bigint;
    UPDATE daily_runs r SET later_seen = greatest(r.total
      - (SELECT coalesce(sum(c.companies), 0) FROM company_counts c WHERE c.first_seen_date <= r.run_date), 0)
    WHERE r.status = 'completed' AND r.total IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE daily_runs DROP COLUMN later_seen`.execute(db);
}
