import { sql, type Kysely } from 'kysely';

// The search columns that are only ever compared for equality (city_folded, postal_code: `=`;
// activity_codes: `&&` and starts_with) compare bytes (COLLATE "C") instead of the database's
// collation. Equality is the same under any deterministic collation, so no query answers
// differently; what changes is the cost of building and filling their indexes: under a libc
// collation (the embedded cluster's is the environment's locale, C.UTF-8 on the machines
// measured) PostgreSQL sorts text with strcoll and without abbreviated keys, so a first load's
// deferred build of the postal-code index took 10.4–13.8 s of CPU at 4,100,000 companies against
// 6.3 s with COLLATE "C", the three 28.5–33.3 s against 21.6–22.4 (docs/benchmarks.md, "At
// 4,100,000 companies, second pass").
//
// Only the collation changes (no table rewrite); PostgreSQL rebuilds the three indexes on these
// columns, holding the table's lock: 27.7 s at 4,100,000 companies (docs/configuration.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await setCollation(db, 'C');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await setCollation(db, 'default');
}

async function setCollation(db: Kysely<unknown>, collation: 'C' | 'default'): Promise<void> {
  const c = sql.id(collation);
  await sql`
    ALTER TABLE companies
      ALTER COLUMN city_folded TYPE text COLLATE ${c},
      ALTER COLUMN postal_code TYPE text COLLATE ${c},
      ALTER COLUMN activity_codes TYPE text[] COLLATE ${c}`.execute(db);
}
