import { sql, type Kysely } from 'kysely';

// The search columns that are only ever compared for equality (city_folded, postal_code: `=`;
// activity_codes: `&&` and starts_with) compare bytes (COLLATE "C") instead of the database's
// collation. Equality is the same under any deterministic collation, so no query answers
// differently; what changes is the cost of building and filling their indexes: under a libc
// collation (the embedded cluster's is the environment's locale, C.UTF-8 on the machines
// measured) PostgreSQL sorts text with strcoll and without abbreviated keys, so a first load's
// deferred build of the postal-code index took 10.4–12.1 s at 4,100,000 companies against 6.0 s
// with COLLATE "C" (docs/benchmarks.md, "At 4,100,000 companies").
//
// Only the collation changes (no table rewrite); PostgreSQL rebuilds the three indexes on these
// columns, seconds for a few million companies.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE companies
      ALTER COLUMN city_folded TYPE text COLLATE "C",
      ALTER COLUMN postal_code TYPE text COLLATE "C",
      ALTER COLUMN activity_codes TYPE text[] COLLATE "C"`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE companies
      ALTER COLUMN city_folded TYPE text COLLATE "default",
      ALTER COLUMN postal_code TYPE text COLLATE "default",
      ALTER COLUMN activity_codes TYPE text[] COLLATE "default"`.execute(db);
}
