import { sql, type Kysely } from 'kysely';

// companies keeps 30 % of each page free instead of 15 %, so that a day's update of a company
// finds room for the row's new version on its own page: a HOT update, with no new entry in any of
// the five indexes (docs/registry.md). A row is about 1.6 KB (its snapshot 1.26 KB), so at 85 % a
// page held four rows and about 1.7 KB free, and a changed row that had grown a little (a phone, a
// person, an activity added) no longer fitted: about half of a day's updates went to another page,
// each writing five index entries and, on the first change of those index pages since the last
// checkpoint, a full-page image of each (docs/benchmarks.md, "Registry"). At 70 % a page holds
// three rows and room for two new versions. A 1 % day at 1,000,000 companies wrote 1.03 full-page
// images a changed company instead of 1.82, half the WAL, and cost PostgreSQL 61 µs of CPU a
// changed company instead of 81; the table grows by a fifth to a quarter.
//
// A storage parameter only: pages written from now on use it, existing ones keep their layout
// until the table is rewritten (VACUUM FULL, or a first load into an empty registry). No rewrite
// here, so the migration takes no long lock.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE companies SET (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE companies SET (fillfactor = 85)`.execute(db);
}
